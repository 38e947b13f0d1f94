"""Running audits in a test, and reading what they report: written once for every test file
that audits against a fake on loopback and a real database."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Generic, TypeVar

from crawler.audit import AuditOutcome, run_audit
from crawler.config import Config, parse_config
from crawler.report.json_report import validate_report
from crawler.report.model import Report
from crawler.store import Store

Server = TypeVar("Server")


class Audits(Generic[Server]):
    """One real database (the ``db_url`` fixture: SQLite or PostgreSQL), a reports folder, and
    the fake the audits talk to; each audit runs as ``crawler audit`` runs it, its report
    checked against the schema. The sleeps the audits asked for are recorded, not slept."""

    def __init__(self, server: Server, db_url: str, tmp: Path, env: Mapping[str, str]) -> None:
        self.server = server
        self.db_url = db_url
        self.store = Store(db_url)
        self.reports = tmp / "reports"
        self.env = dict(env)
        self.sleeps: list[float] = []

    def audit(self, config: Config | str, env: Mapping[str, str] | None = None) -> AuditOutcome:
        if isinstance(config, str):
            config = parse_config(config)
        outcome = run_audit(
            config, self.store, self.reports, env=env or self.env, sleep=self.sleeps.append
        )
        validate_report(outcome.report)
        return outcome

    def close(self) -> None:
        self.store.close()


def github_config(count: int, settings: str = "retry_base_delay: 0", extra: str = "") -> Config:
    """Projects p0…p{count-1} on org/p0…, a ``github:`` section of ``settings``, then ``extra``
    (more project entries)."""
    names = "".join(f"  - name: p{i}\n    repo: org/p{i}\n" for i in range(count))
    return parse_config(f"github: {{{settings}}}\nprojects:\n{names}{extra}")


# -- what a report.json says, as tuples a test compares exactly ------------------------------


def as_json(report: Report | Mapping[str, Any]) -> Mapping[str, Any]:
    """The report as report.json says it (a typed Report is serialised, as it is written)."""
    return report.as_json() if isinstance(report, Report) else report


def kinds(report: Report | Mapping[str, Any]) -> list[tuple[str, str]]:
    """(project, kind) of each change, in report order."""
    return [(c["project"], c["kind"]) for c in as_json(report)["changes"]]


def changes(report: Report | Mapping[str, Any], *more: str) -> list[tuple[Any, ...]]:
    """(project, kind, before, after) of each change, then the fields named in ``more``."""
    return [
        (c["project"], c["kind"], c["before"], c["after"], *(c[m] for m in more))
        for c in as_json(report)["changes"]
    ]


def project_statuses(report: Report | Mapping[str, Any]) -> dict[str, str]:
    """Each project's status in this audit: ok, error, deferred, untracked."""
    return {p["name"]: p["status"] for p in as_json(report)["projects"]}


def a_day_passes(store: Any) -> None:
    """Every stored audit, link check and pending item, and when each stored state was
    fetched, moves one day into the past, as if the next night had come (the test clock of
    the multi-night tests)."""
    import json

    from sqlalchemy import select, update

    from crawler.store.tables import AuditRow, LinkCheckRow, PendingRow, SnapshotRow

    moved: dict[Any, tuple[str, tuple[str, ...]]] = {
        AuditRow: ("id", ("started_at", "finished_at")),
        LinkCheckRow: ("key", ("last_checked", "last_ok", "failing_since")),
        PendingRow: ("id", ("first_seen_at", "closed_at")),
    }
    with store.engine.begin() as conn:
        for table, (key, columns) in moved.items():
            for row in conn.execute(select(table.__table__)).mappings().all():
                earlier = {c: row[c] - timedelta(days=1) for c in columns if row[c] is not None}
                if earlier:
                    conn.execute(
                        update(table).where(getattr(table, key) == row[key]).values(**earlier)
                    )
        for row_id, data in conn.execute(select(SnapshotRow.id, SnapshotRow.data)).all():
            state = json.loads(data)
            for _facet, where in state.get("provenance") or ():
                if where.get("fetched_at"):
                    fetched = datetime.fromisoformat(where["fetched_at"].replace("Z", "+00:00"))
                    where["fetched_at"] = (fetched - timedelta(days=1)).isoformat()
            conn.execute(
                update(SnapshotRow)
                .where(SnapshotRow.id == row_id)
                .values(data=json.dumps(state, separators=(",", ":")))
            )
