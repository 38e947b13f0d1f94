"""`crawler schedule`: crontab's meaning, one catch-up run after a missed tick, SIGTERM, health."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from crawler.cli import cli
from crawler.schedule import JOB_ID, build_scheduler
from crawler.store import Store
from tests.support.ops import PROJECTS, upstream

SUNDAY_NOON = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)  # a Sunday


def _fires(cron: str, count: int, now: datetime = SUNDAY_NOON, tz: str = "UTC") -> list[str]:
    """The next ``count`` fire times of the scheduler the CLI builds, as 'Mon 2026-11-30 03:00'."""
    trigger = build_scheduler(cron, lambda: None, tz).get_job(JOB_ID).trigger
    out: list[str] = []
    previous = None
    while len(out) < count:
        fire = trigger.get_next_fire_time(previous, now)
        out.append(fire.strftime("%a %Y-%m-%d %H:%M %z"))
        previous, now = fire, fire + timedelta(seconds=1)
    return out


def test_nightly_job_is_never_doubled_and_fires_at_the_cron_time() -> None:
    calls: list[int] = []
    scheduler = build_scheduler("0 3 * * *", lambda: calls.append(1))
    job = scheduler.get_job(JOB_ID)
    assert (job.max_instances, job.coalesce, job.misfire_grace_time) == (1, True, 3600)
    now = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
    assert job.trigger.get_next_fire_time(None, now) == datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
    assert calls == []


def test_bad_cron_expression_is_a_clear_error() -> None:
    with pytest.raises(ValueError) as info:
        build_scheduler("0 3 * *", lambda: None)
    assert str(info.value) == (
        "cron expression '0 3 * *': expected 5 fields (minute hour day-of-month month "
        "day-of-week), got 4"
    )
    # a bad name is called what it is, not a wrong number of fields (issue 22)
    with pytest.raises(ValueError) as info:
        build_scheduler("0 3 * * mon-fry", lambda: None)
    assert str(info.value) == (
        "cron expression '0 3 * * mon-fry': day of week: 'fry' is not a day of week name: "
        "use sun-sat (sun, mon, tue, wed, thu, fri, sat) or 0-7"
    )


# -- regression: APScheduler's from_crontab read day-of-week 0 as Monday --------------------------


def test_weekdays_1_to_5_fire_monday_to_friday_like_cron() -> None:
    assert _fires("0 3 * * 1-5", 6) == [
        "Mon 2026-11-30 03:00 +0000",
        "Tue 2026-12-01 03:00 +0000",
        "Wed 2026-12-02 03:00 +0000",
        "Thu 2026-12-03 03:00 +0000",
        "Fri 2026-12-04 03:00 +0000",
        "Mon 2026-12-07 03:00 +0000",
    ]


@pytest.mark.parametrize("sunday", ["0", "7", "sun", "SUN"])
def test_sunday_is_0_7_or_sun(sunday: str) -> None:
    assert _fires(f"0 3 * * {sunday}", 3) == [
        "Sun 2026-12-06 03:00 +0000",
        "Sun 2026-12-13 03:00 +0000",
        "Sun 2026-12-20 03:00 +0000",
    ]


def test_lists_steps_names_and_weekend_ranges() -> None:
    assert _fires("0 3 * * mon-fri/2", 4) == [
        "Mon 2026-11-30 03:00 +0000",
        "Wed 2026-12-02 03:00 +0000",
        "Fri 2026-12-04 03:00 +0000",
        "Mon 2026-12-07 03:00 +0000",
    ]
    assert _fires("0 0 * * */2", 4) == [  # 0,2,4,6: Sunday, Tuesday, Thursday, Saturday
        "Tue 2026-12-01 00:00 +0000",
        "Thu 2026-12-03 00:00 +0000",
        "Sat 2026-12-05 00:00 +0000",
        "Sun 2026-12-06 00:00 +0000",
    ]
    assert _fires("45 6 * * 5-7", 3) == [  # Friday to Sunday, 7 closing the range
        "Fri 2026-12-04 06:45 +0000",
        "Sat 2026-12-05 06:45 +0000",
        "Sun 2026-12-06 06:45 +0000",
    ]
    assert _fires("0 12 1 jan,jul *", 3) == [
        "Fri 2027-01-01 12:00 +0000",
        "Thu 2027-07-01 12:00 +0000",
        "Sat 2028-01-01 12:00 +0000",
    ]


def test_day_of_month_and_day_of_week_both_set_means_either() -> None:
    # crontab(5): "30 4 1,15 * 5" runs at 4:30 on the 1st and 15th of each month, plus every Friday
    assert _fires("30 4 1,15 * 5", 5) == [
        "Tue 2026-12-01 04:30 +0000",
        "Fri 2026-12-04 04:30 +0000",
        "Fri 2026-12-11 04:30 +0000",
        "Tue 2026-12-15 04:30 +0000",
        "Fri 2026-12-18 04:30 +0000",
    ]


def test_time_zone_of_the_expression() -> None:
    assert _fires("0 3 * * 1", 2, tz="Europe/Berlin") == [
        "Mon 2026-11-30 03:00 +0100",
        "Mon 2026-12-07 03:00 +0100",
    ]


# -- catch-up after a restart ---------------------------------------------------------------------


def test_missed_tick_is_caught_up_once_never_twice_and_not_without_a_miss() -> None:
    from crawler.cron import crontab_trigger
    from crawler.schedule import missed_tick

    nightly = crontab_trigger("0 3 * * *", ZoneInfo("UTC"))
    at = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    # last audit yesterday 03:00:05, restarted today noon: today's 03:00 was missed
    assert missed_tick(nightly, datetime(2026, 11, 29, 3, 0, 5, tzinfo=UTC), at) == datetime(
        2026, 11, 30, 3, 0, tzinfo=UTC
    )
    # down for a week: still one answer (the first missed tick), the caller audits once
    assert missed_tick(nightly, datetime(2026, 11, 23, 3, 0, tzinfo=UTC), at) == datetime(
        2026, 11, 24, 3, 0, tzinfo=UTC
    )
    # today's tick ran (started exactly on it): nothing missed
    assert missed_tick(nightly, datetime(2026, 11, 30, 3, 0, tzinfo=UTC), at) is None
    # restarted before today's tick, last audit yesterday's: nothing missed yet
    early = datetime(2026, 11, 30, 2, 59, tzinfo=UTC)
    assert missed_tick(nightly, datetime(2026, 11, 29, 3, 0, tzinfo=UTC), early) is None
    # no audit ever recorded: nothing to catch up on
    assert missed_tick(nightly, None, at) is None


def test_missed_tick_in_the_schedules_time_zone() -> None:
    from crawler.cron import crontab_trigger
    from crawler.schedule import missed_tick

    berlin = crontab_trigger("0 3 * * *", ZoneInfo("Europe/Berlin"))
    last = datetime(2026, 11, 29, 2, 30, tzinfo=UTC)  # 03:30 in Berlin: after that day's tick
    assert missed_tick(berlin, last, datetime(2026, 11, 30, 1, 59, tzinfo=UTC)) is None
    assert missed_tick(berlin, last, datetime(2026, 11, 30, 2, 0, tzinfo=UTC)) == datetime(
        2026, 11, 30, 3, 0, tzinfo=ZoneInfo("Europe/Berlin")
    )


def _read_until(proc: subprocess.Popen[str], marker: str, limit: float = 120.0) -> list[str]:
    """stdout lines up to and including the one containing ``marker`` (bounded wait)."""
    assert proc.stdout is not None
    lines: list[str] = []
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not selector.select(timeout=1.0):
            if proc.poll() is not None:
                break
            continue
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if marker in line:
            return lines
    stderr = proc.stderr.read() if proc.stderr and proc.poll() is not None else ""
    raise AssertionError(f"no {marker!r} in {lines}; stderr: {stderr}")


@contextmanager
def _scheduler(config: Path, db_url: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """`crawler schedule` in a child process (reports beside the config), against a fake
    GitHub serving ``upstream("v1.0")``; killed on the way out if it is still running."""
    from crawler_fakes.github import FakeGitHub

    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
        env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN")}
        env.update(GITHUB_API_URL=server.base_url, PYTHONUNBUFFERED="1")
        # the default heartbeat goes to the state folder: the test's, not the user's
        env.setdefault("XDG_STATE_HOME", str(config.parent / "state"))
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "crawler", "schedule", "--config", str(config)),
                *("--db", db_url, "--reports", str(config.parent / "reports"), *args),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=config.parent,
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_restarted_scheduler_audits_once_for_the_missed_tick_then_stops_on_sigterm(
    tmp_path: Path, db_url: str
) -> None:
    config = tmp_path / "sources.yaml"
    # 29 February: the next three ticks are the same whenever this test runs (until 2028)
    config.write_text('schedule: {cron: "0 3 29 2 *", timezone: Europe/Berlin}\n' + PROJECTS)
    store = Store(db_url)
    last = datetime(2024, 2, 28, 12, 0, tzinfo=UTC)
    first = store.begin_audit(str(config), ["Alpha", "Beta"], last)
    store.finish_audit(first, [], "complete", last + timedelta(minutes=1), None, {})
    store.close()
    heartbeat = tmp_path / "run" / "heartbeat.json"
    with _scheduler(config, db_url, "--heartbeat", str(heartbeat)) as proc:
        lines = _read_until(proc, "waiting for the next tick")
        beat = json.loads(heartbeat.read_text())
        health = CliRunner().invoke(cli, ["health", "--heartbeat", str(heartbeat)])
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    assert lines[0] == (
        "schedule: 0 3 29 2 * (Europe/Berlin); next audits: 2028-02-29T03:00:00+01:00, "
        "2032-02-29T03:00:00+01:00, 2036-02-29T03:00:00+01:00"
    )
    assert lines[1] == (
        "missed the audit due 2024-02-29T03:00:00+01:00 (last audit 2024-02-28T12:00:00Z): "
        "auditing now"
    )
    assert lines[2].startswith("audit #2 complete: ")
    assert lines[-1] == "waiting for the next tick; SIGTERM or Ctrl-C stops"
    assert sum(1 for line in lines if line.startswith("audit #")) == 1
    assert (beat["pid"], beat["next_audit"]) == (proc.pid, "2028-02-29T03:00:00+01:00")
    assert health.exit_code == 0 and health.output.startswith("alive: heartbeat ")
    assert proc.returncode == 0
    assert rest.splitlines()[-1] == "stopped"
    store = Store(db_url)
    try:
        assert [(a.id, a.status) for a in store.audits()] == [(1, "complete"), (2, "complete")]
    finally:
        store.close()


def test_heartbeat_health_check() -> None:
    import tempfile

    from crawler.schedule import check_heartbeat, write_heartbeat

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "beat.json"
        at = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
        missing = check_heartbeat(path, at)
        assert (missing.healthy, missing.message) == (
            False,
            f"no heartbeat at {path}: is `crawler schedule` running?",
        )
        write_heartbeat(path, at, datetime(2026, 12, 1, 3, 0, tzinfo=UTC))
        fresh = check_heartbeat(path, at + timedelta(seconds=179))
        assert (fresh.healthy, fresh.message) == (
            True,
            "alive: heartbeat 179 s ago, next audit 2026-12-01T03:00:00Z",
        )
        stale = check_heartbeat(path, at + timedelta(seconds=181))
        assert (stale.healthy, stale.message) == (
            False,
            "last heartbeat 2026-11-30T12:00:00Z is 181 s old (> 180)",
        )


def test_sigterm_sets_stop_then_a_second_signal_exits() -> None:
    from crawler.schedule import stop_on_signals

    stop = threading.Event()
    second: list[int] = []
    before = signal.getsignal(signal.SIGTERM)
    with stop_on_signals(stop, on_second=second.append):
        signal.raise_signal(signal.SIGTERM)
        assert stop.is_set() and second == []
        signal.raise_signal(signal.SIGINT)
        assert second == [signal.SIGINT]
    assert signal.getsignal(signal.SIGTERM) is before


def test_stop_requested_ends_the_audit_partial_with_projects_deferred(
    tmp_path: Path, db_url: str
) -> None:
    from crawler.audit import run_audit
    from crawler.config import parse_config
    from crawler_fakes.github import FakeGitHub

    # one worker, so that Beta starts only once Alpha is done; stop is asked for after Alpha
    config = parse_config("github: {concurrency: 1}\n" + PROJECTS)
    store = Store(db_url)
    try:
        with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:

            def should_stop() -> bool:  # SIGTERM arrives once Alpha's tree has been read
                return any("/repos/org/alpha/git/trees/" in r.path for r in server.requests)

            outcome = run_audit(config, store, tmp_path, env=server.env(), should_stop=should_stop)
    finally:
        store.close()
    assert outcome.status == "partial"
    statuses: dict[str, Any] = {
        p["name"]: (p["status"], p["note"]) for p in outcome.report.as_json()["projects"]
    }
    assert statuses["Alpha"] == ("ok", None)
    assert statuses["Beta"][0] == "deferred"
    assert statuses["Beta"][1].startswith("not checked this audit: stop requested; ")


def test_a_tick_audits_in_the_schedulers_worker_thread(tmp_path: Path) -> None:
    """Every minute, no catch-up: the first audit comes from a real tick (waits up to a minute)."""
    config = tmp_path / "sources.yaml"
    config.write_text(PROJECTS)
    db = f"sqlite:///{tmp_path / 'crawler.sqlite'}"
    with _scheduler(config, db, "--cron", "* * * * *") as proc:
        lines = _read_until(proc, "audit #1 ", limit=150)
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    assert lines[1] == "waiting for the next tick; SIGTERM or Ctrl-C stops"
    assert lines[2] == "audit #1 complete: 2 changes, 0 flags, 0 errors, 0 deferred"
    assert proc.returncode == 0 and rest.splitlines()[-1] == "stopped"


def test_health_reads_by_default_the_heartbeat_schedule_writes_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`crawler health` looked for ./heartbeat.json while `crawler schedule` wrote no heartbeat
    unless told where: the container's HEALTHCHECK only worked because the image set
    CRAWLER_HEARTBEAT for both. Now both default to $XDG_STATE_HOME/crawler/heartbeat.json."""
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.delenv("CRAWLER_HEARTBEAT", raising=False)
    config = tmp_path / "sources.yaml"
    config.write_text('schedule: {cron: "0 3 29 2 *"}\n' + PROJECTS)
    db = f"sqlite:///{tmp_path / 'crawler.sqlite'}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # health is not run from the scheduler's folder
    with _scheduler(config, db) as proc:
        _read_until(proc, "waiting for the next tick")
        health = CliRunner().invoke(cli, ["health"])
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert health.exit_code == 0, health.output
    assert health.output.startswith("alive: heartbeat ")
    beat = json.loads((state / "crawler" / "heartbeat.json").read_text())
    assert beat["pid"] == proc.pid
    assert sorted(p.name for p in elsewhere.iterdir()) == []


def test_the_heartbeat_never_names_a_next_audit_in_the_past(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the very moment of a tick, the heartbeat named that tick as the next audit (and,
    until the scheduler's loop took the due job, its every beat did): a next audit that is
    already under way, in the past by the time anyone reads it. It names the tick after."""
    from crawler.schedule import SchedulePlan, serve

    heartbeat = tmp_path / "heartbeat.json"
    tick = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)  # the scheduler starts exactly on a tick
    plan = SchedulePlan(cron="0 3 * * *", timezone="UTC", heartbeat=heartbeat)

    def stop_once_beating() -> None:  # SIGTERM once the first heartbeat is written
        while not heartbeat.exists():
            threading.Event().wait(0.05)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=stop_once_beating, daemon=True).start()
    said: list[str] = []
    serve(plan, lambda stop: None, said.append, now=lambda: tick)
    beat = json.loads(heartbeat.read_text())
    assert beat["beat"] == "2026-12-01T03:00:00Z"
    assert beat["next_audit"] == "2026-12-02T03:00:00Z"
    assert said[-1] == "stopped"
