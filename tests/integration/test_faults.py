"""Fault injection, retries, rate budgets and GraphQL batching, over real HTTP on loopback.

Every audit talks to ``FakeGitHub`` and writes to a real database (SQLite and PostgreSQL via
the ``db_url`` fixture). ``sleep`` is a list's ``append``: waits are recorded, never slept.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import AuditOutcome, run_audit
from crawler.config import Config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler_fakes import github_graphql
from crawler_fakes.github import (
    FakeGitHub,
    FakeRelease,
    FakeRepo,
    FakeTag,
    FaultPlan,
    FaultRule,
    GitHubState,
)
from tests.support.audits import github_config, kinds, project_statuses

TOKEN = "ghp_faults_token_4f1d9c2b7e6a5d3c1b0a9f8e"
MIT = reference_text("MIT")
APACHE = reference_text("Apache-2.0")
Change = tuple[str, str]


def _stamp(day: int) -> str:
    return f"2026-10-{day:02d}T10:00:00Z"


def _release(tag: str, day: int) -> FakeRelease:
    return FakeRelease(tag=tag, name=tag, published_at=_stamp(day), created_at=_stamp(day))


def _repo(
    index: int,
    *,
    releases: tuple[tuple[str, int], ...] = (),
    tags: tuple[tuple[str, int], ...] = (),
    license_text: str | None = MIT,
) -> FakeRepo:
    apache = license_text == APACHE
    repo = FakeRepo(
        owner="org", name=f"p{index}", id=100 + index,
        license_key=None if license_text is None else "apache-2.0" if apache else "mit",
        spdx_id=None if license_text is None else "Apache-2.0" if apache else "MIT",
        license_name=None if license_text is None else "Apache License 2.0" if apache
        else "MIT License",
        license_path=None if license_text is None else "LICENSE",
        license_text=license_text,
        head_sha=f"{index:x}" * 40, head_date=_stamp(1),
        tree=[("src/main.py", "5" * 40)],
    )
    for tag, day in releases:
        repo.releases.append(_release(tag, day))
    for n, (tag, day) in enumerate(tags):
        repo.tags.append(FakeTag(tag, f"{index:x}{n:x}" * 20, _stamp(day)))
    return repo


class Auditor:
    """One database, one fake GitHub, and the sleeps every audit asked for."""

    def __init__(self, server: FakeGitHub, db_url: str, tmp: Path, token: str | None) -> None:
        self.server = server
        self.store = Store(db_url)
        self.reports = tmp / "reports"
        self.env = server.env(token)
        self.sleeps: list[float] = []

    def audit(self, config: Config) -> AuditOutcome:
        self.sleeps.clear()
        self.server.reset_log()
        outcome = run_audit(config, self.store, self.reports, env=self.env,
                            sleep=self.sleeps.append)
        validate_report(outcome.report.as_json())
        return outcome

    def paths(self, status: int | None = None) -> list[str]:
        return [r.path for r in self.server.requests
                if r.path != "/rate_limit" and (status is None or r.status == status)]


@pytest.fixture(params=["rest", "graphql"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make(db_url: str, tmp_path: Path) -> Iterator[Callable[..., Auditor]]:
    """``make(state, mode, **FakeGitHub options)``: a started server and an Auditor on it."""
    opened: list[tuple[FakeGitHub, Auditor]] = []

    def factory(state: GitHubState, mode: str, **options: Any) -> Auditor:
        server = FakeGitHub(state, token=TOKEN, **options).start()
        auditor = Auditor(server, db_url, tmp_path, TOKEN if mode == "graphql" else None)
        opened.append((server, auditor))
        return auditor

    yield factory
    for server, auditor in opened:
        auditor.store.close()
        server.stop()


# --------------------------------------------------------------------------- fault injection


def _before() -> GitHubState:
    return GitHubState(repos=[
        _repo(0, releases=(("v1.0.0", 1), ("v1.1.0", 5))),
        _repo(1, releases=(("v2.0.0", 2),)),
        _repo(2, tags=(("v0.1.0", 1), ("v0.2.0", 3)), license_text=APACHE),
        _repo(3, releases=(("v3.0.0", 3),), license_text=APACHE),
        _repo(4, releases=(("v0.9.0", 4),)),
        _repo(5, releases=(("v5.0.0", 5),)),
        _repo(6, tags=(("r1", 2),)),
        _repo(7, releases=(("v7.0.0", 6),)),
    ])


def _after() -> GitHubState:
    state = _before()
    p0, _, p2, _, p4, p5, _, p7 = state.repos
    p0.releases.append(_release("v1.2.0", 20))
    p0.head_sha, p0.head_date = "a0" * 20, _stamp(20)
    p2.tags.append(FakeTag("v0.3.0", "b2" * 20, _stamp(21)))
    p2.head_sha, p2.head_date = "b2" * 20, _stamp(21)
    p4.license_text = MIT.replace("MIT License", "MIT License (Expat)")
    p5.releases.append(_release("v5.1.0", 22))
    p7.archived = True
    return state


TRUE_CHANGES: set[Change] = {
    ("p0", "new_release"),
    ("p2", "new_tag"),
    ("p4", "license_text_changed"),
    ("p5", "new_release"),
    ("p7", "repo_archived"),
}
FAULT_SETTINGS = "graphql_batch: 4, retry_base_delay: 0.5, max_retries: 4, max_retry_wait: 60"


def _backoff_or(exact: float, sleeps: list[float], base: float, retries: int) -> bool:
    """Every sleep is ``exact`` or an exponential backoff step with jitter below ``base``."""
    steps = [base * 2**k for k in range(retries)]
    return all(s == exact or any(lo <= s < lo + base for lo in steps) for s in sleeps)


def test_faults_never_become_findings_and_the_next_good_audit_catches_up(
    make: Callable[..., Auditor], mode: str
) -> None:
    auditor = make(_before(), mode, unauth_limit=5000)
    config = github_config(8, FAULT_SETTINGS)
    first = auditor.audit(config)
    assert first.exit_code == 0
    assert kinds(first.report) == [(f"p{i}", "project_added") for i in range(8)]

    auditor.server.set_state(_after())
    # one project fails for good: by REST its license request (the file the tree's root
    # license rule chose); with a token (GraphQL batches, license texts by GraphQL) its tree,
    # which is REST
    broken, broken_path = ("p4", r"^/repos/org/p4/(?:license$|contents/)")
    if mode == "graphql":
        broken, broken_path = ("p0", r"^/repos/org/p0/git/trees/")
    auditor.server.faults = FaultPlan(
        rates={"status_500": 0.10, "reset": 0.05},
        rules=[
            FaultRule("status_500", path=broken_path, times=99),
            FaultRule("secondary_limit", path=r"^/graphql$|^/repos/org/p1$", retry_after=3),
            FaultRule("truncate", path=r"^/graphql$|^/repos/org/p3/releases"),
            FaultRule("html_200", path=r"^/repos/org/p0/git/trees/|^/repos/org/p6/tags"),
            FaultRule("reset", path=r"^/repos/org/p2/git/trees/|^/repos/org/p5$", times=2),
        ],
        seed=7,
    )
    faulty = auditor.audit(config)
    fired = {r.fault for r in auditor.server.requests if r.fault}
    assert fired >= {"status_500", "reset", "secondary_limit", "truncate"}
    assert sum(1 for r in auditor.server.requests if r.fault == "reset") >= 2
    assert auditor.sleeps.count(3.0) == 1  # the secondary limit's retry-after, exactly
    assert _backoff_or(3.0, auditor.sleeps, base=0.5, retries=4)

    report = faulty.report.as_json()
    statuses = project_statuses(report)
    errored = {name for name, status in statuses.items() if status == "error"}
    assert errored == {broken}, report["errors"]
    assert faulty.exit_code == 1 and faulty.status == "partial"
    [error] = report["errors"]
    assert error["error"].startswith("HTTP 500 from GitHub (gave up after 5 attempts, ")
    reported = set(kinds(report))
    assert reported <= TRUE_CHANGES  # no false change
    assert not {project for project, _ in reported} & errored  # an error is never a finding
    assert reported == {c for c in TRUE_CHANGES if c[0] not in errored}
    rows = {p["name"]: p for p in report["projects"]}
    carried = {"p4": ("v0.9.0", "MIT"), "p0": ("v1.1.0", "MIT")}[broken]
    assert (rows[broken]["version"], rows[broken]["license"]) == carried  # the last good state

    auditor.server.faults = None
    clean = auditor.audit(config)
    assert clean.exit_code == 0
    assert clean.report.as_json()["audit"]["baseline_audit_id"] == faulty.audit_id
    assert set(kinds(clean.report)) == {c for c in TRUE_CHANGES if c[0] in errored}
    assert set(kinds(clean.report)) | reported == TRUE_CHANGES

    quiet = auditor.audit(config)
    assert quiet.report.as_json()["changes"] == []


# ----------------------------------------------------------------------------------- retries


def _three() -> GitHubState:
    return GitHubState(repos=[_repo(0, releases=(("v1.0.0", 1),)),
                              _repo(1, releases=(("v2.0.0", 2),)),
                              _repo(2, releases=(("v3.0.0", 3),))])


@pytest.mark.parametrize(
    ("max_retry_wait", "times", "sleeps", "outcome"),
    [
        (60.0, 1, [7.0], "ok"),  # waits exactly what retry-after says
        # a longer wait than max_retry_wait is not cut short and retried into the limit: GitHub
        # is not asked again this audit (issue 38 item 6)
        (5.0, 1, [], "deferred"),
        (5.0, 2, [], "deferred"),
    ],
)
def test_secondary_rate_limit_waits_retry_after_bounded_by_max_retry_wait(
    make: Callable[..., Auditor], mode: str, max_retry_wait: float, times: int,
    sleeps: list[float], outcome: str,
) -> None:
    auditor = make(_three(), mode)
    path = r"^/graphql$" if mode == "graphql" else r"^/repos/org/p1$"
    auditor.server.faults = FaultPlan(
        rules=[FaultRule("secondary_limit", path=path, times=times, retry_after=7)]
    )
    config = github_config(
        3, f"retry_base_delay: 1, max_retries: 3, max_retry_wait: {max_retry_wait}"
    )
    result = auditor.audit(config)
    assert auditor.sleeps == sleeps
    limited = [r for r in auditor.server.requests if r.fault == "secondary_limit"]
    assert [r.status for r in limited] == [403] * (1 if outcome == "deferred" else times)
    affected = {"p0", "p1", "p2"} if mode == "graphql" else {"p1"}
    statuses = project_statuses(result.report)
    assert {statuses[p] for p in affected} == {outcome}
    # the others may have been read before GitHub was stopped (the workers run side by side)
    assert {statuses[p] for p in {"p0", "p1", "p2"} - affected} <= {"ok", outcome}
    if outcome == "deferred":
        assert result.report.as_json()["errors"] == []
    else:
        assert result.report.as_json()["errors"] == [] and result.exit_code == 0


@pytest.mark.parametrize(
    ("max_retry_wait", "attempts"),
    [(60.0, 4), (5.0, 3)],  # 1+2+4 s of backoff fit in 60 s; the third wait breaks 5 s
)
def test_server_errors_back_off_exponentially_then_fail_only_that_project(
    make: Callable[..., Auditor], mode: str, max_retry_wait: float, attempts: int
) -> None:
    auditor = make(_three(), mode)
    # with a token, the repository facts and license texts come by GraphQL; the tree is REST
    path = r"^/repos/org/p1/git/trees/" if mode == "graphql" else r"^/repos/org/p1$"
    auditor.server.faults = FaultPlan(rules=[FaultRule("status_500", path=path, times=99)])
    config = github_config(
        3, f"retry_base_delay: 1, max_retries: 3, max_retry_wait: {max_retry_wait}"
    )
    result = auditor.audit(config)

    hits = [r for r in auditor.server.requests if r.fault == "status_500"]
    assert len(hits) == attempts and {r.status for r in hits} == {500}
    sleeps = auditor.sleeps
    assert len(sleeps) == attempts - 1
    for k, slept in enumerate(sleeps):  # base * 2**k plus jitter in [0, base)
        assert 2**k <= slept < 2**k + 1
    assert project_statuses(result.report) == {"p0": "ok", "p1": "error", "p2": "ok"}
    [error] = result.report.as_json()["errors"]
    assert error["project"] == "p1"
    assert error["error"] == (
        f"HTTP 500 from GitHub (gave up after {attempts} attempts, "
        f"{sum(sleeps):.1f}s of waiting)"
    )
    assert error["url"] == auditor.server.base_url + (
        f"/repos/org/p1/git/trees/{'1' * 40}?recursive=1" if mode == "graphql" else "/repos/org/p1"
    )
    assert result.exit_code == 1 and result.status == "partial"
    # issue 20: added when first read; p1 was not
    assert kinds(result.report) == [("p0", "project_added"), ("p2", "project_added")]


# ---------------------------------------------------------------------------- truncated, HTML


@pytest.mark.parametrize(("kind", "message"), [
    ("truncate", "GitHub's answer was cut off"),
    ("html_200", "GitHub answered an HTML page instead of JSON"),
])
def test_truncated_json_and_html_pages_are_retried_then_reported(
    make: Callable[..., Auditor], kind: str, message: str
) -> None:
    auditor = make(_three(), "rest")
    # one worker: the order of faulted requests and of the waits is part of what is checked
    config = github_config(3, "retry_base_delay: 0.5, max_retries: 2, concurrency: 1")
    auditor.server.faults = FaultPlan(rules=[
        FaultRule(kind, path=r"^/repos/org/p1/releases"),  # once: the retry gets through
        FaultRule(kind, path=r"^/repos/org/p2/releases", times=99),  # every time
    ])
    result = auditor.audit(config)
    assert project_statuses(result.report) == {"p0": "ok", "p1": "ok", "p2": "error"}
    faulted = [r.path.split("?")[0] for r in auditor.server.requests if r.fault]
    assert faulted == ["/repos/org/p1/releases"] + ["/repos/org/p2/releases"] * 3
    p1_wait, *p2_waits = auditor.sleeps
    assert 0.5 <= p1_wait < 1.0 and 0.5 <= p2_waits[0] < 1.0 and 1.0 <= p2_waits[1] < 1.5
    [error] = result.report.as_json()["errors"]
    assert message in error["error"]
    assert error["error"].endswith(
        f"(gave up after 3 attempts, {sum(p2_waits):.1f}s of waiting)"
    )
    assert error["url"] == auditor.server.base_url + "/repos/org/p2/releases?per_page=10"
    assert result.exit_code == 1



def test_truncated_graphql_answer_is_retried_then_reported(
    make: Callable[..., Auditor],
) -> None:
    auditor = make(_three(), "graphql")
    config = github_config(3, "retry_base_delay: 0.5, max_retries: 2")
    auditor.server.faults = FaultPlan(rules=[FaultRule("truncate", path=r"^/graphql$")])
    once = auditor.audit(config)
    assert project_statuses(once.report) == {"p0": "ok", "p1": "ok", "p2": "ok"}
    auditor.server.faults = FaultPlan(rules=[FaultRule("truncate", path=r"^/graphql$", times=9)])
    always = auditor.audit(config)
    assert project_statuses(always.report) == {"p0": "error", "p1": "error", "p2": "error"}
    assert {e["error"].split(" (gave up")[0] for e in always.report.as_json()["errors"]} == {
        "GitHub's answer was cut off (ChunkedEncodingError)"
    }


def test_html_graphql_answer_is_reported_as_html(make: Callable[..., Auditor]) -> None:
    """Regression: post_graphql said only 'GraphQL answer was not valid JSON'."""
    auditor = make(_three(), "graphql")
    auditor.server.faults = FaultPlan(rules=[FaultRule("html_200", path=r"^/graphql$", times=9)])
    result = auditor.audit(github_config(3, "retry_base_delay: 0, max_retries: 2"))
    assert project_statuses(result.report) == {"p0": "error", "p1": "error", "p2": "error"}
    assert {e["error"] for e in result.report.as_json()["errors"]} == {
        "GitHub answered an HTML page instead of JSON (gave up after 3 attempts, "
        "0.0s of waiting)"
    }


# ------------------------------------------------------------------------------------ budget


def _with_new_releases(state: GitHubState, day: int) -> GitHubState:
    for number, repo in enumerate(state.repos):
        repo.releases.append(_release(f"v9.{day}.{number}", day))
    return state


def _five(*, own_license_texts: bool = False) -> GitHubState:
    """Five repositories with a release each; MIT licensed, with one shared license blob, or
    (``own_license_texts``) each naming its own copyright holder, so five distinct blobs."""
    return GitHubState(
        repos=[
            _repo(
                i,
                releases=((f"v{i}.0.0", i + 1),),
                license_text=reference_text("MIT", f"2026 Org p{i}") if own_license_texts else MIT,
            )
            for i in range(5)
        ]
    )


def test_a_spent_anonymous_budget_defers_the_rest_and_the_next_audit_checks_them(
    make: Callable[..., Auditor],
) -> None:
    auditor = make(_five(), "rest", unauth_limit=60)
    config = github_config(5, "retry_base_delay: 0, concurrency: 1")  # the exact order is checked
    auditor.audit(config)

    auditor.server.set_state(_with_new_releases(_five(), 20))
    # 7 requests: p0 and p1 take three each (repo, releases, license), p2 gets its repo only
    auditor.server.set_rate_limit(7, authenticated=False)
    spent = auditor.server.points_used.core_anonymous
    short = auditor.audit(config)
    report = short.report.as_json()
    assert project_statuses(report) == {"p0": "ok", "p1": "ok", "p2": "deferred", "p3": "deferred",
                                 "p4": "deferred"}
    assert report["summary"]["deferred"] == 3 and report["summary"]["errors"] == 0
    assert report["summary"]["checked"] == 2
    assert short.status != "failed" and short.exit_code == 0
    assert report["errors"] == []
    assert kinds(report) == [("p0", "new_release"), ("p1", "new_release")]
    notes = {p["name"]: p["note"] for p in report["projects"]}
    assert notes["p2"].startswith("not checked this audit: rate budget nearly spent (0 left of 60")
    rows = {p["name"]: p["version"] for p in report["projects"]}
    assert rows == {"p0": "v9.20.0", "p1": "v9.20.1", "p2": "v2.0.0", "p3": "v3.0.0",
                    "p4": "v4.0.0"}  # deferred projects keep their last good state
    assert auditor.paths() == [
        "/repos/org/p0", "/repos/org/p0/releases?per_page=10", "/repos/org/p0/license",
        "/repos/org/p1", "/repos/org/p1/releases?per_page=10", "/repos/org/p1/license",
        "/repos/org/p2",
    ]
    assert auditor.server.points_used.core_anonymous == spent + 7

    auditor.server.set_rate_limit(60, authenticated=False)
    later = auditor.audit(config)
    assert set(project_statuses(later.report).values()) == {"ok"}
    assert later.report.as_json()["summary"]["deferred"] == 0
    assert kinds(later.report) == [("p2", "new_release"), ("p3", "new_release"),
                                    ("p4", "new_release")]
    assert later.exit_code == 0


def test_a_spent_graphql_budget_defers_the_remaining_batches(
    make: Callable[..., Auditor],
) -> None:
    auditor = make(_five(), "graphql")
    config = github_config(5, "graphql_batch: 2, retry_base_delay: 0, concurrency: 1")
    auditor.audit(config)
    auditor.server.set_state(_with_new_releases(_five(), 20))
    auditor.server.set_rate_limit(1, resource="graphql")  # one batch of two
    short = auditor.audit(config)
    assert project_statuses(short.report) == {"p0": "ok", "p1": "ok", "p2": "deferred",
                                       "p3": "deferred", "p4": "deferred"}
    assert short.exit_code == 0 and short.report.as_json()["summary"]["deferred"] == 3
    assert kinds(short.report) == [("p0", "new_release"), ("p1", "new_release")]
    assert [r.path for r in auditor.server.requests] == ["/rate_limit", "/graphql"]
    auditor.server.set_rate_limit(5000, resource="graphql")
    later = auditor.audit(config)
    assert kinds(later.report) == [("p2", "new_release"), ("p3", "new_release"),
                                    ("p4", "new_release")]


# ----------------------------------------------------------------------------------- GraphQL


def test_graphql_batches_shrink_when_github_times_out(
    make: Callable[..., Auditor], graphql_sizes: list[int]
) -> None:
    """Regression: every 5xx was retried at the same size, so a 502 never shrank the batch."""
    sizes = graphql_sizes
    auditor = make(_five(own_license_texts=True), "graphql", max_graphql_aliases=2)
    result = auditor.audit(github_config(5, "graphql_batch: 8, retry_base_delay: 0"))
    assert project_statuses(result.report) == {f"p{i}": "ok" for i in range(5)}
    graphql = [r.status for r in auditor.server.requests if r.path == "/graphql"]
    # the batch of repository facts, then the batch of license texts: each shrinks the same way
    assert (graphql, sizes) == ([502, 200, 200, 200] * 2, [5, 2, 2, 1] * 2)
    assert {p["name"]: p["license"] for p in result.report.as_json()["projects"]} == {
        f"p{i}": "MIT" for i in range(5)
    }


def test_graphql_batches_shrink_on_a_timeout_answered_with_200(
    make: Callable[..., Auditor], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub also reports a timeout as HTTP 200 with "Something went wrong" and no data."""
    sizes: list[int] = []
    real = github_graphql.handle

    def handle(fake: FakeGitHub, raw: bytes) -> tuple[int, dict[str, Any] | bytes, int]:
        sizes.append(json.loads(raw)["query"].count(": repository("))
        if sizes[-1] > 2:
            return 200, github_graphql.TIMEOUT_BODY, 0
        return real(fake, raw)

    monkeypatch.setattr(github_graphql, "handle", handle)
    auditor = make(_five(own_license_texts=True), "graphql")
    result = auditor.audit(github_config(5, "graphql_batch: 8, retry_base_delay: 0"))
    assert project_statuses(result.report) == {f"p{i}": "ok" for i in range(5)}
    assert sizes == [5, 2, 2, 1] * 2  # facts, then license texts
    assert [r.status for r in auditor.server.requests if r.path == "/graphql"] == [200] * 8
    assert auditor.sleeps == []  # shrinking is immediate, not a backoff


