"""Keeping to GitHub's secondary limits: points and response seconds in any minute."""

from __future__ import annotations

import pytest

from crawler.upstream.sources.github.pacing import (
    GITHUB_COM,
    Pacer,
    SecondaryLimits,
    secondary_limits,
)


class Clock:
    """A clock that moves only when the pacer sleeps (or the test says so)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _pacer(clock: Clock, **limits: float) -> Pacer:
    return Pacer(SecondaryLimits(**limits), clock=clock, sleep=clock.sleep)  # type: ignore[arg-type]


def test_a_request_past_the_points_of_a_minute_waits_for_the_oldest_to_leave_it() -> None:
    clock = Clock()
    pacer = _pacer(clock, rest_points=3, graphql_points=2)
    for at in (0.0, 1.0, 2.0):
        clock.now = at
        pacer.turn(graphql=False)
    assert clock.sleeps == []
    pacer.turn(graphql=True)  # GraphQL's points are its own
    pacer.turn(graphql=True)
    assert clock.sleeps == []
    pacer.turn(graphql=False)  # the fourth REST request: until the one sent at 0 is 60 s old
    assert clock.sleeps == [58.0]
    assert clock.now == 60.0
    pacer.turn(graphql=False)  # then the one sent at 1
    assert clock.sleeps == [58.0, 1.0]
    pacer.turn(graphql=True)  # GraphQL's two were sent at 2: gone from the window at 62
    assert clock.sleeps == [58.0, 1.0, 1.0]
    assert pacer.waited == 60.0


def test_response_seconds_past_the_minutes_allowance_hold_the_next_request() -> None:
    clock = Clock()
    pacer = _pacer(clock, response_seconds=90.0, graphql_response_seconds=60.0)
    clock.now = 10.0
    pacer.spent(50.0, graphql=False)
    clock.now = 20.0
    pacer.spent(45.0, graphql=True)  # 95 s in the window: past 90
    pacer.turn(graphql=False)
    assert clock.sleeps == [50.0]  # until the 50 s answered at 10 leave it, at 70
    assert clock.now == 70.0
    pacer.spent(20.0, graphql=True)  # GraphQL: 65 s now, past its 60
    pacer.turn(graphql=False)  # REST still fits the 90 s of both together (65)
    assert clock.sleeps == [50.0]
    pacer.turn(graphql=True)  # GraphQL waits for the 45 s answered at 20 to leave, at 80
    assert clock.sleeps == [50.0, 10.0]
    assert clock.now == 80.0


@pytest.mark.parametrize(
    ("mode", "api_url", "paced"),
    [
        ("auto", "https://api.github.com", True),
        ("auto", "https://ghe.example/api/v3", False),  # the administrator's limits, off by default
        ("auto", "http://127.0.0.1:8080", False),
        ("on", "https://ghe.example/api/v3", True),
        ("off", "https://api.github.com", False),
    ],
)
def test_githubs_limits_apply_on_github_com_unless_the_settings_say_otherwise(
    mode: str, api_url: str, paced: bool
) -> None:
    assert secondary_limits(mode, api_url) == (GITHUB_COM if paced else None)
    assert SecondaryLimits(900, 2_000, 90.0, 60.0) == GITHUB_COM  # GitHub's documented figures
