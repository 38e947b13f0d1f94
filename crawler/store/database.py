"""The store: audits, deduplicated snapshots, errors and the HTTP validator cache.

An audit's observations, errors and final status are written in one transaction when the
audit ends, so an audit killed at any point leaves only a ``running`` row behind, which no
later audit uses as a baseline.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from crawler.model import FetchError, ProjectResult, ProjectSnapshot
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