def test_a_transient_502_halves_the_batch_and_loses_nothing(
    make: Callable[..., Auditor], graphql_sizes: list[int]
) -> None:
    sizes = graphql_sizes
    auditor = make(_five(), "graphql")
    auditor.server.faults = FaultPlan(rules=[FaultRule("status_502", path=r"^/graphql$")])
    # one worker, so that the batch of 4 (not the batch of 1) is the first to meet the fault
    result = auditor.audit(
        github_config(5, "graphql_batch: 4, retry_base_delay: 0, concurrency: 1")
    )
    assert project_statuses(result.report) == {f"p{i}": "ok" for i in range(5)}
    graphql = [r.status for r in auditor.server.requests if r.path == "/graphql"]
    assert graphql == [502, 200, 200, 200, 200]
    # the batch of 4 met the fault before the GraphQL handler; then the one license text the
    # five repositories share (one blob id: asked for once)
    assert sizes == [2, 2, 1, 1]


def test_a_transient_502_on_a_single_repository_batch_is_retried(
    make: Callable[..., Auditor],
) -> None:
    auditor = make(_three(), "graphql")
    auditor.server.faults = FaultPlan(rules=[FaultRule("status_502", path=r"^/graphql$")])
    result = auditor.audit(github_config(3, "graphql_batch: 1, retry_base_delay: 0.5"))
    assert project_statuses(result.report) == {"p0": "ok", "p1": "ok", "p2": "ok"}
    graphql = [r.status for r in auditor.server.requests if r.path == "/graphql"]
    assert graphql == [502, 200, 200, 200, 200]  # 3 batches of one (one retried), 1 of texts
    assert len(auditor.sleeps) == 1 and 0.5 <= auditor.sleeps[0] < 1.0


