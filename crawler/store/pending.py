"""The pending changes in the database: recorded by each audit, closed when the curated catalog
takes them or a person acknowledges them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from crawler.diff.pending import (
    PendingItem,
    fixed_links,
    newest_first,
    pending_changes,
    pending_value,
    taken_by_catalog,
)
from crawler.model import Change
from crawler.store.database import Store
from crawler.store.tables import PendingRow


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _item(row: PendingRow) -> PendingItem:
    return PendingItem(
        row.id,
        row.project,
        row.kind,
        row.value,
        row.summary,
        row.evidence_url,
        row.first_audit_id,
        _utc(row.first_seen_at),
    )


def record_pending(
    store: Store,
    audit_id: int,
    seen_at: datetime,
    changes: Iterable[Change],
    summary: Callable[[Change], str],
) -> int:
    """Open an item for each pending-worthy change not already open (same project, kind and
    value: a change reported again after a failed report is the same item). Returns how many.
    ``summary`` words a change (crawler.report.words.change_summary, handed in by the audit)."""
    added = 0
    with Session(store.engine) as session, session.begin():
        open_keys = {
            (row.project, row.kind, row.value)
            for row in session.scalars(select(PendingRow).where(PendingRow.closed_at.is_(None)))
        }
        for change in pending_changes(changes):
            said = summary(change)
            key = (change.project, change.kind.value, pending_value(change, said))
            if key in open_keys:
                continue
            open_keys.add(key)
            session.add(
                PendingRow(
                    project=change.project,
                    kind=change.kind.value,
                    value=key[2],
                    summary=said[:2000],
                    evidence_url=change.evidence_url,
                    first_audit_id=audit_id,
                    first_seen_at=seen_at,
                )
            )
            added += 1
    return added


def open_pending(store: Store) -> list[PendingItem]:
    """Everything pending, newest first."""
    with Session(store.engine) as session:
        rows = session.scalars(select(PendingRow).where(PendingRow.closed_at.is_(None)))
        return newest_first([_item(row) for row in rows])


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


def close_fixed_links(store: Store, bad_links: set[str], when: datetime) -> list[PendingItem]:
    """Close the link findings whose link is fixed (``fixed``); the items closed."""
    items = open_pending(store)
    fixed = set(fixed_links(items, bad_links))
    close_pending(store, sorted(fixed), "fixed", when)
    return [item for item in items if item.id in fixed]
