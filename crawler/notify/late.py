"""Reports of finished audits that were never delivered: the run was killed between finishing
the audit and sending its summary. The next run delivers them first, each at least once (a kill
after sending and before the mark sends it again), saying it is late and which night it
belongs to; then the audit is marked delivered."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from crawler.audit import rebuild_report
from crawler.config import Config, ConfigError
from crawler.notify import Delivery, deliver
from crawler.report.files import report_folder, write_report
from crawler.report.model import Report
from crawler.store import AuditInfo, Store

log = logging.getLogger(__name__)
MAX_LATE = 5  # undelivered audits sent late at once, the newest; older ones are only logged


def deliver_late(
    store: Store,
    config: Config,
    reports_dir: Path,
    *,
    api_url: str,
    token: str | None,
    env: Mapping[str, str],
    secrets: Sequence[str] = (),
) -> list[Delivery]:
    """Deliver every finished, undelivered audit (oldest first) and mark it delivered."""
    audits = store.undelivered_audits()
    skipped, audits = audits[:-MAX_LATE], audits[-MAX_LATE:]
    now = datetime.now(UTC).replace(microsecond=0)
    for audit in skipped:
        log.warning("audit #%d was never delivered; too old to send late now", audit.id)
        store.mark_delivered(audit.id, now)
    deliveries = []
    for audit in audits:
        found = _report_of(store, config, reports_dir, audit)
        if found is None:
            store.mark_delivered(audit.id, now)
            continue
        report, folder = found
        deliveries.append(
            deliver(
                report, folder, config.notify, api_url=api_url, token=token, env=env,
                secrets=secrets, late=True,
            )
        )  # fmt: skip
        store.mark_delivered(audit.id, datetime.now(UTC).replace(microsecond=0))
    return deliveries


def _report_of(
    store: Store, config: Config, reports_dir: Path, audit: AuditInfo
) -> tuple[Report, Path] | None:
    """The audit's report as written that night; rebuilt from the database (and written to its
    folder) when the file is gone or unreadable; None when neither works (logged)."""
    folder = report_folder(reports_dir, audit.id, audit.started_at)
    try:
        return Report.from_json((folder / "report.json").read_bytes()), folder
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        pass
    try:
        report = rebuild_report(store, config, audit.id)
        return report, write_report(report, reports_dir, refresh_latest=False)
    except (OSError, ConfigError) as exc:
        log.error("audit #%d was never delivered and its report cannot be made: %s", audit.id, exc)
        return None
