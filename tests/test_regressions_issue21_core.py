"""Issue 21, items 1-6: a partial GitHub answer, oversize answers, a stalled or failing
database, a regex that explodes at compile time, redirects to private addresses.

Every test here failed on the main branch the issue was filed against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from crawler.cli import cli
from crawler.fakes.github import FakeGitHub, FaultPlan, FaultRule, GitHubState
from tests.regression_support import APACHE, repo

TOKEN = "ghp_issue21core0000000000000000000000000"
THREE = (
    "projects:\n"
    "  - name: Alpha\n    repo: org/alpha\n"
    "  - name: Beta\n    repo: org/beta\n"
    "  - name: Gamma\n    repo: org/gamma\n"
)


def _state() -> GitHubState:
    return GitHubState(
        repos=[
            repo("alpha", 1, ("v1.0", "v1.1")),
            repo("beta", 2, ("v2.0",)),
            repo("gamma", 3, ("v3.0", "v3.1"), license_text=APACHE),
        ]
    )


def _audit(
    tmp_path: Path,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    state: GitHubState,
    faults: FaultPlan | None = None,
) -> tuple[Result, dict[str, Any]]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sources.yaml").write_text(THREE)
    with FakeGitHub(state, token=TOKEN, faults=faults) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.delenv("CRAWLER_NOTIFY", raising=False)
        result = CliRunner().invoke(cli, ["audit", "--db", db_url], catch_exceptions=False)
    report = json.loads((tmp_path / "reports" / "latest" / "report.json").read_text())
    return result, report


def _changes(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["project"], c["kind"]) for c in report["changes"]]


# -- item 1: a partial GraphQL answer ------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("releases", None, "(at r0.releases)"),  # GitHub's partial answer: field null + path
        ("releases.nodes", None, "(at r0.releases.nodes)"),
        ("refs", None, "(at r0.refs)"),
        ("licenseInfo", "MIT", "licenseInfo"),  # a wrong type: no error, a bad shape
        ("releases.nodes", [None], "releases.nodes"),
    ],
)
def test_a_partial_graphql_answer_is_an_error_never_a_change(
    tmp_path: Path,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    field: str,
    value: object,
    why: str,
) -> None:
    state = _state()
    first, baseline = _audit(tmp_path, db_url, monkeypatch, state)
    assert first.exit_code == 0, first.output
    assert baseline["errors"] == []

    rule = FaultRule("graphql_partial", path="/graphql", times=999, field=field, value=value)
    result, report = _audit(tmp_path, db_url, monkeypatch, state, FaultPlan(rules=[rule]))
    assert rule.fired >= 1
    assert result.exit_code == 1
    assert _changes(report) == []  # no release_removed, no license_changed, no tag removed
    errors = {e["project"]: e["error"] for e in report["errors"]}
    assert sorted(errors) == ["Alpha", "Beta", "Gamma"]
    assert why in errors["Alpha"]
    statuses = {p["name"]: p["status"] for p in report["projects"]}
    assert statuses == {"Alpha": "error", "Beta": "error", "Gamma": "error"}
    versions = {p["name"]: (p["version"], p["forge_license"]) for p in report["projects"]}
    assert versions == {
        "Alpha": ("v1.1", "MIT"),
        "Beta": ("v2.0", "MIT"),
        "Gamma": ("v3.1", "Apache-2.0"),
    }  # the last good facts, carried

    good, after = _audit(tmp_path, db_url, monkeypatch, state)
    assert good.exit_code == 0, good.output
    assert (_changes(after), after["errors"]) == ([], [])  # nothing "new" the night after


def test_a_repository_answered_in_part_is_asked_again_alone(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch, graphql_sizes: list[int]
) -> None:
    """One repository's releases failed once (not a timeout): only it is asked again, alone,
    and the second answer is whole: no error, no change."""
    state = _state()
    first, _ = _audit(tmp_path, db_url, monkeypatch, state)
    assert first.exit_code == 0, first.output
    rule = FaultRule("graphql_partial", path="/graphql", alias="r1", message="Loading failed")
    graphql_sizes.clear()
    result, report = _audit(tmp_path, db_url, monkeypatch, state, FaultPlan(rules=[rule]))
    assert graphql_sizes[:2] == [3, 1]  # the batch, then Beta alone
    assert rule.fired == 1
    assert result.exit_code == 0, result.output
    assert (_changes(report), report["errors"]) == ([], [])
