"""Database care: ``crawler prune`` (drop old audits, keep every state still referenced) and
``crawler db check`` (schema at head, references intact, nothing stuck).

Pruning keeps, whatever their age:

* the audits of the last ``keep_days`` days, the last complete audit and the newest usable
  (complete or partial) audit, which the next audit diffs against;
* the baseline of each of those, so that their reports still re-render;
* for every such audit, the audit holding each project's last good observation as of it
  (observations are written only on change: an old observation may be today's state);
* for every project, the newest audit that checked it (``audits.checked_set_id``).

An audit kept for one of these reasons is kept whole (observations, errors, link findings).
Snapshots no kept observation points at, project lists no kept audit uses, and HTTP cache
entries no request has used for ``keep_days`` go. A kept snapshot first seen in a pruned audit
is re-dated to the oldest kept audit that observed it.
"""

from __future__ import annotations

import json
import socket
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Connection, Table, create_engine, delete, func, select, text, update
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from crawler.store.database import GOOD_STATUSES, Store
from crawler.store.lock import LOCK_NAME, LockHolder, iso
from crawler.store.migration_guard import SchemaError, code_head, ensure_usable, read_state
from crawler.store.tables import (
    AuditLockRow,
    AuditRow,
    FetchErrorRow,
    HttpCacheRow,
    LinkFindingRow,
    ObservationRow,
    ProjectSetRow,
    SnapshotRow,
)

STUCK_AFTER = timedelta(days=1)
AUDIT_STATUSES = ("running", "complete", "partial", "failed")
_CHUNK = 500  # bound parameters per statement (SQLite's limit is 999 on old builds)


def _t(row_class: Any) -> Table:
    return cast(Table, row_class.__table__)


AUDITS, OBSERVATIONS, SNAPSHOTS = _t(AuditRow), _t(ObservationRow), _t(SnapshotRow)
ERRORS, PROJECT_SETS, CACHE = _t(FetchErrorRow), _t(ProjectSetRow), _t(HttpCacheRow)
LOCKS, LINK_FINDINGS = _t(AuditLockRow), _t(LinkFindingRow)
COUNTED = {
    "audits": AUDITS,
    "observations": OBSERVATIONS,
    "fetch_errors": ERRORS,
    "snapshots": SNAPSHOTS,
    "project_sets": PROJECT_SETS,
    "http_cache": CACHE,
}


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _chunks(ids: Iterable[int]) -> Iterator[list[int]]:
    items = sorted(ids)
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def row_counts(connection: Connection) -> dict[str, int]:
    return {
        name: int(connection.scalar(select(func.count()).select_from(table)) or 0)
        for name, table in COUNTED.items()
    }


# -- prune ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PruneResult:
    cutoff: datetime
    kept_audits: tuple[int, ...]
    removed_audits: tuple[int, ...]
    before: dict[str, int]
    after: dict[str, int]
    dry_run: bool

    @property
    def removed(self) -> dict[str, int]:
        return {name: self.before[name] - self.after[name] for name in self.before}


def prune(
    store: Store, keep_days: int, *, now: datetime | None = None, dry_run: bool = False
) -> PruneResult:
    """Remove what is older than ``keep_days`` and no longer referenced, under the audit lock
    (raises crawler.store.lock.AuditLocked while an audit runs)."""
    if keep_days < 0:
        raise ValueError("--keep-days must be 0 or more")
    cutoff = (now or datetime.now(UTC)) - timedelta(days=keep_days)
    with store.audit_lock("crawler prune"), store.engine.connect() as conn:
        transaction = conn.begin()
        if conn.dialect.name == "sqlite":  # one write transaction from the first read
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        before = row_counts(conn)
        keep = _audits_to_keep(conn, cutoff)
        every = set(conn.scalars(select(AUDITS.c.id)))
        drop = every - keep
        _delete_audits(conn, drop)
        conn.execute(
            delete(CACHE).where(func.coalesce(CACHE.c.used_at, CACHE.c.stored_at) < cutoff)
        )
        after = row_counts(conn)
        if dry_run:
            transaction.rollback()
        else:
            transaction.commit()
    return PruneResult(cutoff, tuple(sorted(keep)), tuple(sorted(drop)), before, after, dry_run)


