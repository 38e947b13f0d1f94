"""The store: audits, deduplicated snapshots, errors and the HTTP validator cache.

An audit's observations, errors and final status are written in one transaction when the
audit ends, so an audit killed at any point leaves only a ``running`` row behind, which no
later audit uses as a baseline.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config as AlembicConfig
from sqlalchemy import Engine, create_engine, event, func, make_url, select
from sqlalchemy.orm import Session, sessionmaker

from crawler.model import FetchError, ProjectResult, ProjectSnapshot
from crawler.store.tables import (
    AuditRow,
    FetchErrorRow,
    HttpCacheRow,
    ObservationRow,
    ProjectSetRow,
    SnapshotRow,
)
from crawler.upstream.http import CachedResponse

DEFAULT_DB_URL = "sqlite:///db/crawler.sqlite"
MIGRATIONS = Path(__file__).with_name("migrations")
GOOD_STATUSES = ("complete", "partial")


@dataclass(frozen=True)
class AuditInfo:
    id: int
    started_at: datetime
    finished_at: datetime | None
    status: str
    config_path: str
    projects: tuple[str, ...]
    baseline_audit_id: int | None
    stats: dict[str, Any]


@dataclass(frozen=True)
class ProjectState:
    """A project's last good snapshot as of some audit, and when it was first seen."""

    snapshot: ProjectSnapshot
    observed_in_audit: int


@dataclass(frozen=True)
class HistoryEntry:
    audit_id: int
    audit_started_at: datetime
    status: str
    snapshot: ProjectSnapshot | None
    note: str | None


