"""Requests to GitHub in flight together: bounded, budget-exact, paused together.

Real HTTP to the GitHub-shaped fake on loopback, a real database (SQLite and PostgreSQL).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import AuditOutcome, run_audit
from crawler.config import Config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler_fakes.github import (
    FakeGitHub,
    FakeRelease,
    FakeRepo,
    FaultPlan,
    FaultRule,
    GitHubState,
)
from tests.support.audits import github_config, project_statuses

TOKEN = "ghp_concurrency_token_0123456789abcdef"
MIT = reference_text("MIT")


def _state(count: int, newest: int = 1) -> GitHubState:
    repos = []
    for i in range(count):
        repo = FakeRepo(
            owner="org", name=f"p{i}", id=500 + i, license_key="mit", spdx_id="MIT",
            license_name="MIT License", license_text=MIT, head_sha=f"{i:040x}",
            head_date="2026-10-01T00:00:00Z",
        )  # fmt: skip
        for n in range(1, newest + 1):
            stamp = f"2026-10-{n:02d}T00:00:00Z"
            repo.releases.append(FakeRelease(f"v{n}.0.0", f"v{n}.0.0", stamp, stamp))
        repos.append(repo)
    return GitHubState(repos=repos)


class Run:
    def __init__(self, server: FakeGitHub, db_url: str, tmp: Path, token: str | None) -> None:
        self.server, self.store, self.tmp = server, Store(db_url), tmp
        self.env = server.env(token)

    def audit(self, config: Config, sleep: Any = lambda _s: None) -> AuditOutcome:
        self.server.reset_log()
        outcome = run_audit(config, self.store, self.tmp / "r", env=self.env, sleep=sleep)
        validate_report(outcome.report.as_json())
        return outcome


@pytest.fixture
def run(db_url: str, tmp_path: Path) -> Iterator[Any]:
    opened: list[tuple[FakeGitHub, Run]] = []

    def factory(state: GitHubState, token: str | None, **options: Any) -> Run:
        server = FakeGitHub(state, token=TOKEN, **options).start()
        opened.append((server, Run(server, db_url, tmp_path, token)))
        return opened[-1][1]

    yield factory
    for server, r in opened:
        r.store.close()
        server.stop()


@pytest.mark.parametrize(("workers", "token"), [(1, None), (4, None), (1, TOKEN), (4, TOKEN)])
def test_requests_in_flight_stay_within_the_configured_concurrency(
    run: Any, workers: int, token: str | None
) -> None:
    r = run(_state(16), token, unauth_limit=5000, latency=0.03)
    outcome = r.audit(github_config(16, f"concurrency: {workers}, graphql_batch: 4"))
    assert set(project_statuses(outcome.report).values()) == {"ok"}
    if workers == 1:
        assert r.server.max_in_flight == 1  # strictly serial, as GitHub's strictest advice asks
    else:
        assert 2 <= r.server.max_in_flight <= workers


def test_a_budget_that_runs_out_mid_flight_overspends_nothing_and_loses_nothing(
    run: Any,
) -> None:
    r = run(_state(30), None, unauth_limit=5000)
    config = github_config(30, "concurrency: 4, retry_base_delay: 0")
    r.audit(config)
    r.server.set_state(_state(30, newest=2))
    r.server.set_rate_limit(40, authenticated=False)
    spent = r.server.points_used.core_anonymous
    short = r.audit(config)
    statuses = project_statuses(short.report)
    checked = sorted(n for n, s in statuses.items() if s == "ok")
    deferred = sorted(n for n, s in statuses.items() if s == "deferred")
    assert set(statuses.values()) == {"ok", "deferred"} and short.report.as_json()["errors"] == []
    assert len(checked) >= 8 and deferred  # the budget ran out with projects still to go
    # nothing over-spent: GitHub never had to refuse a request, the budget was never exceeded
    assert [q.status for q in r.server.requests if q.status in (403, 429)] == []
    assert r.server.points_used.core_anonymous - spent <= 40
    # nothing lost: every checked project reports its new release, every deferred one keeps
    # its last good state, and the next audit (budget back) checks exactly the deferred ones
    assert sorted(c["project"] for c in short.report.as_json()["changes"]) == checked
    short_report = short.report.as_json()
    assert {p["name"]: p["version"] for p in short_report["projects"] if p["name"] in deferred} == {
        n: "v1.0.0" for n in deferred
    }
    r.server.set_rate_limit(5000, authenticated=False)
    later = r.audit(config)
    assert sorted(c["project"] for c in later.report.as_json()["changes"]) == deferred
    assert set(project_statuses(later.report).values()) == {"ok"}


def test_a_graphql_budget_that_runs_out_mid_flight_defers_whole_batches(run: Any) -> None:
    r = run(_state(12), TOKEN)
    config = github_config(12, "concurrency: 4, graphql_batch: 2, retry_base_delay: 0")
    r.audit(config)
    r.server.set_state(_state(12, newest=2))
    r.server.set_rate_limit(3, resource="graphql")  # three batches of two, then nothing
    short = r.audit(config)
    statuses = project_statuses(short.report)
    assert sorted(statuses.values()).count("ok") == 6
    assert sorted(statuses.values()).count("deferred") == 6
    graphql = [q.status for q in r.server.requests if q.path == "/graphql"]
    assert graphql == [200, 200, 200]  # no query sent past the budget, none refused
    assert sorted(c["project"] for c in short.report.as_json()["changes"]) == sorted(
        n for n, s in statuses.items() if s == "ok"
    )


def test_a_secondary_limit_pauses_every_worker_not_just_one(run: Any) -> None:
    """While the worker that met the limit waits out retry-after, no other worker starts a
    request: only those already in flight may still arrive."""
    r = run(_state(24), None, unauth_limit=5000, latency=0.02)
    r.server.faults = FaultPlan(rules=[FaultRule("secondary_limit", path=r"^/repos/org/p2$",
                                                 retry_after=1)])  # fmt: skip
    arrived_during_pause: list[int] = []

    def sleep(seconds: float) -> None:
        before = len(r.server.requests)
        time.sleep(0.4)  # long enough for free workers to send several requests each
        arrived_during_pause.append(len(r.server.requests) - before)

    outcome = r.audit(github_config(24, "concurrency: 4, retry_base_delay: 0"), sleep=sleep)
    assert set(project_statuses(outcome.report).values()) == {"ok"}
    limited = [q for q in r.server.requests if q.fault == "secondary_limit"]
    assert [q.status for q in limited] == [403]
    assert len(arrived_during_pause) == 1
    assert arrived_during_pause[0] <= 3  # at most the other three requests already in flight
