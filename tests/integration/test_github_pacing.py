"""GitHub's secondary limits kept to before they are met: the 901st REST request of a minute
waits for the first to be a minute old, a query does not wait behind REST's points, and a
minute whose answers took GitHub's 90 s of server time holds the next request.

Real HTTP to the GitHub-shaped fake on loopback; the client's clock is the test's (it moves
when the client sleeps, and when the fake says an answer took long), so nothing waits a minute.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crawler.upstream.http import MemoryCache
from crawler.upstream.sources.github import GitHubSettings
from crawler.upstream.sources.github.api import GitHubApi
from crawler.upstream.sources.github.queries import batch_query
from crawler_fakes.github import FakeGitHub, FakeRepo, GitHubState

TOKEN = "ghp_pacing_test_token"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0
        self.sleeps: list[tuple[float, int]] = []  # (seconds, requests the fake had seen)
        self.server: FakeGitHub | None = None

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert self.server is not None
        self.sleeps.append((round(seconds, 6), len(self.server.requests)))
        self.now += seconds


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    repo = FakeRepo(owner="org", name="p0", id=1, head_sha="a" * 40)
    with FakeGitHub(GitHubState(repos=[repo]), token=TOKEN) as server:
        yield server


def _api(github: FakeGitHub, clock: Clock, mode: str = "on") -> GitHubApi:
    clock.server = github
    settings = GitHubSettings(secondary_limits=mode)  # type: ignore[arg-type]
    return GitHubApi(github.base_url, TOKEN, MemoryCache(), settings,
                     sleep=clock.sleep, clock=clock)  # fmt: skip


def test_the_901st_rest_request_of_a_minute_waits_and_a_query_does_not(
    github: FakeGitHub,
) -> None:
    """Fails without the pacer: all 901 requests go at once (no sleep at all), past GitHub's
    900 REST points a minute."""
    clock = Clock()
    api = _api(github, clock)
    try:
        for _ in range(900):
            assert api.get_json("/repos/org/p0").status == 200
        query = batch_query(["org/p0"], [None], GitHubSettings())
        status, doc, _message = api.post_graphql(query)  # GraphQL has points of its own
        assert status == 200 and doc is not None and "errors" not in doc
        assert clock.sleeps == []
        assert api.get_json("/repos/org/p0").status == 200
        # it waited the whole minute (the clock did not move while the 900 went), and was
        # sent only then: the fake had seen 901 requests when it slept
        assert clock.sleeps == [(60.0, 901)]
        assert len(github.requests) == 902
        assert api.pacer is not None and api.pacer.waited == 60.0
    finally:
        api.close()


def test_a_minute_of_slow_answers_holds_the_next_request_until_it_has_passed(
    github: FakeGitHub,
) -> None:
    """GitHub allows 90 s of server time a minute and says to estimate it by response time:
    an answer that took 95 s (the fake moves the client's clock as it answers) holds the next
    request until that answer is a minute old."""
    clock = Clock()
    api = _api(github, clock)

    def slow(method: str, target: str, body: bytes) -> None:
        if target == "/repos/org/p0/releases":
            clock.now += 95.0

    github.on_request = slow
    try:
        assert api.get_json("/repos/org/p0/releases", expect=list).status == 200
        assert clock.sleeps == []
        assert api.get_json("/repos/org/p0").status == 200
        assert clock.sleeps == [(60.0, 1)]  # the 95 s ended at +95: gone from the window at +155
        assert api.get_json("/repos/org/p0").status == 200
        assert clock.sleeps == [(60.0, 1)]
    finally:
        api.close()


def test_an_enterprise_server_or_the_fake_is_not_paced_unless_asked(github: FakeGitHub) -> None:
    clock = Clock()
    api = _api(github, clock, mode="auto")  # 127.0.0.1 is not api.github.com
    try:
        assert api.pacer is None
        for _ in range(901):
            api.get_json("/repos/org/p0")
        assert clock.sleeps == []
    finally:
        api.close()
