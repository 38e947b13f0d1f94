"""crawler.cron: crontab's grammar, refused where crontab refuses, with a clear message."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from crawler.cron import CronError, crontab_trigger, next_fire_times, parse_crontab


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("0 3 * *", "expected 5 fields (minute hour day-of-month month day-of-week), got 4"),
        ("0 3 * * 8", "day of week: 8 is outside 0-7"),
        ("0 24 * * *", "hour: 24 is outside 0-23"),
        ("0 3 0 * *", "day of month: 0 is outside 1-31"),
        ("0 3 * * fri-mon", "day of week: range 'fri-mon' runs backwards"),
        (
            "0 3 * * funday",
            "day of week: 'funday' is not a day of week name: use sun-sat "
            "(sun, mon, tue, wed, thu, fri, sat) or 0-7",
        ),
        (
            "0 3 * * mon-fry",
            "day of week: 'fry' is not a day of week name: use sun-sat "
            "(sun, mon, tue, wed, thu, fri, sat) or 0-7",
        ),
        (
            "0 3 * janu *",
            "month: 'janu' is not a month name: use jan-dec "
            "(jan, feb, mar, apr, may, jun, jul, aug, sep, oct, nov, dec) or 1-12",
        ),
        ("*/0 * * * *", "minute: a step must be at least 1 in '*/0'"),
        ("0 3 L * *", "day of month: 'L' is not a number or a known name"),
        ("0 3 * * 1#2", "day of week: cannot read '1#2'"),
    ],
)
def test_refused_like_crontab(expression: str, message: str) -> None:
    with pytest.raises(CronError) as info:
        parse_crontab(expression)
    assert str(info.value) == message


def test_a_start_with_a_step_runs_to_the_end_of_the_field_as_cron_reads_it() -> None:
    """Issue 22: `5/15` was refused; cron (cronie) and croniter read it as `5-59/15`."""
    assert parse_crontab("5/15 * * * *").minutes == {5, 20, 35, 50}
    assert parse_crontab("0 1/6 * * *").hours == {1, 7, 13, 19}
    assert parse_crontab("0 3 * jan/2 *").months == {1, 3, 5, 7, 9, 11}
    assert parse_crontab("0 3 * * mon/2").weekdays == {1, 3, 5, 0}  # 7 (Sunday) folded into 0


def test_fields_expand_to_the_values_cron_allows() -> None:
    schedule = parse_crontab("*/15 9-17/4 1,15 jan-mar 0,7")
    assert schedule.minutes == {0, 15, 30, 45}
    assert schedule.hours == {9, 13, 17}
    assert schedule.days == {1, 15}
    assert schedule.months == {1, 2, 3}
    assert schedule.weekdays == {0}  # 0 and 7 are both Sunday
    assert (schedule.days_restricted, schedule.weekdays_restricted) == (True, True)


@pytest.mark.parametrize(
    ("nickname", "first"),
    [
        ("@hourly", datetime(2026, 11, 29, 13, 0, tzinfo=UTC)),
        ("@daily", datetime(2026, 11, 30, 0, 0, tzinfo=UTC)),
        ("@weekly", datetime(2026, 12, 6, 0, 0, tzinfo=UTC)),  # Sunday midnight
        ("@monthly", datetime(2026, 12, 1, 0, 0, tzinfo=UTC)),
        ("@yearly", datetime(2027, 1, 1, 0, 0, tzinfo=UTC)),
    ],
)
def test_nicknames(nickname: str, first: datetime) -> None:
    trigger = crontab_trigger(nickname, ZoneInfo("UTC"))
    assert next_fire_times(trigger, datetime(2026, 11, 29, 12, 30, tzinfo=UTC), 1) == [first]


def test_next_three_fire_times_are_distinct_and_ordered() -> None:
    trigger = crontab_trigger("0 3 * * *", ZoneInfo("Europe/Berlin"))
    times = next_fire_times(trigger, datetime(2026, 3, 28, 12, 0, tzinfo=UTC), 3)
    # across the spring DST change: 03:00 local stays 03:00 local, the UTC offset moves
    assert [t.isoformat() for t in times] == [
        "2026-03-29T03:00:00+02:00",
        "2026-03-30T03:00:00+02:00",
        "2026-03-31T03:00:00+02:00",
    ]
