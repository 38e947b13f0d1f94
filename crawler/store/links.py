"""The links' history in the database: read before a night's checks, written after them; and
what each audit's link step reported, for its report to re-render."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from crawler.diff.links import LINK_OUTCOMES, LinkHistory, LinkOutcome, LinkTarget, LinkVerdict
from crawler.model import Change, ChangeKind
from crawler.store.database import Store
from crawler.store.tables import LinkCheckRow, LinkFindingRow

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


# -- what an audit's link step reported ------------------------------------------------------

REPORTED = ("failing", "error")  # the links a report lists beside its findings


def record_link_findings(
    store: Store, audit_id: int, changes: Sequence[Change], verdicts: Sequence[LinkVerdict]
) -> None:
    """Keep tonight's link findings and the links the report lists as failing or refused."""
    rows = [
        LinkFindingRow(audit_id=audit_id, kind="change", project=c.project[:200],
                       data=json.dumps(_change_data(c), default=str))
        for c in changes
    ] + [
        LinkFindingRow(audit_id=audit_id, kind="link", project=v.target.project[:200],
                       data=json.dumps(_link_data(v)))
        for v in verdicts
        if v.outcome in REPORTED
    ]  # fmt: skip
    if not rows:
        return
    with Session(store.engine) as session, session.begin():
        session.add_all(rows)


def link_findings(
    store: Store, first: int, last: int | None = None
) -> tuple[list[Change], list[LinkVerdict]]:
    """What the link steps of audits ``first`` to ``last`` (inclusive; one audit when None)
    reported: their changes and the links they listed, in the order recorded."""
    changes: list[Change] = []
    listed: list[LinkVerdict] = []
    with Session(store.engine) as session:
        query = (
            select(LinkFindingRow)
            .where(LinkFindingRow.audit_id.between(first, first if last is None else last))
            .order_by(LinkFindingRow.audit_id, LinkFindingRow.id)
        )
        for row in session.scalars(query):
            data = json.loads(row.data)
            if row.kind == "change":
                changes.append(_change(row.project, data))
            else:
                listed.append(_verdict(row.project, data))
    return changes, listed


def _change_data(change: Change) -> dict[str, Any]:
    return {"kind": change.kind.value, "before": change.before, "after": change.after,
            "evidence_url": change.evidence_url, "details": change.details}  # fmt: skip


def _change(project: str, data: dict[str, Any]) -> Change:
    return Change(
        project=project, kind=ChangeKind(data["kind"]), before=data.get("before"),
        after=data.get("after"), evidence_url=data.get("evidence_url"),
        details=dict(data.get("details") or {}),
    )  # fmt: skip


def _link_data(verdict: LinkVerdict) -> dict[str, Any]:
    history = verdict.history
    return {
        "url": verdict.target.url, "outcome": history.outcome, "status": history.status,
        "reason": history.reason, "where": list(verdict.places or (verdict.target.where,)),
        "failing_since": history.failing_since.isoformat() if history.failing_since else None,
    }  # fmt: skip


def _verdict(project: str, data: dict[str, Any]) -> LinkVerdict:
    where = tuple(str(w) for w in data.get("where") or ())
    since = data.get("failing_since")
    history = LinkHistory(
        url=data["url"], outcome=_outcome(str(data.get("outcome"))), status=data.get("status"),
        reason=str(data.get("reason") or ""),
        failing_since=_utc(datetime.fromisoformat(since)) if since else None,
    )  # fmt: skip
    return LinkVerdict(LinkTarget(data["url"], project, where[0] if where else ""), history, where)
