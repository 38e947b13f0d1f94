"""The nightly audit end to end: a GitHub-shaped server on loopback, a real database, real files.

Each scenario runs without a token (REST, conditional requests) and with one (GraphQL batches).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import AuditOutcome, rebuild_report, run_audit
from crawler.config import parse_config
from crawler.store import Store
from crawler_fakes.github import (
    FakeGitHub,
    FakeRelease,
    FakeRepo,
    FakeTag,
    FaultPlan,
    FaultRule,
    GitHubState,
)
from tests.support.audits import Audits, kinds

TOKEN = "ghp_test_token_value_1234567890"
CONFIG = """
github: {graphql_batch: 2, retry_base_delay: 0, max_retries: 2}
projects:
  - name: Alpha
    repo: org/alpha
  - name: Beta
    repo: org/beta
    prereleases: exclude
  - name: Gamma
    repo: org/gamma
  - name: Offsite
    homepage: https://gitee.example/x/y
"""


def _release(tag: str, day: str, pre: bool = False) -> FakeRelease:
    stamp = f"2026-{day}T10:00:00Z"
    return FakeRelease(tag=tag, name=tag, published_at=stamp, created_at=stamp, prerelease=pre)


def _state() -> GitHubState:
    mit = reference_text("MIT")
    apache = reference_text("Apache-2.0")
    return GitHubState(
        repos=[
            FakeRepo(
                owner="org",
                name="alpha",
                id=1,
                license_key="mit",
                spdx_id="MIT",
                license_name="MIT License",
                license_text=mit,
                head_sha="a" * 40,
                head_date="2026-10-01T00:00:00Z",
                releases=[_release("v1.0.0", "10-01"), _release("v1.1.0", "10-20")],
            ),
            FakeRepo(
                owner="org",
                name="beta",
                id=2,
                license_key="apache-2.0",
                spdx_id="Apache-2.0",
                license_name="Apache License 2.0",
                license_text=apache,
                head_sha="b" * 40,
                head_date="2026-10-02T00:00:00Z",
                releases=[_release("v0.5.0", "10-05")],
            ),
            FakeRepo(
                owner="org",
                name="gamma",
                id=3,
                license_key="other",
                spdx_id="NOASSERTION",
                license_name="Other",
                license_text=mit + "\nExtra terms apply to the logo.\n",
                head_sha="c" * 40,
                head_date="2026-10-03T00:00:00Z",
                tags=[FakeTag("v0.1.0", "d" * 40, "2026-09-01T00:00:00Z")],
            ),
        ]
    )


@pytest.fixture(params=["rest", "graphql"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


Harness = Audits[FakeGitHub]


@pytest.fixture
def harness(db_url: str, tmp_path: Path, mode: str) -> Iterator[Harness]:
    token = TOKEN if mode == "graphql" else None
    with FakeGitHub(_state(), token=TOKEN, unauth_limit=5000) as server:
        h = Harness(server, db_url, tmp_path, server.env(token))
        yield h
        h.close()


def test_first_audit_reports_projects_versions_flags_and_writes_files(harness: Harness) -> None:
    config = parse_config(CONFIG)
    outcome = harness.audit(config)
    report = outcome.report.as_json()
    assert outcome.status == "complete" and outcome.exit_code == 0
    # Offsite is listed but no source reads it: added when first read (issue 20), not now
    assert kinds(report) == [(n, "project_added") for n in ("Alpha", "Beta", "Gamma")]
    rows = {p["name"]: p for p in report["projects"]}
    assert (rows["Alpha"]["version"], rows["Alpha"]["version_source"]) == ("v1.1.0", "release")
    assert rows["Alpha"]["published_at"] == "2026-10-20T10:00:00Z"
    assert rows["Alpha"]["license"] == "MIT"
    assert (rows["Gamma"]["version"], rows["Gamma"]["version_source"]) == ("v0.1.0", "tag")
    assert rows["Gamma"]["forge_license"] == "NOASSERTION"
    assert rows["Gamma"]["detected_license"] == "MIT"
    assert (rows["Offsite"]["status"], rows["Offsite"]["version"]) == ("untracked", None)
    assert rows["Alpha"]["license_analysis"]["differs_from_forge"] is False
    gamma = rows["Gamma"]["license_analysis"]
    assert (gamma["verdict"], gamma["spdx_ids"], gamma["path"]) == (
        "match_with_extra_text",
        ["MIT"],
        "LICENSE",
    )
    assert [s["text"] for s in gamma["extra_text"]] == ["Extra terms apply to the logo."]
    assert gamma["why"] == "Known license MIT plus extra text at line 24."
    flags = {(f["project"], f["kind"]): f for f in report["flags"]}
    assert set(flags) == {("Gamma", "license_noassertion"), ("Gamma", "no_tagged_release")}
    assert flags[("Gamma", "license_noassertion")]["new"] is True
    assert flags[("Gamma", "no_tagged_release")]["detail"] == (
        "no GitHub release; tracked by tag v0.1.0 (2026-09-01T00:00:00Z)"
    )
    latest = harness.reports / "latest"
    assert json.loads((latest / "report.json").read_text()) == report
    markdown = (latest / "report.md").read_text()
    assert "## New releases\n\nNo new releases." in markdown
    assert "Extra terms apply to the logo" in markdown


def test_second_unchanged_audit_reports_nothing_and_costs_almost_nothing(
    harness: Harness, mode: str
) -> None:
    config = parse_config(CONFIG)
    harness.audit(config)
    harness.server.reset_log()
    outcome = harness.audit(config)
    assert outcome.report.as_json()["changes"] == []
    assert outcome.report.as_json()["summary"]["changes"] == 0
    # standing, not new
    assert [f["new"] for f in outcome.report.as_json()["flags"]] == [False, False]
    api = [r for r in harness.server.requests if r.path != "/rate_limit"]
    if mode == "rest":
        assert api and all(r.status == 304 and r.conditional for r in api)
    else:
        assert [(r.method, r.path) for r in api] == [("POST", "/graphql"), ("POST", "/graphql")]
    markdown = (harness.reports / "latest" / "report.md").read_text()
    assert "0 changes since audit #1" in markdown


def test_upstream_changes_are_reported_with_evidence(harness: Harness) -> None:
    config = parse_config(CONFIG)
    harness.audit(config)
    state = _state()
    alpha, beta, gamma = state.repos
    alpha.releases.append(_release("v1.2.0", "11-02"))
    beta.releases.append(_release("v0.6.0rc1", "11-03", pre=True))  # excluded by config
    beta.releases.append(_release("v0.5.1", "11-04"))
    gamma.tags.append(FakeTag("v0.2.0", "e" * 40, "2026-11-01T00:00:00Z"))
    alpha.license_text = (alpha.license_text or "").replace("MIT License", "MIT License (Expat)")
    harness.server.set_state(state)
    report = harness.audit(config).report.as_json()
    assert kinds(report) == [
        ("Alpha", "new_release"),
        ("Alpha", "license_text_changed"),
        ("Beta", "new_release"),
        ("Gamma", "new_tag"),
    ]
    changes = report["changes"]
    assert (changes[0]["before"], changes[0]["after"]) == ("v1.1.0", "v1.2.0")
    assert changes[0]["evidence_url"] == "https://github.com/org/alpha/releases/tag/v1.2.0"
    assert (changes[2]["before"], changes[2]["after"]) == ("v0.5.0", "v0.5.1")
    assert (changes[3]["before"], changes[3]["after"]) == ("v0.1.0", "v0.2.0")


def test_a_failed_fetch_is_an_error_never_a_finding(harness: Harness, mode: str) -> None:
    config = parse_config(CONFIG)
    harness.audit(config)
    state = _state()
    state.repos[0].releases.append(_release("v1.2.0", "11-02"))
    harness.server.set_state(state)
    target = "/graphql" if mode == "graphql" else "org/alpha"
    harness.server.faults = FaultPlan(rules=[FaultRule(kind="status_500", path=target, times=99)])
    failed = harness.audit(config)
    assert failed.exit_code == 1
    assert failed.report.as_json()["changes"] == []
    errors = failed.report.as_json()["errors"]
    assert {e["project"] for e in errors} == (
        {"Alpha"} if mode == "rest" else {"Alpha", "Beta", "Gamma"}
    )
    assert all("HTTP 500" in e["error"] for e in errors)
    rows = {p["name"]: p for p in failed.report.as_json()["projects"]}
    assert (rows["Alpha"]["status"], rows["Alpha"]["version"]) == ("error", "v1.1.0")  # carried
    harness.server.faults = None
    recovered = harness.audit(config).report.as_json()
    assert kinds(recovered) == [("Alpha", "new_release")]
    assert recovered["audit"]["baseline_audit_id"] == (2 if mode == "rest" else 1)


def test_report_can_be_rebuilt_from_the_database(harness: Harness) -> None:
    config = parse_config(CONFIG)
    harness.audit(config)
    state = _state()
    state.repos[0].releases.append(_release("v1.2.0", "11-02"))
    harness.server.set_state(state)
    live = harness.audit(config).report.as_json()
    rebuilt = rebuild_report(harness.store, config, live["audit"]["id"]).as_json()
    assert rebuilt["changes"] == live["changes"]
    assert rebuilt["flags"] == live["flags"]
    assert rebuilt["projects"] == live["projects"]


@pytest.mark.parametrize("mode", ["graphql"])  # the only mode that sends a token
def test_token_never_reaches_reports_database_or_errors(harness: Harness, mode: str) -> None:
    config = parse_config(CONFIG)
    harness.server.faults = FaultPlan(rules=[FaultRule(kind="status_500", path="/", times=999)])
    outcome = harness.audit(config)
    assert outcome.report.as_json()["errors"]
    assert TOKEN not in json.dumps(outcome.report.as_json())
    assert TOKEN not in (harness.reports / "latest" / "report.md").read_text()
    with harness.store.engine.connect() as conn:
        for table in ("fetch_errors", "snapshots", "audits", "http_cache", "observations"):
            rows = conn.exec_driver_sql(f"select * from {table}").fetchall()
            assert TOKEN not in repr(rows)


def test_moved_missing_and_empty_repositories(harness: Harness, mode: str) -> None:
    config = parse_config(CONFIG + "  - name: Empty\n    repo: org/empty\n")
    state = _state()
    state.repos.append(FakeRepo(owner="org", name="empty", id=9))  # no commits at all
    harness.server.set_state(state)
    first = harness.audit(config).report.as_json()
    rows = {p["name"]: p for p in first["projects"]}
    assert (rows["Empty"]["status"], rows["Empty"]["version"]) == ("ok", None)
    assert rows["Empty"]["license"] == "none found"

    moved = _state()
    moved.repos[0].moved_to = "neworg/alpha-renamed"
    del moved.repos[1]  # Beta is gone: an error, not "release removed"
    moved.repos.append(FakeRepo(owner="org", name="empty", id=9))
    harness.server.set_state(moved)
    report = harness.audit(config).report.as_json()
    assert kinds(report) == [("Alpha", "repo_moved")]
    change = report["changes"][0]
    assert (change["before"], change["after"]) == ("org/alpha", "neworg/alpha-renamed")
    assert change["details"] == {  # the line of its `repo:` key
        "before_id": 1, "after_id": 1, "moved": True, "replaced": False, "forge": "github",
        "line": 5,
    }
    [error] = report["errors"]
    assert error["project"] == "Beta"
    if mode == "rest":
        assert error["error"] == (
            "repository org/beta not found (deleted, private, or renamed without a redirect): "
            "fix 'repo' in sources.yaml"
        )
    else:
        assert error["error"] == "Could not resolve to a Repository with the name 'org/beta'."
    rows = {p["name"]: p for p in report["projects"]}
    assert (rows["Beta"]["status"], rows["Beta"]["version"]) == ("error", "v0.5.0")
    assert rows["Alpha"]["repo"] == "neworg/alpha-renamed"


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:  # a port with nobody listening: connection refused
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _unreachable_audit(db_url: str, tmp_path: Path, names: list[str], workers: int) -> AuditOutcome:
    config = parse_config(
        f"github: {{retry_base_delay: 0, max_retries: 1, concurrency: {workers}}}\nprojects:\n"
        + "".join(f"  - name: {n}\n    repo: org/{n.lower()}\n" for n in names)
    )
    store = Store(db_url)
    env = {"GITHUB_API_URL": f"http://127.0.0.1:{_closed_port()}"}
    outcome = run_audit(config, store, tmp_path / "r", env=env, sleep=lambda _s: None)
    store.close()
    return outcome


def test_unreachable_github_is_given_up_on_quickly(db_url: str, tmp_path: Path) -> None:
    outcome = _unreachable_audit(db_url, tmp_path, ["A", "B", "C", "D", "E"], workers=1)
    assert outcome.status == "failed" and outcome.exit_code == 1
    messages = {e["project"]: e["error"] for e in outcome.report.as_json()["errors"]}
    assert messages["A"] == (
        "no answer from GitHub: connection refused (ConnectionError) "
        "(gave up after 2 attempts, 0.0s of waiting)"
    )
    assert all(
        messages[n].startswith("not attempted: GitHub unreachable (3 projects") for n in "DE"
    )
    assert outcome.report.as_json()["changes"] == []  # nothing was read: nothing added (issue 20)


def test_unreachable_github_with_workers_in_flight(db_url: str, tmp_path: Path) -> None:
    """With 4 workers, at most 3 failures in a row plus the 4 already in flight are tried;
    every later project is not attempted."""
    names = [f"P{i:02d}" for i in range(12)]
    outcome = _unreachable_audit(db_url, tmp_path, names, workers=4)
    messages = {e["project"]: e["error"] for e in outcome.report.as_json()["errors"]}
    assert set(messages) == set(names)
    tried = [n for n in names if messages[n].startswith("no answer from GitHub")]
    skipped = [n for n in names if messages[n].startswith("not attempted: GitHub unreachable")]
    assert sorted(tried + skipped) == names
    assert 3 <= len(tried) <= 3 + 4
    assert skipped == names[len(tried) :]  # projects start in order: the tail is skipped


def test_without_a_writable_temporary_folder_no_audit_begins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's entries wait in a temporary file: when none can be made, the audit stops
    before it begins (no audit row left 'running', nothing fetched)."""
    import tempfile

    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    try:
        with FakeGitHub(_state(), token=TOKEN) as server:
            monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
            with pytest.raises(FileNotFoundError):
                run_audit(parse_config(CONFIG), store, tmp_path / "reports",
                          env=server.env(TOKEN), sleep=lambda _s: None)  # fmt: skip
            assert server.requests == []
        with store.engine.connect() as conn:  # not even one left 'running'
            assert conn.exec_driver_sql("SELECT count(*) FROM audits").scalar() == 0
        assert not (tmp_path / "reports").exists()
    finally:
        store.close()
