"""APScheduler wiring for a long-running container: one audit per cron tick, never two at once.

A restarted scheduler catches up once on a tick it missed (from the last audit the database
knows), SIGTERM lets a running audit finish its current project, and a heartbeat file lets a
container health check see that the scheduler is alive.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from crawler.cron import CronError, crontab_trigger, next_fire_times
from crawler.report.words import zoned_moment
from crawler.untrusted import read_regular_file

if TYPE_CHECKING:  # APScheduler is loaded by the scheduler only, not by `crawler audit`
    from apscheduler.schedulers.background import BackgroundScheduler
    from apscheduler.triggers.base import BaseTrigger

log = logging.getLogger(__name__)
JOB_ID = "nightly-audit"
HEARTBEAT_JOB_ID = "heartbeat"
HEARTBEAT_EVERY = 60  # seconds
HEARTBEAT_MAX_AGE = 180  # seconds: three beats missed and the container is unhealthy
MAX_HEARTBEAT_BYTES = 64 * 1024  # a heartbeat is one line of about 100 bytes


def build_scheduler(
    cron: str, job: Callable[[], object], timezone: str = "UTC"
) -> BackgroundScheduler:
    """A scheduler that runs ``job`` on the crontab expression ``cron`` (5 fields, crontab's
    meaning: see crawler.cron).

    A run that is still going when the next tick comes is not doubled (max_instances=1), and
    ticks missed while the host slept collapse into one run (coalesce) within an hour's grace.
    """
    try:
        trigger = crontab_trigger(cron, ZoneInfo(timezone))
    except CronError as exc:
        raise ValueError(f"cron expression {cron!r}: {exc}") from None
    from apscheduler.schedulers.background import BackgroundScheduler

    scheduler = BackgroundScheduler(timezone=ZoneInfo(timezone))
    scheduler.add_job(
        job, trigger, id=JOB_ID, max_instances=1, coalesce=True, misfire_grace_time=3600
    )
    return scheduler


def missed_tick(
    trigger: BaseTrigger, last_audit: datetime | None, now: datetime
) -> datetime | None:
    """The first tick after the last audit started, if it has passed without an audit.

    However many ticks were missed, this is one answer: the caller audits once. With no audit
    recorded there is nothing to catch up on (``--run-now`` audits at start on purpose).
    """
    if last_audit is None:
        return None
    # An audit that started exactly on a tick covered that tick: look strictly after it.
    tick: datetime | None = trigger.get_next_fire_time(None, last_audit + timedelta(seconds=1))
    return tick if tick is not None and tick <= now else None


# -- heartbeat ------------------------------------------------------------------------------------


def next_audit(trigger: BaseTrigger, now: datetime) -> datetime | None:
    """The audit tick after ``now``, never ``now`` itself nor one before it: at the very moment
    of a tick that audit is starting, and the heartbeat names the one after. (Read from the
    trigger, not from the scheduler's job, whose next run time stays on a tick that is due
    until the scheduler's loop has handed it to a worker.)"""
    tick: datetime | None = trigger.get_next_fire_time(None, now)
    if tick is not None and tick <= now:
        tick = trigger.get_next_fire_time(tick, tick + timedelta(seconds=1))
    return tick



def write_heartbeat(path: Path, now: datetime, next_audit: datetime | None) -> None:
    """Write atomically, so a health check never reads half a file."""
    beat = {
        "pid": os.getpid(),
        "beat": zoned_moment(now.astimezone(UTC)),
        "next_audit": zoned_moment(next_audit) if next_audit else None,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(path.name + ".tmp")
    staging.write_text(json.dumps(beat) + "\n", encoding="utf-8")
    staging.replace(path)


@dataclass(frozen=True)
class Health:
    healthy: bool
    message: str


def check_heartbeat(path: Path, now: datetime, max_age: int = HEARTBEAT_MAX_AGE) -> Health:
    """Is the scheduler that writes ``path`` alive? (``crawler health``, the HEALTHCHECK).
    UnreadableFile when ``path`` is not a regular file of at most MAX_HEARTBEAT_BYTES."""
    try:
        beat = json.loads(read_regular_file(path, MAX_HEARTBEAT_BYTES).decode("utf-8"))
        when = datetime.fromisoformat(beat["beat"])
    except FileNotFoundError:
        return Health(False, f"no heartbeat at {path}: is `crawler schedule` running?")
    except (ValueError, KeyError, TypeError) as exc:
        return Health(False, f"unreadable heartbeat {path}: {exc}")
    age = (now - when).total_seconds()
    if age > max_age:
        shown = zoned_moment(when)
        return Health(False, f"last heartbeat {shown} is {age:.0f} s old (> {max_age})")
    next_audit = beat.get("next_audit") or "none"
    return Health(True, f"alive: heartbeat {age:.0f} s ago, next audit {next_audit}")


# -- the long-running loop ------------------------------------------------------------------------


def _exit_now(signum: int) -> None:
    os._exit(128 + signum)  # the database stays consistent: an audit commits only at its end


@contextlib.contextmanager
def stop_on_signals(
    stop: threading.Event,
    on_second: Callable[[int], None] = _exit_now,
) -> Iterator[None]:
    """SIGTERM/SIGINT set ``stop`` (a running audit ends after its current project); a second
    signal calls ``on_second`` (exit at once)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            on_second(signum)
            return
        log.warning("%s: stopping after the current project", signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@dataclass(frozen=True)
class SchedulePlan:
    cron: str
    timezone: str
    run_now: bool = False
    last_audit: datetime | None = None  # started_at of the latest finished audit
    heartbeat: Path | None = None


def serve(
    plan: SchedulePlan,
    job: Callable[[threading.Event], object],
    echo: Callable[[str], None],
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> None:
    """Audit on ``plan.cron`` until SIGTERM/SIGINT; ``job(stop)`` runs one audit."""
    stop = threading.Event()

    def audit() -> None:
        if not stop.is_set():
            job(stop)

    scheduler = build_scheduler(plan.cron, audit, plan.timezone)
    trigger: Any = scheduler.get_job(JOB_ID).trigger
    started = now()
    upcoming = ", ".join(zoned_moment(t) for t in next_fire_times(trigger, started, 3))
    echo(f"schedule: {plan.cron} ({plan.timezone}); next audits: {upcoming}")

    with stop_on_signals(stop):
        missed = missed_tick(trigger, plan.last_audit, started)
        if missed is not None:
            last = zoned_moment(plan.last_audit) if plan.last_audit else "never"
            echo(f"missed the audit due {zoned_moment(missed)} (last audit {last}): auditing now")
        if plan.run_now or missed is not None:
            audit()
        if not stop.is_set():
            if plan.heartbeat is not None:
                beat_path = plan.heartbeat

                def beat() -> None:
                    moment = now()
                    write_heartbeat(beat_path, moment, next_audit(trigger, moment))

                scheduler.add_job(beat, "interval", seconds=HEARTBEAT_EVERY, id=HEARTBEAT_JOB_ID)
                beat()
            scheduler.start()
            echo("waiting for the next tick; SIGTERM or Ctrl-C stops")
            # Poll rather than wait on the Event: a signal handler that sets an Event the main
            # thread is waiting on can deadlock on the Event's own lock.
            while not stop.is_set():
                time.sleep(0.5)
            scheduler.shutdown(wait=True)  # a running audit finishes its current project
    echo("stopped")
