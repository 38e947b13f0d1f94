"""GitHub's plain requests (trees at a commit, GraphQL, /rate_limit) go straight to urllib3's
pool (transport.DirectSender) instead of through requests: every rule of the transport still
holds for them, each shown on a tree read against FakeGitHub, with the next read on the same
connection pool unaffected: the request deadline ends a slow answer, the answer size limit
refuses a gzip bomb as it streams in, a cut-off body is a failure worth a retry, named as
requests names it, and the token never leaves in a message."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crawler.upstream.http import MemoryCache
from crawler.upstream.sources.github import GitHubSettings
from crawler.upstream.sources.github.api import GitHubApi, GitHubError
from crawler_fakes.faults import FaultPlan, FaultRule
from crawler_fakes.github import FakeGitHub, FakeRepo, GitHubState

TOKEN = "ghp_plain_requests_token_0123456789abcdef"
SLOW, FAST = "a" * 40, "b" * 40


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    repos = [
        FakeRepo(owner="org", name="slow", id=1, head_sha=SLOW, license_text="MIT text"),
        FakeRepo(owner="org", name="fast", id=2, head_sha=FAST, license_text="MIT text"),
    ]
    with FakeGitHub(GitHubState(repos=repos), token=TOKEN) as server:
        yield server


def _api(github: FakeGitHub, rule: FaultRule, **settings: object) -> GitHubApi:
    github.faults = FaultPlan(rules=[rule])
    return GitHubApi(
        github.base_url, TOKEN, MemoryCache(),
        GitHubSettings(retry_base_delay=0, **settings),  # type: ignore[arg-type]
        deadline=0.5, sleep=lambda _s: None,
    )  # fmt: skip


def _tree(api: GitHubApi, name: str, sha: str) -> list[str]:
    answer = api.get_json(f"/repos/org/{name}/git/trees/{sha}?recursive=1", immutable=True)
    return [entry["path"] for entry in answer.data["tree"]]


def _failure(api: GitHubApi) -> str:
    with pytest.raises(GitHubError) as caught:
        _tree(api, "slow", SLOW)
    assert TOKEN not in str(caught.value)
    assert _tree(api, "fast", FAST) == ["LICENSE"]  # the next read is unaffected
    return str(caught.value)


def test_the_request_deadline_ends_a_slow_tree(github: FakeGitHub) -> None:
    rule = FaultRule("delay", path="/trees/" + SLOW, delay=3.0)
    api = _api(github, rule, max_retries=0)
    try:
        assert _failure(api) == (
            "no answer from GitHub: no complete answer within the request deadline "
            "(DeadlineExceeded) (gave up after 1 attempt, 0.0s of waiting)"
        )
    finally:
        api.close()
    assert rule.fired == 1


def test_a_gzip_bomb_tree_is_refused_past_the_size_limit(github: FakeGitHub) -> None:
    rule = FaultRule("gzip_bomb", path="/trees/" + SLOW, size=2**26)  # 64 KiB gzipped
    api = _api(github, rule, max_retries=3, answer_size_limit=2**20)
    try:
        assert _failure(api) == (
            "GitHub's answer is larger than the answer size limit of 1048576 bytes once "
            "decompressed (stopped reading; raise github.answer_size_limit in sources.yaml if "
            "it is legitimate)"
        )
    finally:
        api.close()
    assert rule.fired == 1  # refused, not retried


def test_a_cut_off_tree_is_retried_and_named_as_requests_names_it(github: FakeGitHub) -> None:
    rule = FaultRule("truncate", path="/trees/" + SLOW, times=2)
    api = _api(github, rule, max_retries=1)
    try:
        assert _failure(api) == (
            "GitHub's answer was cut off (ChunkedEncodingError) "
            "(gave up after 2 attempts, 0.0s of waiting)"
        )
        assert api.stats.retries == 1
    finally:
        api.close()
    assert rule.fired == 2