def test_graphql_not_found_for_one_repository_keeps_the_rest_of_the_batch(
    make: Callable[..., Auditor],
) -> None:
    auditor = make(_three(), "graphql")
    config = github_config(3, "retry_base_delay: 0", "  - name: Ghost\n    repo: org/ghost\n")
    result = auditor.audit(config)
    assert project_statuses(result.report) == {"p0": "ok", "p1": "ok", "p2": "ok", "Ghost": "error"}
    assert result.report.as_json()["errors"] == [{
        "project": "Ghost", "source": "github-graphql", "url": auditor.server.graphql_url,
        "error": "Could not resolve to a Repository with the name 'org/ghost'.",
    }]
    # one batch of facts, one query for the three license texts
    assert [r.path for r in auditor.server.requests].count("/graphql") == 2
    rows = {p["name"]: p["version"] for p in result.report.as_json()["projects"]}
    assert rows == {"p0": "v1.0.0", "p1": "v2.0.0", "p2": "v3.0.0", "Ghost": None}


# ------------------------------------------------------------------------------------ secrets


def test_the_token_never_reaches_logs_or_error_messages(
    make: Callable[..., Auditor], caplog: pytest.LogCaptureFixture
) -> None:
    for name in (None, "github", "urllib3", "crawler"):
        caplog.set_level(logging.DEBUG, logger=name)
    auditor = make(_three(), "graphql")
    auditor.server.faults = FaultPlan(
        rates={"status_500": 0.3, "reset": 0.1},
        rules=[FaultRule("secondary_limit", path="/graphql", retry_after=2),
               FaultRule("html_200", path="/graphql"),
               FaultRule("truncate", path="/git/trees/"),
               FaultRule("status_500", path="/repos/org/p2/git/trees/", times=99)],
        seed=3,
    )
    config = github_config(3, "retry_base_delay: 0, max_retries: 3")
    outcome = auditor.audit(config)
    assert outcome.report.as_json()["errors"], "the faults must produce at least one error"
    assert any("github" in r.name for r in caplog.records), "PyGithub's debug log is captured"

    wrong = Auditor(auditor.server, auditor.store.url, auditor.reports.parent, TOKEN[::-1])
    denied = wrong.audit(config)  # HTTP 401 for a token GitHub does not know
    wrong.store.close()
    assert {e["error"].split(" (gave up")[0] for e in denied.report.as_json()["errors"]} == {
        "GitHub rejected the token (HTTP 401): check GITHUB_TOKEN"
    }

    texts = [caplog.text, *(r.getMessage() for r in caplog.records),
             *(repr(r.args) for r in caplog.records)]
    for report in (outcome.report.as_json(), denied.report.as_json()):
        texts += [json.dumps(report), *(e["error"] for e in report["errors"])]
    texts.append((auditor.reports / "latest" / "report.md").read_text())
    for secret in (TOKEN, TOKEN[::-1]):
        assert not [t for t in texts if secret in t]


