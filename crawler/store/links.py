"""The links' history in the database: read before a night's checks, written after them."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from crawler.diff.links import LINK_OUTCOMES, LinkHistory, LinkOutcome
from crawler.store.database import Store
from crawler.store.tables import LinkCheckRow

_CHUNK = 500  # links per statement


def link_key(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def _utc(value: datetime | None) -> datetime | None:
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def _outcome(value: str) -> LinkOutcome:
    return next((o for o in LINK_OUTCOMES if o == value), "ok")


def _history(row: LinkCheckRow) -> LinkHistory:
    return LinkHistory(
        url=row.url,
        outcome=_outcome(row.outcome),
        last_checked=_utc(row.last_checked),
        last_ok=_utc(row.last_ok),
        failing_since=_utc(row.failing_since),
        gone_nights=row.gone_nights,
        status=row.status,
        moved_to=row.moved_to,
        reason=row.reason,
        etag=row.etag,
        last_modified=row.last_modified,
    )


def link_histories(store: Store, urls: Iterable[str] | None = None) -> dict[str, LinkHistory]:
    """The stored history of these links (all of them when None), by URL."""
    with Session(store.engine) as session:
        if urls is None:
            return {row.url: _history(row) for row in session.scalars(select(LinkCheckRow))}
        keys = [link_key(url) for url in dict.fromkeys(urls)]
        found: dict[str, LinkHistory] = {}
        for start in range(0, len(keys), _CHUNK):
            query = select(LinkCheckRow).where(LinkCheckRow.key.in_(keys[start : start + _CHUNK]))
            found.update((row.url, _history(row)) for row in session.scalars(query))
        return found


def record_links(store: Store, histories: Sequence[LinkHistory]) -> None:
    """Tonight's histories replace the stored ones (one transaction)."""
    if not histories:
        return
    with Session(store.engine) as session, session.begin():
        keys = [link_key(h.url) for h in histories]
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            session.execute(delete(LinkCheckRow).where(LinkCheckRow.key.in_(chunk)))
        session.add_all(_row(h) for h in histories)


def _row(history: LinkHistory) -> LinkCheckRow:
    return LinkCheckRow(
        key=link_key(history.url),
        url=history.url,
        outcome=history.outcome,
        last_checked=history.last_checked,
        last_ok=history.last_ok,
        failing_since=history.failing_since,
        gone_nights=history.gone_nights,
        status=history.status,
        moved_to=history.moved_to,
        reason=history.reason[:2000],
        etag=history.etag,
        last_modified=history.last_modified,
    )
