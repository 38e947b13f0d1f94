"""The pending items are held once, as items, never beside an ORM object per item (issue 32,
defect 7: the memory per project of the scale bench). A first audit opens one item per project
and every later night reads them all back; a session holding a ``PendingRow`` per item was the
peak of the audit's end. Counted with SQLAlchemy's own instance events (``init``: an object
made; ``load``: an object made from a row), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session

from crawler.store import Store
from crawler.store.pending import NewPending, open_pending, opener
from crawler.store.tables import PendingRow

ITEMS = 1200  # more than one insert's chunk
WHEN = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)


@pytest.fixture
def made() -> Iterator[dict[str, int]]:
    """How many PendingRow objects were made, and how many of them from a row read."""
    counts = {"init": 0, "load": 0}

    def on_init(*_args: object) -> None:
        counts["init"] += 1

    def on_load(*_args: object) -> None:
        counts["load"] += 1

    event.listen(PendingRow, "init", on_init)
    event.listen(PendingRow, "load", on_load)
    try:
        yield counts
    finally:
        event.remove(PendingRow, "init", on_init)
        event.remove(PendingRow, "load", on_load)


def _tonight(count: int) -> list[NewPending]:
    return [
        NewPending(f"p{n}", "new_release", f"v1.{n}", f"first release v1.{n}",
                   f"https://github.com/org/p{n}/releases/tag/v1.{n}")
        for n in range(count)
    ]  # fmt: skip


def test_opening_and_reading_pending_items_makes_no_row_object_per_item(
    db_url: str, made: dict[str, int]
) -> None:
    store = Store(db_url)
    try:
        audit_id = store.begin_audit("sources.yaml", [f"p{n}" for n in range(ITEMS)], WHEN)
        with Session(store.engine) as session, session.begin():
            opener(_tonight(ITEMS), audit_id, WHEN)(session)
        items = open_pending(store)
    finally:
        store.close()
    assert made == {"init": 0, "load": 0}
    # what was opened reads back whole: newest first, ids rising in the order found
    assert len(items) == ITEMS
    assert [i.project for i in items[:2]] == [f"p{ITEMS - 1}", f"p{ITEMS - 2}"]
    assert [i.id for i in items] == sorted((i.id for i in items), reverse=True)
    last = items[0]
    assert (last.kind, last.value, last.summary, last.evidence_url, last.first_audit_id) == (
        "new_release", f"v1.{ITEMS - 1}", f"first release v1.{ITEMS - 1}",
        f"https://github.com/org/p{ITEMS - 1}/releases/tag/v1.{ITEMS - 1}", audit_id,
    )  # fmt: skip
    assert last.first_seen_at == WHEN and last.before is None


def test_an_item_already_open_is_not_opened_twice(db_url: str) -> None:
    store = Store(db_url)
    try:
        audit_id = store.begin_audit("sources.yaml", ["p0", "p1", "p2"], WHEN)
        with Session(store.engine) as session, session.begin():
            opener(_tonight(2), audit_id, WHEN)(session)
        with Session(store.engine) as session, session.begin():
            opener(_tonight(3), audit_id, WHEN)(session)
        items = open_pending(store)
    finally:
        store.close()
    assert sorted(i.project for i in items) == ["p0", "p1", "p2"]