# ---------------------------------------------------------------------- cost of an unchanged run


def test_an_unchanged_graphql_audit_writes_no_new_snapshot(
    make: Callable[..., Auditor],
) -> None:
    """Regression: reused license facts lost their sources, so every snapshot hashed anew."""
    auditor = make(_three(), "graphql")
    config = github_config(3, "retry_base_delay: 0")

    def rows(table: str) -> int:
        with auditor.store.engine.connect() as conn:
            return int(conn.exec_driver_sql(f"select count(*) from {table}").scalar_one())

    auditor.audit(config)
    counts = (rows("snapshots"), rows("observations"))
    auditor.audit(config)
    auditor.audit(config)
    assert (rows("snapshots"), rows("observations")) == counts == (3, 3)


def test_an_unchanged_anonymous_audit_is_answered_only_by_304s(
    make: Callable[..., Auditor],
) -> None:
    """Regression: /license of a repository without one answered 404 every night."""
    state = _three()
    state.repos.append(_repo(3, releases=(("v0.1.0", 1),), license_text=None))
    auditor = make(state, "rest", unauth_limit=5000)
    config = github_config(4, "retry_base_delay: 0")
    first = auditor.audit(config)
    assert first.report.as_json()["projects"][3]["license"] == "none found"
    assert "/repos/org/p3/license" not in auditor.paths()
    again = auditor.audit(config)
    # repo, releases, tree: the tree shows each root license blob unchanged, so no /license
    assert len(auditor.paths()) == 4 * 3
    assert [p for p in auditor.paths() if "/license" in p] == []
    assert [p for p in auditor.paths() if p not in auditor.paths(304)] == []
    licenses = [p["license"] for p in again.report.as_json()["projects"]]
    assert licenses == ["MIT"] * 3 + ["none found"]


