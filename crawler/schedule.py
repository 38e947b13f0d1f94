"""APScheduler wiring for a long-running container: one audit per cron tick, never two at once."""

from __future__ import annotations

import logging
from collections.abc import Callable

from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger

log = logging.getLogger(__name__)
JOB_ID = "nightly-audit"


def build_scheduler(
    cron: str, job: Callable[[], object], timezone: str = "UTC"
) -> BlockingScheduler:
    """A scheduler that runs ``job`` on the crontab expression ``cron`` (5 fields).

    A run that is still going when the next tick comes is not doubled (max_instances=1), and
    ticks missed while the host slept collapse into one run (coalesce) within an hour's grace.
    """
    try:
        trigger = CronTrigger.from_crontab(cron, timezone=timezone)
    except ValueError as exc:
        raise ValueError(f"--cron {cron!r} is not a 5-field crontab expression: {exc}") from None
    scheduler = BlockingScheduler(timezone=timezone)
    scheduler.add_job(
        job, trigger, id=JOB_ID, max_instances=1, coalesce=True, misfire_grace_time=3600
    )
    return scheduler