def _audits_to_keep(conn: Connection, cutoff: datetime) -> set[int]:
    audits = conn.execute(
        select(AUDITS.c.id, AUDITS.c.started_at, AUDITS.c.status, AUDITS.c.baseline_audit_id)
    ).all()
    ids = {a.id for a in audits}
    retained = {a.id for a in audits if _utc(a.started_at) >= cutoff}
    complete = [a.id for a in audits if a.status == "complete"]
    good = [a.id for a in audits if a.status in GOOD_STATUSES]
    retained |= {max(complete)} if complete else set()
    retained |= {max(good)} if good else set()
    baselines = {a.baseline_audit_id for a in audits if a.id in retained}
    anchors = retained | (baselines & ids)
    return anchors | _state_holders(conn, anchors) | _last_checks(conn)


def _state_holders(conn: Connection, anchors: set[int]) -> set[int]:
    """The audits holding each project's last good observation as of every anchor audit (and
    overall): what ``Store.states_as_of`` reads."""
    rows = conn.execute(
        select(OBSERVATIONS.c.project, OBSERVATIONS.c.audit_id)
        .join(AUDITS, AUDITS.c.id == OBSERVATIONS.c.audit_id)
        .where(OBSERVATIONS.c.status == "ok", AUDITS.c.status.in_(GOOD_STATUSES))
        .distinct()
    )
    by_project: dict[str, list[int]] = {}
    for project, audit_id in rows:
        by_project.setdefault(project, []).append(audit_id)
    holders: set[int] = set()
    for audit_ids in by_project.values():
        audit_ids.sort()
        holders.add(audit_ids[-1])
        for anchor in anchors:
            index = bisect_right(audit_ids, anchor)
            if index:
                holders.add(audit_ids[index - 1])
    return holders


def _last_checks(conn: Connection) -> set[int]:
    """For every project, the newest audit that recorded checking it."""
    names_of: dict[int, list[str]] = {
        row.id: json.loads(row.names) for row in conn.execute(select(PROJECT_SETS))
    }
    seen: set[str] = set()
    newest: set[int] = set()
    for audit_id, set_id in conn.execute(
        select(AUDITS.c.id, AUDITS.c.checked_set_id)
        .where(AUDITS.c.checked_set_id.is_not(None))
        .order_by(AUDITS.c.id.desc())
    ):
        fresh = set(names_of.get(set_id, ())) - seen
        if fresh:
            newest.add(audit_id)
            seen |= fresh
    return newest


def _delete_audits(conn: Connection, drop: set[int]) -> None:
    for chunk in _chunks(drop):
        conn.execute(delete(ERRORS).where(ERRORS.c.audit_id.in_(chunk)))
        conn.execute(delete(LINK_FINDINGS).where(LINK_FINDINGS.c.audit_id.in_(chunk)))
        conn.execute(delete(OBSERVATIONS).where(OBSERVATIONS.c.audit_id.in_(chunk)))
    referenced = select(OBSERVATIONS.c.snapshot_id).where(OBSERVATIONS.c.snapshot_id.is_not(None))
    conn.execute(delete(SNAPSHOTS).where(SNAPSHOTS.c.id.not_in(referenced)))
    first_kept = (
        select(func.min(OBSERVATIONS.c.audit_id))
        .where(OBSERVATIONS.c.snapshot_id == SNAPSHOTS.c.id)
        .scalar_subquery()
    )
    for chunk in _chunks(drop):
        conn.execute(
            update(SNAPSHOTS)
            .where(SNAPSHOTS.c.first_audit_id.in_(chunk))
            .values(first_audit_id=first_kept)
        )
        conn.execute(delete(AUDITS).where(AUDITS.c.id.in_(chunk)))
    used = select(AUDITS.c.project_set_id).union(
        select(AUDITS.c.checked_set_id).where(AUDITS.c.checked_set_id.is_not(None))
    )
    conn.execute(delete(PROJECT_SETS).where(PROJECT_SETS.c.id.not_in(used)))


# -- check ------------------------------------------------------------------------------------


@dataclass
class CheckReport:
    revision: str | None
    head: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_database(url: str, *, now: datetime | None = None) -> CheckReport:
    """Read-only: schema at head, then integrity. Never upgrades or repairs."""
    moment = now or datetime.now(UTC)
    parsed = make_url(url)
    path = parsed.database or ""
    on_disk = parsed.get_backend_name() == "sqlite" and path not in ("", ":memory:")
    if on_disk and not Path(path).is_file():  # connecting would create it
        return CheckReport(None, code_head(), problems=[f"no database file at {path}"])
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            state = read_state(conn)
            report = CheckReport(state.revision, state.head)
            try:
                ensure_usable(state)
            except SchemaError as exc:
                report.problems.append(str(exc))
                return report
            if state.revision is None:
                report.problems.append("no crawler schema yet: run `crawler db upgrade`")
                return report
            if not state.at_head:  # older columns may be missing: integrity waits
                report.problems.append(
                    f"schema at revision {state.revision}, this crawler needs {state.head}: "
                    "run `crawler db upgrade` (integrity is checked after that)"
                )
                return report
            _check_integrity(conn, report, moment)
            _describe_lock(conn, report, moment)
            return report
    finally:
        engine.dispose()


