"""The pending changes in the database: opened by each audit as it finishes, closed when the
curated catalog takes them or a person acknowledges them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from crawler.diff.pending import (
    LINK_KINDS,
    PendingItem,
    fixed_links,
    newest_first,
    pending_before,
    pending_changes,
    pending_value,
    successors_withdrawn,
    taken_by_catalog,
)
from crawler.model import Change, ChangeKind
from crawler.store.database import Store
from crawler.store.tables import PendingRow
from crawler.untrusted import shown_url

OPEN_CHUNK = 500  # pending rows inserted a statement at a time


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


@dataclass(frozen=True)
class NewPending:
    """A pending-worthy change of tonight's audit not already open: opened in the database only
    with the audit's completion (``opener``), so a night that never finished, or whose report
    could not be written, leaves nothing open and the next audit counts the change as new."""

    project: str
    kind: str
    value: str
    summary: str
    evidence_url: str | None
    before: str | None = None  # what it replaced (crawler.diff.pending.pending_before)


def new_pending(
    store: Store, changes: Iterable[Change], summary: Callable[[Change], str]
) -> list[NewPending]:
    """Tonight's pending-worthy changes not already open (same project, kind and value: a change
    reported again after a failed report is the same item), in the order found. ``summary``
    words a change (crawler.report.words.change_summary, handed in by the audit)."""
    with Session(store.engine) as session:
        open_keys = _open_keys(session)
    found: list[NewPending] = []
    for change in pending_changes(changes):
        said = summary(change)
        key = (change.project, change.kind.value, pending_value(change, said))
        if key in open_keys:
            continue
        open_keys.add(key)
        evidence = shown_url(change.evidence_url) if change.evidence_url else None
        found.append(NewPending(*key, said[:2000], evidence, pending_before(change)))
    return found


def as_items(items: Sequence[NewPending], audit_id: int, seen_at: datetime) -> list[PendingItem]:
    """The items as the report lists them before they are stored: negative ids, rising in the
    order found as stored ids would (never one of a stored item)."""
    return [
        PendingItem(
            n - len(items), i.project, i.kind, i.value, i.summary, i.evidence_url, audit_id,
            seen_at, i.before,
        )
        for n, i in enumerate(items)
    ]


def opener(
    items: Sequence[NewPending], audit_id: int, seen_at: datetime
) -> Callable[[Session], None]:
    """What opens ``items`` inside the transaction that finishes the audit."""

    def open_items(session: Session) -> None:
        open_keys = _open_keys(session)
        fresh = (item for item in items if (item.project, item.kind, item.value) not in open_keys)
        # rows inserted a statement per chunk, never an ORM object per item: a first audit
        # opens one item per project, and a session holding them all was the night's peak
        while chunk := list(islice(fresh, OPEN_CHUNK)):
            session.execute(
                insert(PendingRow),
                [
                    {
                        "project": item.project, "kind": item.kind, "value": item.value,
                        "summary": item.summary, "evidence_url": item.evidence_url,
                        "first_audit_id": audit_id, "first_seen_at": seen_at,
                        "before": item.before, "closed_at": None, "closed_how": None,
                    }
                    for item in chunk
                ],
            )  # fmt: skip

    return open_items


def _open_keys(session: Session) -> set[tuple[str, str, str]]:
    rows = session.execute(
        select(PendingRow.project, PendingRow.kind, PendingRow.value).where(
            PendingRow.closed_at.is_(None)
        )
    )
    return {(project, kind, value) for project, kind, value in rows}


_ITEM_COLUMNS = (
    PendingRow.id, PendingRow.project, PendingRow.kind, PendingRow.value, PendingRow.summary,
    PendingRow.evidence_url, PendingRow.first_audit_id, PendingRow.first_seen_at,
    PendingRow.before,
)  # fmt: skip


def open_pending(store: Store, kinds: Iterable[str] | None = None) -> list[PendingItem]:
    """Everything pending (of these ``kinds``; None: of any), newest first. Read as plain
    rows, not ORM objects: a session would hold every row of a catalog's pending items (one a
    project on a first audit) beside the items made of them."""
    query = select(*_ITEM_COLUMNS).where(PendingRow.closed_at.is_(None))
    if kinds is not None:
        query = query.where(PendingRow.kind.in_(sorted(kinds)))
    with Session(store.engine) as session:
        return newest_first([
            PendingItem(i, project, kind, value, summary, url, audit, _utc(seen), before)
            for i, project, kind, value, summary, url, audit, seen, before
            in session.execute(query)
        ])  # fmt: skip


def close_pending(store: Store, ids: Sequence[int], how: str, when: datetime) -> int:
    if not ids:
        return 0
    with Session(store.engine) as session, session.begin():
        result = session.execute(
            update(PendingRow)
            .where(PendingRow.id.in_(list(ids)), PendingRow.closed_at.is_(None))
            .values(closed_at=when, closed_how=how)
        )
        return int(getattr(result, "rowcount", 0) or 0)


def acknowledge(
    store: Store, projects: Sequence[str], kinds: Sequence[str], when: datetime
) -> list[PendingItem]:
    """Close the open items of these projects and kinds (empty: any); the items closed."""
    chosen = [
        item
        for item in open_pending(store)
        if (not projects or item.project in projects) and (not kinds or item.kind in kinds)
    ]
    close_pending(store, [item.id for item in chosen], "acknowledged", when)
    return chosen


def close_taken(store: Store, curated: Mapping[str, Any], when: datetime) -> list[PendingItem]:
    """Close the pending items the curated catalog holds (``merged``); the items closed."""
    items = open_pending(store)
    taken = set(taken_by_catalog(items, curated))
    close_pending(store, sorted(taken), "merged", when)
    return [item for item in items if item.id in taken]


def close_withdrawn_successors(
    store: Store, unsaid: Set[str], when: datetime
) -> list[PendingItem]:
    """Close the successor findings of the projects that no longer name one (``fixed``)."""
    items = open_pending(store, [ChangeKind.UPSTREAM_SUPERSEDED.value])
    withdrawn = set(successors_withdrawn(items, unsaid))
    close_pending(store, sorted(withdrawn), "fixed", when)
    return [item for item in items if item.id in withdrawn]


def close_fixed_links(store: Store, bad_links: set[str], when: datetime) -> list[PendingItem]:
    """Close the link findings whose link is fixed (``fixed``); the items closed."""
    items = open_pending(store, [kind.value for kind in LINK_KINDS])
    fixed = set(fixed_links(items, bad_links))
    close_pending(store, sorted(fixed), "fixed", when)
    return [item for item in items if item.id in fixed]
