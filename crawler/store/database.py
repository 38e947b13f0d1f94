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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, func, make_url, select, update
from sqlalchemy.orm import Session, sessionmaker

from crawler.model import (
    FetchError,
    ProjectOutcome,
    ProjectResult,
    ProjectSnapshot,
    ProjectStatus,
)
from crawler.store.lock import DEFAULT_LEASE, AuditLock
from crawler.store.schema import SchemaUpgrade, upgrade_schema
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
CACHE_TOUCH_EVERY = timedelta(hours=12)  # nightly audits touch each entry they use once


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
    checked: tuple[str, ...] | None = None  # the projects it checked (None before rev. 0002)


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

    def upgrade(self) -> SchemaUpgrade:
        """Bring the schema to the newest Alembic revision (under a lock; refuses a foreign or
        newer database with crawler.store.schema.SchemaError)."""
        return upgrade_schema(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def audit_lock(self, owner: str, *, lease: timedelta = DEFAULT_LEASE) -> AuditLock:
        """One audit at a time per database: ``with store.audit_lock("cli audit"): …``
        raises crawler.store.lock.AuditLocked naming the holder."""
        return AuditLock(self.engine, owner, lease=lease)

    # -- audits -------------------------------------------------------------------------------

    @staticmethod
    def _project_set(session: Session, projects: Iterable[str]) -> int:
        """The id of this list of names, stored once however many audits share it."""
        names = json.dumps(sorted(set(projects)))
        digest = hashlib.sha256(names.encode()).hexdigest()
        project_set = session.scalar(select(ProjectSetRow).where(ProjectSetRow.digest == digest))
        if project_set is None:
            project_set = ProjectSetRow(digest=digest, names=names)
            session.add(project_set)
            session.flush()
        return project_set.id

    def begin_audit(self, config_path: str, projects: Sequence[str], started_at: datetime) -> int:
        with self._sessions.begin() as session:
            audit = AuditRow(
                started_at=started_at,
                status="running",
                config_path=config_path,
                project_set_id=self._project_set(session, projects),
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
        """Record everything an audit learnt, atomically: the projects it checked (status ok),
        a snapshot for each whose state changed, and every project not plainly checked."""
        results = list(results)
        with self._sessions.begin() as session:
            latest = self._latest_digests(session, audit_id)
            checked = [r.project for r in results if r.status == ProjectStatus.OK]
            for result in results:
                snapshot_id = None
                unchanged = False
                if result.status == ProjectStatus.OK and result.snapshot is not None:
                    digest = result.snapshot.content_hash()
                    unchanged = latest.get(result.project) == digest
                    if not unchanged or result.note:
                        snapshot_id = self._snapshot_id(session, result.snapshot, digest, audit_id)
                if not unchanged or result.note:  # an unchanged, plain check writes no row
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
            audit.checked_set_id = self._project_set(session, checked)
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
            data=snapshot.to_json().decode(),
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
    def _latest_ok_query(as_of_audit: int, include_own: bool = False) -> Any:
        """Each project's newest good snapshot from finished audits up to ``as_of_audit``
        (and that audit's own, whatever its status, when ``include_own``)."""
        usable: Any = AuditRow.status.in_(GOOD_STATUSES)
        if include_own:
            usable = usable | (AuditRow.id == as_of_audit)
        newest = (
            select(ObservationRow.project, func.max(ObservationRow.audit_id).label("audit_id"))
            .join(AuditRow, AuditRow.id == ObservationRow.audit_id)
            .where(
                ObservationRow.audit_id <= as_of_audit,
                ObservationRow.status == "ok",
                usable,
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

    def states_as_of(
        self, audit_id: int | None, include_own: bool = False
    ) -> dict[str, ProjectState]:
        """The last good state of every project known at ``audit_id`` (carry-forward)."""
        if audit_id is None:
            return {}
        with self._sessions() as session:
            rows = session.execute(self._latest_ok_query(audit_id, include_own))
            return {
                row.project: ProjectState(ProjectSnapshot.from_json(row.data), observed_audit)
                for row, observed_audit in rows
            }

    def last_checked(self, as_of_audit: int | None = None) -> dict[str, datetime]:
        """When each project was last checked by a finished, usable audit (up to
        ``as_of_audit``): the newest audit whose checked set names it."""
        with self._sessions() as session:
            query = (
                select(AuditRow.started_at, ProjectSetRow.names)
                .join(ProjectSetRow, ProjectSetRow.id == AuditRow.checked_set_id)
                .where(AuditRow.status.in_(GOOD_STATUSES))
                .order_by(AuditRow.id)
            )
            if as_of_audit is not None:
                query = query.where(AuditRow.id <= as_of_audit)
            latest: dict[str, datetime] = {}
            decoded: dict[str, list[str]] = {}
            for started_at, names in session.execute(query):
                started = _utc(started_at)
                assert started is not None
                for name in decoded.setdefault(names, json.loads(names)):
                    latest[name] = started
            return latest

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

    def first_audit_started(self) -> datetime | None:
        with self._sessions() as session:
            return _utc(session.scalar(select(func.min(AuditRow.started_at))))

    def audits(self) -> list[AuditInfo]:
        with self._sessions() as session:
            rows = session.scalars(select(AuditRow).order_by(AuditRow.id))
            return [self._info(session, row) for row in rows]

    @staticmethod
    def _info(session: Session, row: AuditRow) -> AuditInfo:
        project_set = session.get_one(ProjectSetRow, row.project_set_id)
        checked = session.get(ProjectSetRow, row.checked_set_id) if row.checked_set_id else None
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
            checked=tuple(json.loads(checked.names)) if checked else None,
        )

    def audit_results(self, audit_id: int) -> tuple[dict[str, ProjectOutcome], list[FetchError]]:
        """Projects not plainly checked (error, deferred, untracked, or checked with a note),
        and the errors."""
        with self._sessions() as session:
            statuses = {
                obs.project: ProjectOutcome(ProjectStatus(obs.status), obs.note)
                for obs in session.scalars(
                    select(ObservationRow).where(
                        ObservationRow.audit_id == audit_id,
                        (ObservationRow.status != "ok") | ObservationRow.note.is_not(None),
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

    def known_projects(self) -> list[str]:
        """Every project name any stored audit observed."""
        with self._sessions() as session:
            return sorted(session.scalars(select(ObservationRow.project).distinct()))

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
                        snapshot=ProjectSnapshot.from_json(data) if data else None,
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
            last_used = _utc(row.used_at or row.stored_at)
            cached = CachedResponse(
                url=row.url,
                etag=row.etag,
                last_modified=row.last_modified,
                body=zlib.decompress(row.body),
                content_type=row.content_type,
            )
        if last_used is None or last_used < datetime.now(UTC) - CACHE_TOUCH_EVERY:
            self._mark_cache_used(key)
        return cached

    def _mark_cache_used(self, key: str) -> None:
        """Record that an entry still serves requests (a 304 keeps ``stored_at``), so that
        ``crawler prune`` keeps it; at most every CACHE_TOUCH_EVERY per entry."""
        with self._sessions.begin() as session:
            used = update(HttpCacheRow).where(HttpCacheRow.key == key)
            session.execute(used.values(used_at=datetime.now(UTC)))

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
            row.stored_at = row.used_at = datetime.now(UTC)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()