def test_truncated_answers_do_not_count_as_an_unreachable_github(
    make: Callable[..., Auditor],
) -> None:
    state = GitHubState(repos=[_repo(i, releases=(("v1.0.0", 1),)) for i in range(5)])
    auditor = make(state, "rest", unauth_limit=5000)
    auditor.server.faults = FaultPlan(
        rules=[FaultRule("truncate", path=r"^/repos/org/p[012]/releases", times=99)]
    )
    result = auditor.audit(github_config(5, "retry_base_delay: 0, max_retries: 1"))
    assert project_statuses(result.report) == {"p0": "error", "p1": "error", "p2": "error",
                                        "p3": "ok", "p4": "ok"}


# ------------------------------------- issue 38 item 6: a secondary limit GitHub asks to respect


def _forty() -> GitHubState:
    return GitHubState(repos=[_repo(i, releases=(("v1.0.0", 1),)) for i in range(40)])


def _limited(auditor: Auditor, retry_after: str | int, times: int = 99) -> list[Any]:
    """Every request to GitHub meets a secondary limit saying ``retry-after: retry_after``."""
    auditor.server.faults = FaultPlan(
        rules=[FaultRule("secondary_limit", path=r"^/(repos|graphql)", times=times,
                         retry_after=retry_after)]
    )  # fmt: skip
    return [r for r in auditor.server.requests if r.fault == "secondary_limit"]