def _ids(conn: Connection, query: Any) -> list[int]:
    return sorted(int(value) for value in conn.scalars(query))


def _listed(ids: list[int], limit: int = 10) -> str:
    shown = ", ".join(f"#{i}" for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _check_integrity(conn: Connection, report: CheckReport, now: datetime) -> None:
    def missing(child: Table, column: str, parent: Table) -> list[int]:
        col = child.c[column]
        return _ids(
            conn,
            select(child.c.id).where(col.is_not(None), col.not_in(select(parent.c.id))),
        )

    references = [
        ("observations point at missing snapshots", OBSERVATIONS, "snapshot_id", SNAPSHOTS),
        ("observations point at missing audits", OBSERVATIONS, "audit_id", AUDITS),
        ("fetch errors point at missing audits", ERRORS, "audit_id", AUDITS),
        ("snapshots point at a missing first audit", SNAPSHOTS, "first_audit_id", AUDITS),
        ("audits point at a missing project list", AUDITS, "project_set_id", PROJECT_SETS),
        ("audits point at a missing checked list", AUDITS, "checked_set_id", PROJECT_SETS),
    ]
    for what, child, column, parent in references:
        broken = missing(child, column, parent)
        if broken:
            report.problems.append(f"{len(broken)} {what}: {_listed(broken)}")
    ok_without = _ids(
        conn,
        select(OBSERVATIONS.c.id).where(
            OBSERVATIONS.c.status == "ok", OBSERVATIONS.c.snapshot_id.is_(None)
        ),
    )
    if ok_without:
        report.problems.append(
            f"{len(ok_without)} ok observations have no snapshot: {_listed(ok_without)}"
        )
    _check_audits(conn, report, now)
    unreadable = [
        row.id
        for row in conn.execute(select(SNAPSHOTS.c.id, SNAPSHOTS.c.data))
        if not _json(row.data)
    ]
    if unreadable:
        report.problems.append(
            f"{len(unreadable)} snapshots hold unreadable data: {_listed(unreadable)}"
        )
    if conn.dialect.name == "sqlite":
        verdict = [row[0] for row in conn.exec_driver_sql("PRAGMA quick_check")]
        if verdict != ["ok"]:
            report.problems.append("SQLite quick_check: " + "; ".join(verdict[:5]))


def _check_audits(conn: Connection, report: CheckReport, now: datetime) -> None:
    stuck, unfinished, unknown = [], [], []
    for audit in conn.execute(
        select(AUDITS.c.id, AUDITS.c.status, AUDITS.c.started_at, AUDITS.c.finished_at)
    ):
        if audit.status not in AUDIT_STATUSES:
            unknown.append(audit.id)
        elif audit.status == "running" and _utc(audit.started_at) < now - STUCK_AFTER:
            stuck.append(audit.id)
        elif audit.status == "running":
            report.notes.append(f"audit #{audit.id} running since {iso(audit.started_at)}")
        elif audit.finished_at is None:
            unfinished.append(audit.id)
    if stuck:
        report.problems.append(
            f"{len(stuck)} audits stuck 'running' for more than a day (killed; never used as "
            f"a baseline, `crawler prune` removes them once old): {_listed(sorted(stuck))}"
        )
    if unfinished:
        report.problems.append(
            f"{len(unfinished)} finished audits have no end time: {_listed(sorted(unfinished))}"
        )
    if unknown:
        report.problems.append(
            f"{len(unknown)} audits have an unknown status: {_listed(sorted(unknown))}"
        )


def _json(data: str) -> bool:
    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False


def _describe_lock(conn: Connection, report: CheckReport, now: datetime) -> None:
    row = conn.execute(select(LOCKS).where(LOCKS.c.name == LOCK_NAME)).first()
    if row is None:
        return
    holder = LockHolder.from_row(row)
    if row.backend_pid is not None:  # PostgreSQL: held while that server session lives
        alive = conn.scalar(
            text("select count(*) from pg_stat_activity where pid = :pid"),
            {"pid": row.backend_pid},
        )
        stale = not alive
    else:
        gone = holder.gone_from(socket.gethostname()) is not None
        stale = gone or holder.lease_until < now
    if stale:
        report.notes.append(
            f"stale audit lock of {holder.describe()} (the next audit takes it over)"
        )
    else:
        report.notes.append(f"audit lock held by {holder.describe()}")
