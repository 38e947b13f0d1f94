"""The store: audits, deduplicated snapshots, errors and the HTTP validator cache.

An audit's observations, errors and final status are written in one transaction when the
audit ends, so an audit killed at any point leaves only a ``running`` row behind, which no
later audit uses as a baseline.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from sqlalchemy import (
    Engine,
    Table,
    bindparam,
    create_engine,
    event,
    func,
    insert,
    make_url,
    select,
    tuple_,
    update,
)
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from crawler.model import (
    FetchError,
    LicenseAnalysis,
    ProjectOutcome,
    ProjectResult,
    ProjectSnapshot,
    ProjectStatus,
)
from crawler.store.lock import DEFAULT_LEASE, AuditLock
from crawler.store.migration_guard import SchemaUpgrade, upgrade_schema
from crawler.store.stall import db_timeout, describe_error, postgres_connect_args
from crawler.store.stall import guard as guard_stalls
from crawler.store.tables import (
    AuditRow,
    FetchErrorRow,
    HttpCacheRow,
    ObservationRow,
    ProjectSetRow,
    SnapshotRow,
)
from crawler.untrusted import shown_url
from crawler.upstream.http import CachedResponse

log = logging.getLogger(__name__)
DEFAULT_DB_URL = "sqlite:///db/crawler.sqlite"
MIGRATIONS = Path(__file__).with_name("migrations")
GOOD_STATUSES = ("complete", "partial")
CACHE_TOUCH_EVERY = timedelta(hours=12)  # nightly audits touch each entry they use once
_BATCH = 100  # snapshots looked up and written per statement: a few hundred KB of text at a time
_NAMES = 500  # project names per statement when looking up their newest states
# The validator cache is read and written once per conditional request, from every worker:
# plain statements, without the ORM's per-session cost.
_CACHE = cast(Table, HttpCacheRow.__table__)
_CACHE_READ = select(
    _CACHE.c.url,
    _CACHE.c.etag,
    _CACHE.c.last_modified,
    _CACHE.c.body,
    _CACHE.c.content_type,
    _CACHE.c.used_at,
    _CACHE.c.stored_at,
).where(_CACHE.c.key == bindparam("cache_key"))


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
    if url.startswith(prefix) and url != "sqlite:///:memory:" and not url.startswith(
        prefix + "file:"
    ):  # a URI filename (file:…?mode=ro&uri=true) is SQLite's to open
        Path(url[len(prefix) :]).parent.mkdir(parents=True, exist_ok=True)


class StoreError(Exception):
    """The database failed: the store's error, never an upstream's (no SQL in the message)."""


def describe_db_error(exc: BaseException, url: str) -> str:
    """What went wrong, in one line, without SQL, parameters or the database password: in the
    crawler's words when the cause is known (crawler.store.problems)."""
    from crawler.store.problems import known_problem

    return scrub_db_secrets(known_problem(exc, url) or describe_error(exc), url)