@pytest.mark.parametrize(
    ("retry_after", "asked"),
    [
        ("86400", r"86400s \(until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\), longer than "
                  r"github\.max_retry_wait \(60s\)"),
        ("99999999999999999999", r"99999999999999999999s, longer than github\.max_retry_wait"
                                 r" \(60s\)"),
        ("Wed, 01 Jan 2098 00:00:00 GMT", r"\d+s \(until 2098-01-01T00:00:00Z\), longer than "
                                          r"github\.max_retry_wait \(60s\)"),
        ("-5", r" with retry-after '-5', which is no wait"),
    ],
)
def test_a_secondary_limit_asking_for_a_long_wait_stops_github_for_the_audit(
    make: Callable[..., Auditor], mode: str, retry_after: str, asked: str
) -> None:
    """A 403 with retry-after: 86400 (or huge, negative, an HTTP-date) was waited 60 s and
    retried, once per project: 40 projects took 301 s and sent 80 requests into a limit GitHub
    asked to be respected. Now the first one stops GitHub for this audit, naming the time."""
    import re

    auditor = make(_forty(), mode, unauth_limit=5000)
    config = github_config(40, "concurrency: 1, retry_base_delay: 0")
    auditor.audit(config)
    _limited(auditor, retry_after)
    result = auditor.audit(config)
    limited = [r for r in auditor.server.requests if r.fault == "secondary_limit"]
    assert (len(limited), auditor.sleeps) == (1, [])  # one request met it; nothing waited
    assert auditor.paths() == [limited[0].path]  # and none was sent after it
    report = result.report.as_json()
    assert report["errors"] == [] and set(project_statuses(report).values()) == {"deferred"}
    notes = {p["note"] for p in report["projects"]}
    why = notes.pop().split("; last checked")[0]
    assert notes == set()  # one reason for all forty
    assert re.fullmatch(
        r"not checked this audit: secondary rate limit \(HTTP 403\)(: GitHub asked to wait )?"
        + asked + r"; GitHub is not asked again this audit: the projects left wait for the next",
        why,
    ), why
    assert (result.status, result.exit_code) == ("partial", 1)  # checked nothing (item 5)