def _utc(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


_PASSWORD_PARAM = re.compile(r"(?i)((?:^|[?&;\s])password=)[^&;\s]*")


def display_db_url(url: str) -> str:
    """The database URL with its password masked (``user:***@``), safe to print or log; also
    when the URL does not parse, and for a ``password=`` query parameter."""
    try:
        shown = make_url(url).render_as_string(hide_password=True)
    except Exception:  # a malformed URL (bad port...): mask what looks like user:password@
        shown = re.sub(r"^([^:/?#]+://[^:/?#@]*:).*@", r"\1***@", url)
    return _PASSWORD_PARAM.sub(r"\1***", shown)


def scrub_db_secrets(text: str, url: str) -> str:
    """``text`` (an error message, a log line) with the database URL's password replaced by
    ``***``, in the raw and the percent-decoded spelling, and the URL itself masked."""
    text = text.replace(url, display_db_url(url))
    secrets: set[str] = set()
    written = re.match(r"^[^:/?#]+://[^:/?#@]*:(.*)@", url)  # as written, percent-encoded or not
    if written:
        secrets.add(written.group(1))
    try:
        password = make_url(url).password
        if password:
            secrets.add(str(password))
    except Exception:  # a malformed URL: the spelling as written is all there is
        pass
    secrets.update(m.group(1) for m in re.finditer(r"(?i)password=([^&;\s]+)", url))
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 3:  # masking "a" everywhere would garble the message, not protect it
            text = text.replace(secret, "***")
    return text


def _prepare_sqlite_path(url: str) -> None:
    prefix = "sqlite:///"
    if url.startswith(prefix) and url != "sqlite:///:memory:":
        Path(url[len(prefix) :]).parent.mkdir(parents=True, exist_ok=True)


class Store:
    def __init__(self, url: str = DEFAULT_DB_URL) -> None:
        _prepare_sqlite_path(url)
        self.url = url
        self.engine: Engine = create_engine(url, future=True)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.upgrade()

    def upgrade(self) -> None:
        """Bring the schema to the newest Alembic revision."""
        cfg = AlembicConfig()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            cfg.attributes["connection"] = connection
            command.upgrade(cfg, "head")

    def close(self) -> None:
        self.engine.dispose()

    # -- audits -------------------------------------------------------------------------------

    def begin_audit(self, config_path: str, projects: Sequence[str], started_at: datetime) -> int:
        with self._sessions.begin() as session:
            names = json.dumps(sorted(projects))
            digest = hashlib.sha256(names.encode()).hexdigest()
            project_set = session.scalar(
                select(ProjectSetRow).where(ProjectSetRow.digest == digest)
            )
            if project_set is None:
                project_set = ProjectSetRow(digest=digest, names=names)
                session.add(project_set)
                session.flush()
            audit = AuditRow(
                started_at=started_at,
                status="running",
                config_path=config_path,
                project_set_id=project_set.id,
                stats="{}",
            )
            session.add(audit)
            session.flush()
            return audit.id

    def finish_audit(
        self,
        audit_id: int,
        results: Iterable[ProjectResult],
        status: str,
        finished_at: datetime,
        baseline_audit_id: int | None,
        stats: dict[str, Any],
    ) -> None:
        """Record everything an audit learnt, atomically."""
        with self._sessions.begin() as session:
            latest = self._latest_digests(session, audit_id)
            for result in results:
                snapshot_id = None
                if result.status == "ok" and result.snapshot is not None:
                    digest = result.snapshot.content_hash()
                    if latest.get(result.project) == digest:
                        continue  # unchanged: nothing to write
                    snapshot_id = self._snapshot_id(session, result.snapshot, digest, audit_id)
                session.add(
                    ObservationRow(
                        audit_id=audit_id,
                        project=result.project,
                        status=result.status,
                        snapshot_id=snapshot_id,
                        note=result.note,
                    )
                )
                for error in result.errors:
                    session.add(
                        FetchErrorRow(
                            audit_id=audit_id,
                            project=error.project,
                            source=error.source,
                            url=error.url,
                            message=error.message,
                        )
                    )
            audit = session.get_one(AuditRow, audit_id)
            audit.status = status
            audit.finished_at = finished_at
            audit.baseline_audit_id = baseline_audit_id
            audit.stats = json.dumps(stats, sort_keys=True)

    def _snapshot_id(
        self, session: Session, snapshot: ProjectSnapshot, digest: str, audit_id: int
    ) -> int:
        existing = session.scalar(
            select(SnapshotRow.id).where(
                SnapshotRow.project == snapshot.project, SnapshotRow.digest == digest
            )
        )
        if existing is not None:
            return existing
        row = SnapshotRow(
            project=snapshot.project,
            digest=digest,
            data=json.dumps(snapshot.to_dict(), sort_keys=True),
            first_audit_id=audit_id,
        )
        session.add(row)
        session.flush()
        return row.id

    def _latest_digests(self, session: Session, before_audit: int) -> dict[str, str]:
        rows = session.execute(
            self._latest_ok_query(before_audit).with_only_columns(
                SnapshotRow.project, SnapshotRow.digest
            )
        )
        return {project: digest for project, digest in rows}

    @staticmethod
    def _latest_ok_query(as_of_audit: int) -> Any:
        """Each project's newest good snapshot from finished audits up to ``as_of_audit``."""
        newest = (
            select(ObservationRow.project, func.max(ObservationRow.audit_id).label("audit_id"))
            .join(AuditRow, AuditRow.id == ObservationRow.audit_id)
            .where(
                ObservationRow.audit_id <= as_of_audit,
                ObservationRow.status == "ok",
                AuditRow.status.in_(GOOD_STATUSES),
            )
            .group_by(ObservationRow.project)
            .subquery()
        )
        return (
            select(SnapshotRow, ObservationRow.audit_id)
            .join(ObservationRow, ObservationRow.snapshot_id == SnapshotRow.id)
            .join(
                newest,
                (newest.c.project == ObservationRow.project)
                & (newest.c.audit_id == ObservationRow.audit_id),
            )
            .where(ObservationRow.status == "ok")
        )

    def states_as_of(self, audit_id: int | None) -> dict[str, ProjectState]:
        """The last good state of every project known at ``audit_id`` (carry-forward)."""
        if audit_id is None:
            return {}
        with self._sessions() as session:
            rows = session.execute(self._latest_ok_query(audit_id))
            return {
                row.project: ProjectState(
                    ProjectSnapshot.from_dict(json.loads(row.data)), observed_audit
                )
                for row, observed_audit in rows
            }

    def baseline_for(self, audit_id: int | None = None) -> AuditInfo | None:
        """The newest finished, usable audit before ``audit_id`` (or overall)."""
        with self._sessions() as session:
            query = select(AuditRow).where(AuditRow.status.in_(GOOD_STATUSES))
            if audit_id is not None:
                query = query.where(AuditRow.id < audit_id)
            row = session.scalar(query.order_by(AuditRow.id.desc()).limit(1))
            return self._info(session, row) if row else None

    def audit(self, audit_id: int) -> AuditInfo | None:
        with self._sessions() as session:
            row = session.get(AuditRow, audit_id)
            return self._info(session, row) if row else None

    def latest_audit(self) -> AuditInfo | None:
        with self._sessions() as session:
            row = session.scalar(
                select(AuditRow).where(AuditRow.status != "running").order_by(AuditRow.id.desc())
            )
            return self._info(session, row) if row else None

    def audits(self) -> list[AuditInfo]:
        with self._sessions() as session:
            rows = session.scalars(select(AuditRow).order_by(AuditRow.id))
            return [self._info(session, row) for row in rows]

    @staticmethod
    def _info(session: Session, row: AuditRow) -> AuditInfo:
        project_set = session.get_one(ProjectSetRow, row.project_set_id)
        started = _utc(row.started_at)
        assert started is not None
        return AuditInfo(
            id=row.id,
            started_at=started,
            finished_at=_utc(row.finished_at),
            status=row.status,
            config_path=row.config_path,
            projects=tuple(json.loads(project_set.names)),
            baseline_audit_id=row.baseline_audit_id,
            stats=json.loads(row.stats or "{}"),
        )

    def audit_results(self, audit_id: int) -> tuple[dict[str, str], list[FetchError]]:
        """Per-project non-ok status notes (error, deferred, untracked) and the errors."""
        with self._sessions() as session:
            statuses = {
                obs.project: f"{obs.status}:{obs.note or ''}"
                for obs in session.scalars(
                    select(ObservationRow).where(
                        ObservationRow.audit_id == audit_id, ObservationRow.status != "ok"
                    )
                )
            }
            errors = [
                FetchError(row.project, row.source, row.url, row.message)
                for row in session.scalars(
                    select(FetchErrorRow)
                    .where(FetchErrorRow.audit_id == audit_id)
                    .order_by(FetchErrorRow.id)
                )
            ]
            return statuses, errors

    def history(self, project: str) -> list[HistoryEntry]:
        """Every recorded change of state (and every failure) of one project, oldest first."""
        with self._sessions() as session:
            rows = session.execute(
                select(ObservationRow, AuditRow.started_at, SnapshotRow.data)
                .join(AuditRow, AuditRow.id == ObservationRow.audit_id)
                .outerjoin(SnapshotRow, SnapshotRow.id == ObservationRow.snapshot_id)
                .where(ObservationRow.project == project, AuditRow.status.in_(GOOD_STATUSES))
                .order_by(ObservationRow.audit_id)
            )
            entries = []
            for obs, started_at, data in rows:
                started = _utc(started_at)
                assert started is not None
                entries.append(
                    HistoryEntry(
                        audit_id=obs.audit_id,
                        audit_started_at=started,
                        status=obs.status,
                        snapshot=ProjectSnapshot.from_dict(json.loads(data)) if data else None,
                        note=obs.note,
                    )
                )
            return entries

    # -- HTTP validator cache (crawler.upstream.http.ResponseCache) -----------------------------

    def get_response(self, key: str) -> CachedResponse | None:
        with self._sessions() as session:
            row = session.get(HttpCacheRow, key)
            if row is None:
                return None
            return CachedResponse(
                url=row.url,
                etag=row.etag,
                last_modified=row.last_modified,
                body=zlib.decompress(row.body),
                content_type=row.content_type,
            )

    def put_response(self, key: str, response: CachedResponse) -> None:
        with self._sessions.begin() as session:
            row = session.get(HttpCacheRow, key)
            if row is None:
                row = HttpCacheRow(key=key)
                session.add(row)
            row.url = response.url
            row.etag = response.etag
            row.last_modified = response.last_modified
            row.content_type = response.content_type
            row.body = zlib.compress(response.body, 6)
            row.stored_at = datetime.now(UTC)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()