class Store:
    def __init__(self, url: str = DEFAULT_DB_URL) -> None:
        _prepare_sqlite_path(url)
        self.url = url
        self.failure: str | None = None  # the first database failure during this process's work
        parsed = make_url(url)
        if parsed.get_backend_name() == "postgresql":
            timeout = db_timeout()
            args = postgres_connect_args(parsed, timeout)
            self.engine: Engine = create_engine(url, future=True, connect_args=args)
            guard_stalls(self.engine, timeout)
        else:
            self.engine = create_engine(url, future=True)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._audit_lock: AuditLock | None = None  # the last one audit_lock() made
        self.upgrade()

    def upgrade(self) -> SchemaUpgrade:
        """Bring the schema to the newest Alembic revision (under a lock; refuses a foreign or
        newer database with crawler.store.migration_guard.SchemaError)."""
        return upgrade_schema(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def audit_lock(self, owner: str, *, lease: timedelta = DEFAULT_LEASE) -> AuditLock:
        """One audit at a time per database: ``with store.audit_lock("cli audit"): …``
        raises crawler.store.lock.AuditLocked naming the holder."""
        self._audit_lock = AuditLock(self.engine, owner, lease=lease)
        return self._audit_lock

    def confirm_audit_lock(self) -> None:
        """If this store holds the audit lock: AuditLockLost when it was taken over (see
        AuditLock.confirm). Called before an audit records anything."""
        if self._audit_lock is not None and self._audit_lock.held:
            self._audit_lock.confirm()

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

    def record_results(self, audit_id: int, results: Iterable[ProjectResult]) -> list[str]:
        """Record what one batch of an audit learnt, in one transaction: a snapshot for each
        project whose state changed, an observation for every project not plainly checked (an
        unchanged, plain check writes no row) and the fetch errors. The audit stays 'running'
        (never a baseline) until ``finish_audit``. Returns the projects checked (status ok)."""
        results = list(results)
        with self._sessions.begin() as session:
            return self._record(session, audit_id, results)

    def _record(self, session: Session, audit_id: int, results: list[ProjectResult]) -> list[str]:
        checked = [r.project for r in results if r.status == ProjectStatus.OK]
        latest = self._latest_digests(session, audit_id, checked)
        observed: dict[str, tuple[ProjectSnapshot, str]] = {}
        unchanged: set[str] = set()
        for result in results:
            if result.status == ProjectStatus.OK and result.snapshot is not None:
                digest = result.snapshot.content_hash()
                if latest.get(result.project) == digest:
                    unchanged.add(result.project)
                if result.project not in unchanged or result.note:
                    observed[result.project] = (result.snapshot, digest)
        snapshot_ids = self._snapshot_ids(session, observed, audit_id)
        # rows written a statement per batch (executemany), not an ORM object per row: a
        # first audit writes one observation per project (0.7 ms of CPU a project as objects)
        observations = [
            {
                "audit_id": audit_id,
                "project": result.project,
                "status": str(result.status),
                "snapshot_id": snapshot_ids.get(result.project),
                "note": result.note,
            }
            for result in results
            if result.project not in unchanged or result.note
        ]
        errors = [
            {
                "audit_id": audit_id,
                "project": error.project,
                "source": error.source,
                "url": shown_url(error.url),  # never a credential a source was given
                "message": error.message,
            }
            for result in results
            for error in result.errors
        ]
        if observations:
            session.execute(insert(ObservationRow), observations)
        if errors:
            session.execute(insert(FetchErrorRow), errors)
        return checked

    def finish_audit(
        self,
        audit_id: int,
        results: Iterable[ProjectResult],
        status: str,
        finished_at: datetime,
        baseline_audit_id: int | None,
        stats: dict[str, Any],
        *,
        checked_earlier: Iterable[str] = (),
        also: Callable[[Session], None] | None = None,
    ) -> None:
        """Record what is left of an audit (``results``, as ``record_results`` would) and
        finish it, atomically; ``checked_earlier`` names the projects checked in batches
        recorded before; ``also`` writes what belongs to the finished audit (its pending
        changes) in the same transaction."""
        results = list(results)
        with self._sessions.begin() as session:
            if also is not None:
                also(session)
            checked = [*checked_earlier, *self._record(session, audit_id, results)]
            audit = session.get_one(AuditRow, audit_id)
            audit.checked_set_id = self._project_set(session, checked)
            audit.status = status
            audit.finished_at = finished_at
            audit.baseline_audit_id = baseline_audit_id
            audit.stats = json.dumps(stats, sort_keys=True)

    def _snapshot_ids(
        self, session: Session, observed: dict[str, tuple[ProjectSnapshot, str]], audit_id: int
    ) -> dict[str, int]:
        """The snapshot row of each project's observed state: the stored one when that state
        was seen before, else a new row (looked up and written in batches, not per project;
        a batch's texts are let go once written)."""
        ids: dict[str, int] = {}
        items = list(observed.items())
        for start in range(0, len(items), _BATCH):
            batch = items[start : start + _BATCH]
            pairs = [(project, digest) for project, (_snapshot, digest) in batch]
            found = {
                (project, digest): row_id
                for project, digest, row_id in session.execute(
                    select(SnapshotRow.project, SnapshotRow.digest, SnapshotRow.id).where(
                        tuple_(SnapshotRow.project, SnapshotRow.digest).in_(pairs)
                    )
                )
            }
            new = [
                {
                    "project": project,
                    "digest": digest,
                    "data": snapshot.to_json().decode(),
                    "first_audit_id": audit_id,
                }
                for project, (snapshot, digest) in batch
                if (project, digest) not in found
            ]
            if new:  # one project, one snapshot per batch: the returned ids are by project
                written = session.execute(
                    insert(SnapshotRow).returning(SnapshotRow.project, SnapshotRow.id), new
                )
                ids.update({project: row_id for project, row_id in written})
            ids.update({project: found[(project, digest)] for project, digest in pairs
                        if (project, digest) in found})  # fmt: skip
        return ids

    def _latest_digests(
        self, session: Session, before_audit: int, projects: Sequence[str]
    ) -> dict[str, str]:
        found: dict[str, str] = {}
        for start in range(0, len(projects), _NAMES):
            rows = session.execute(
                self._latest_ok_query(before_audit, projects=projects[start : start + _NAMES])
                .with_only_columns(SnapshotRow.project, SnapshotRow.digest)
            )
            found.update({project: digest for project, digest in rows})
        return found

    @staticmethod
    def _latest_ok_query(
        as_of_audit: int, include_own: bool = False, projects: Sequence[str] | None = None
    ) -> Any:
        """Each project's newest good snapshot from finished audits up to ``as_of_audit``
        (and that audit's own, whatever its status, when ``include_own``); of ``projects``
        only, when given."""
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
                *([ObservationRow.project.in_(projects)] if projects is not None else []),
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
        self,
        audit_id: int | None,
        include_own: bool = False,
        *,
        projects: Sequence[str] | None = None,
    ) -> dict[str, ProjectState]:
        """The last good state of every project known at ``audit_id`` (carry-forward), or of
        ``projects`` only: an audit reads its prior states a batch at a time."""
        if audit_id is None or (projects is not None and not projects):
            return {}
        query = self._latest_ok_query(audit_id, include_own, projects).with_only_columns(
            SnapshotRow.project, SnapshotRow.data, ObservationRow.audit_id
        )
        shared = _SharedTexts()
        # streamed (a few rows at a time, not every stored text at once before decoding)
        with self.engine.connect().execution_options(yield_per=100) as connection:
            return {
                project: ProjectState(shared(ProjectSnapshot.from_json(data)), observed_audit)
                for project, data, observed_audit in connection.execute(query)
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

    def mark_delivered(self, audit_id: int, when: datetime) -> None:
        """The audit's report was delivered (sent, or found not worth sending)."""
        with self._sessions.begin() as session:
            session.get_one(AuditRow, audit_id).delivered_at = when

    def undelivered_audits(self) -> list[AuditInfo]:
        """Finished, usable audits whose report was never delivered (the run was killed between
        finishing and sending), oldest first."""
        with self._sessions() as session:
            rows = session.scalars(
                select(AuditRow)
                .where(AuditRow.status.in_(GOOD_STATUSES), AuditRow.delivered_at.is_(None))
                .order_by(AuditRow.id)
            )
            return [self._info(session, row) for row in rows]

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
            shared = _SharedTexts()
            for obs, started_at, data in rows:
                started = _utc(started_at)
                assert started is not None
                entries.append(
                    HistoryEntry(
                        audit_id=obs.audit_id,
                        audit_started_at=started,
                        status=obs.status,
                        snapshot=shared(ProjectSnapshot.from_json(data)) if data else None,
                        note=obs.note,
                    )
                )
            return entries

    # -- HTTP validator cache (crawler.upstream.http.ResponseCache) -----------------------------

    def failed(self, what: str, exc: BaseException) -> str:
        """Record a database failure (the first one is kept) and say it in one line."""
        message = f"the database failed while {what}: {describe_db_error(exc, self.url)}"
        if self.failure is None:
            self.failure = message
            log.error("%s", message)
        return message

    # The cache is read and written from the sources' workers: a failure there is the store's,
    # recorded once; the cache is then left alone (every later request is a plain one) and the
    # audit, seeing ``failure``, stops and ends failed. It never reads as an upstream error.

    def get_response(self, key: str) -> CachedResponse | None:
        if self.failure is not None:
            return None
        try:
            with self.engine.connect() as connection:
                row = connection.execute(_CACHE_READ, {"cache_key": key}).first()
        except SQLAlchemyError as exc:
            self.failed("reading the HTTP cache", exc)
            return None
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
        try:
            with self.engine.begin() as connection:
                used = update(_CACHE).where(_CACHE.c.key == key)
                connection.execute(used.values(used_at=datetime.now(UTC)))
        except SQLAlchemyError as exc:
            self.failed("writing the HTTP cache", exc)

    def put_response(self, key: str, response: CachedResponse) -> None:
        now = datetime.now(UTC)
        values = {
            "url": response.url,
            "etag": response.etag,
            "last_modified": response.last_modified,
            "content_type": response.content_type,
            "body": zlib.compress(response.body, 6),
            "stored_at": now,
            "used_at": now,
        }
        if self.failure is not None:
            return
        try:
            with self.engine.begin() as connection:
                replaced = connection.execute(update(_CACHE).where(_CACHE.c.key == key), values)
                if not replaced.rowcount:
                    connection.execute(insert(_CACHE), {"key": key, **values})
        except SQLAlchemyError as exc:
            self.failed("writing the HTTP cache", exc)


class _SharedTexts:
    """One copy of each license text and analysis among the snapshots read together: a
    thousand repositories with thirty distinct license texts hold thirty texts in memory.
    An analysis stored before spans had an effect gets it here, once per distinct text."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._analyses: dict[str, LicenseAnalysis] = {}

    def __call__(self, snapshot: ProjectSnapshot) -> ProjectSnapshot:
        found = snapshot.license_file
        if found is None:
            return snapshot
        text = self._texts.setdefault(found.text, found.text) if found.text else found.text
        analysis = found.analysis
        if analysis is not None:
            known = self._analyses.get(found.blob_sha)
            if known is None or known != analysis:
                known = _with_effects(analysis)
                self._analyses.setdefault(found.blob_sha, known)
            analysis = known
        if text is found.text and analysis is found.analysis:
            return snapshot
        return replace(snapshot, license_file=replace(found, text=text, analysis=analysis))


def _with_effects(analysis: LicenseAnalysis) -> LicenseAnalysis:
    spans = (*analysis.extra_text, *analysis.altered_text)
    if all(span.effect is not None for span in spans):
        return analysis
    from crawler.analysis.licenses import with_effects

    return with_effects(analysis)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    _journal_in_wal(cursor)
    cursor.close()


# seconds between attempts to switch a new file to WAL: about 10 s in all, as busy_timeout
_WAL_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.5, 2.0, 2.5, 2.5)


def _journal_in_wal(cursor: Any) -> None:
    """Switch the file to WAL. While another connection writes to a file still in rollback
    mode (a second process creating the schema of the same new file), SQLite refuses the
    switch at once with "database is locked", without waiting for busy_timeout: try again
    until that write ends. Once the file is in WAL the pragma changes nothing."""
    for delay in (*_WAL_RETRY_DELAYS, None):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if delay is None or "locked" not in str(exc):
                raise
            time.sleep(delay)