def test_a_second_secondary_limit_in_one_audit_stops_github(
    make: Callable[..., Auditor],
) -> None:
    """The first limit (3 s asked) is waited out and its request retried; the second, met by
    another project, stops GitHub: the projects left are deferred, not retried into it."""
    auditor = make(_forty(), "rest", unauth_limit=5000)
    config = github_config(40, "concurrency: 1, retry_base_delay: 0")
    auditor.audit(config)
    auditor.server.faults = FaultPlan(rules=[
        FaultRule("secondary_limit", path=r"^/repos/org/p3$", retry_after=3),
        FaultRule("secondary_limit", path=r"^/repos/org/p7$", retry_after=3),
    ])  # fmt: skip
    result = auditor.audit(config)
    assert auditor.sleeps == [3.0]
    statuses = project_statuses(result.report)
    order = [p["name"] for p in result.report.as_json()["projects"]]
    checked = [n for n in order if statuses[n] == "ok"]
    assert "p3" in checked and "p7" not in checked
    met = [r.path for r in auditor.server.requests if r.fault]
    assert met == ["/repos/org/p3", "/repos/org/p7"]
    assert auditor.paths()[-1] == "/repos/org/p7"  # nothing asked after the second limit
    deferred = [p for p in result.report.as_json()["projects"] if p["status"] == "deferred"]
    assert len(deferred) == 40 - len(checked)
    assert deferred[0]["note"].startswith(
        "not checked this audit: secondary rate limit (HTTP 403) met a second time in this audit "
        "(GitHub asked to wait 3s (until "
    )
