"""GitHub's secondary rate limits, kept to before they are met.

GitHub documents them per minute (REST docs, "Rate limits for the REST API", "About secondary
rate limits"): at most 900 points to REST endpoints and 2,000 to the GraphQL endpoint (a GET
or a query without a mutation is one point), and at most 90 seconds of server CPU time per 60
seconds of real time, no more than 60 of them GraphQL, which GitHub says to estimate by the
total response time of one's requests. A client that meets them is answered 403 or 429 with
``retry-after`` (api.py then pauses every worker), and GitHub warns that an integration that
keeps meeting them may be banned. A first audit sends one tree read per repository: at 8 in
flight, a few thousand a minute, so without pacing it would pass the REST limit after its
first 900 and live on retry-after.

``Pacer.turn`` waits until the request fits the last 60 seconds; ``Pacer.spent`` counts its
response time when it is answered. What a request spent is known only when it ends, so the
requests in flight (at most ``github.concurrency``) may carry the response seconds past the
limit by their own length; the points never pass it.

On by default for api.github.com only: GitHub Enterprise Server's limits are set by its
administrator and off unless they are (``github.secondary_limits``).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

WINDOW = 60.0  # seconds: every limit is per minute


@dataclass(frozen=True)
class SecondaryLimits:
    rest_points: int = 900
    graphql_points: int = 2_000
    response_seconds: float = 90.0  # REST and GraphQL together
    graphql_response_seconds: float = 60.0


GITHUB_COM = SecondaryLimits()


def secondary_limits(mode: str, api_url: str) -> SecondaryLimits | None:
    """The limits to pace to for ``github.secondary_limits`` (auto, on, off) and this API."""
    if mode == "off":
        return None
    if mode == "on" or urlsplit(api_url).hostname == "api.github.com":
        return GITHUB_COM
    return None


class Pacer:
    """What REST and GraphQL requests spent in the last minute, shared by every worker."""

    def __init__(
        self,
        limits: SecondaryLimits,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.limits = limits
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        # send times, by kind; (end time, seconds, graphql) of each answered request
        self._sent: dict[bool, deque[float]] = {False: deque(), True: deque()}
        self._spent: deque[tuple[float, float, bool]] = deque()
        self._seconds = {False: 0.0, True: 0.0}  # response seconds in the window, by kind
        self.waited = 0.0  # seconds spent waiting for a turn, all workers together

    def turn(self, *, graphql: bool) -> None:
        """Wait until one more request of this kind fits the last minute, and count it."""
        while True:
            with self._lock:
                now = self._clock()
                wait = self._wait(now, graphql)
                if wait <= 0:
                    self._sent[graphql].append(now)
                    return
                self.waited += wait
            self._sleep(wait)

    @contextmanager
    def timed(self, *, graphql: bool) -> Iterator[None]:
        """Count the response time of the request sent inside, answered or not."""
        started = self._clock()
        try:
            yield
        finally:
            self.spent(self._clock() - started, graphql=graphql)

    def spent(self, seconds: float, *, graphql: bool) -> None:
        """Count an answered request's response time (GitHub's estimate of its server time)."""
        with self._lock:
            self._spent.append((self._clock(), seconds, graphql))
            self._seconds[graphql] += seconds

    def _wait(self, now: float, graphql: bool) -> float:
        """Seconds until a request of this kind fits (0 when it does now)."""
        start = now - WINDOW
        for sent in self._sent.values():
            while sent and sent[0] <= start:
                sent.popleft()
        while self._spent and self._spent[0][0] <= start:
            _, seconds, kind = self._spent.popleft()
            self._seconds[kind] -= seconds
        limits = self.limits
        points = self._sent[graphql]
        waits = [0.0]
        if len(points) >= (limits.graphql_points if graphql else limits.rest_points):
            waits.append(points[0] - start)  # when the oldest point leaves the window
        over_total = self._seconds[False] + self._seconds[True] - limits.response_seconds
        over_graphql = (
            self._seconds[True] - limits.graphql_response_seconds if graphql else -math.inf
        )
        if over_total >= 0 or over_graphql >= 0:
            waits.append(self._until_under(start, over_total, over_graphql))
        return max(waits)

    def _until_under(self, start: float, over_total: float, over_graphql: float) -> float:
        """Seconds until enough answered requests leave the window to bring the response
        seconds under both limits."""
        for ended, seconds, kind in self._spent:
            over_total -= seconds
            if kind:
                over_graphql -= seconds
            if over_total < 0 and over_graphql < 0:
                return ended - start
        return WINDOW  # cannot happen while the window holds what it counted
