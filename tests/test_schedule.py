from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crawler.schedule import JOB_ID, build_scheduler


def test_nightly_job_is_never_doubled_and_fires_at_the_cron_time() -> None:
    calls: list[int] = []
    scheduler = build_scheduler("0 3 * * *", lambda: calls.append(1))
    job = scheduler.get_job(JOB_ID)
    assert (job.max_instances, job.coalesce, job.misfire_grace_time) == (1, True, 3600)
    now = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
    assert job.trigger.get_next_fire_time(None, now) == datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
    assert calls == []


def test_bad_cron_expression_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"--cron '0 3 \* \*' is not a 5-field crontab expression"):
        build_scheduler("0 3 * *", lambda: None)
