"""Crontab expressions with crontab's meaning, as APScheduler 3 triggers.

APScheduler 3 numbers weekdays from Monday (``CronTrigger.from_crontab("0 3 * * 0")`` fires on
Mondays), accepts some fields crontab does not (``last``, ``2nd fri``) and silently drops a step
after a month name. So every field is expanded here, with crontab(5) rules, into the explicit
set of values it allows, and APScheduler is only handed plain number lists:

- minute 0-59, hour 0-23, day of month 1-31, month 1-12 or jan-dec, day of week 0-7 or sun-sat
  (0 and 7 are Sunday); ``*``, ``a``, ``a-b``, ``*/n``, ``a-b/n``, ``a/n`` (from a to the
  field's end) and comma lists of them;
  ``@hourly``, ``@daily``/``@midnight``, ``@weekly``, ``@monthly``, ``@yearly``/``@annually``.
- When both day fields are restricted (neither starts with ``*``), cron runs on a day matching
  *either* of them; APScheduler would require both, so that case becomes an ``OrTrigger``.

croniter reads crontab the same way, but it is not an APScheduler trigger: using it would mean a
trigger class of our own with croniter's DST rules beside APScheduler's. Expanding the fields
here keeps APScheduler's own CronTrigger, its DST handling and its misfire rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # APScheduler is loaded when a trigger is built, not to check an expression
    from apscheduler.triggers.combining import OrTrigger
    from apscheduler.triggers.cron import CronTrigger

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_APS_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # APScheduler's order
_NICKNAMES = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_ITEM = re.compile(r"^(?:(?P<star>\*)|(?P<first>\w+)(?:-(?P<last>\w+))?)(?:/(?P<step>\d+))?$")


class CronError(ValueError):
    """A crontab expression that crontab itself would refuse."""


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    name_base: int = 0  # the number of the first name

    def value(self, text: str) -> int:
        lowered = text.lower()
        if lowered in self.names:
            return self.names.index(lowered) + self.name_base
        if not text.isdigit():
            if self.names and text.isalpha():
                raise CronError(
                    f"{self.name}: {text!r} is not a {self.name} name: use "
                    f"{'-'.join((self.names[0], self.names[-1]))} ({', '.join(self.names)}) "
                    f"or {self.low}-{self.high}"
                )
            raise CronError(f"{self.name}: {text!r} is not a number or a known name")
        number = int(text)
        if not self.low <= number <= self.high:
            raise CronError(f"{self.name}: {number} is outside {self.low}-{self.high}")
        return number

    def expand(self, text: str) -> frozenset[int]:
        values: set[int] = set()
        for item in text.split(","):
            match = _ITEM.match(item)
            if match is None:
                raise CronError(f"{self.name}: cannot read {item!r}")
            step = int(match["step"]) if match["step"] else 1
            if step < 1:
                raise CronError(f"{self.name}: a step must be at least 1 in {item!r}")
            if match["star"]:
                first, last = self.low, self.high
            else:
                first = self.value(match["first"])
                last = self.value(match["last"]) if match["last"] else first
                if match["step"] and not match["last"]:
                    last = self.high  # 'a/n' is 'a-high/n', as cron (cronie) and croniter read it
                if first > last:
                    raise CronError(f"{self.name}: range {item!r} runs backwards")
            values.update(range(first, last + 1, step))
        return frozenset(values)


_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day of month", 1, 31),
    _Field("month", 1, 12, _MONTHS, 1),
    _Field("day of week", 0, 7, _DAYS, 0),
)


@dataclass(frozen=True)
class CronSchedule:
    """The five fields of a crontab line as the sets of values they allow."""

    expression: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday … 6 = Saturday (7 folded into 0)
    days_restricted: bool  # the day-of-month field does not start with '*'
    weekdays_restricted: bool

    def trigger(self, timezone: Any) -> CronTrigger | OrTrigger:
        """An APScheduler trigger that fires exactly when cron would, in ``timezone``."""
        from apscheduler.triggers.combining import OrTrigger
        from apscheduler.triggers.cron import CronTrigger

        common: dict[str, Any] = {
            "minute": _listed(self.minutes, 0, 59),
            "hour": _listed(self.hours, 0, 23),
            "month": _listed(self.months, 1, 12),
            "timezone": timezone,
        }
        days = _listed(self.days, 1, 31)
        weekdays = (
            "*"
            if len(self.weekdays) == 7
            else ",".join(_APS_DAYS[(d - 1) % 7] for d in sorted(self.weekdays))
        )
        if self.days_restricted and self.weekdays_restricted:
            return OrTrigger(
                [
                    CronTrigger(day=days, day_of_week="*", **common),
                    CronTrigger(day="*", day_of_week=weekdays, **common),
                ]
            )
        return CronTrigger(day=days, day_of_week=weekdays, **common)


def _listed(values: frozenset[int], low: int, high: int) -> str:
    if values == frozenset(range(low, high + 1)):
        return "*"
    return ",".join(str(v) for v in sorted(values))


def parse_crontab(expression: str) -> CronSchedule:
    """Read a 5-field crontab expression (or an @nickname) with crontab's meaning."""
    text = _NICKNAMES.get(expression.strip().lower(), expression)
    parts = text.split()
    if len(parts) != 5:
        raise CronError(
            f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}"
        )
    minutes, hours, days, months, weekdays = (
        field.expand(part) for field, part in zip(_FIELDS, parts, strict=True)
    )
    return CronSchedule(
        expression=expression,
        minutes=minutes,
        hours=hours,
        days=days,
        months=months,
        weekdays=frozenset(d % 7 for d in weekdays),
        days_restricted=not parts[2].startswith("*"),
        weekdays_restricted=not parts[4].startswith("*"),
    )


def crontab_trigger(expression: str, timezone: Any = "UTC") -> CronTrigger | OrTrigger:
    """The APScheduler trigger for a crontab expression; CronError says what is wrong."""
    return parse_crontab(expression).trigger(timezone)


def next_fire_times(
    trigger: CronTrigger | OrTrigger, now: datetime, count: int = 3
) -> list[datetime]:
    """The next ``count`` times the trigger fires after ``now`` (aware datetimes)."""
    times: list[datetime] = []
    previous: datetime | None = None
    moment = now
    while len(times) < count:
        fire: datetime | None = trigger.get_next_fire_time(previous, moment)
        if fire is None:
            break
        times.append(fire)
        previous, moment = fire, fire + timedelta(seconds=1)
    return times
