"""GitLab projects through the whole audit: ``run_audit`` against ``FakeGitLab`` on loopback,
a real database (SQLite and PostgreSQL through ``db_url``), real report files."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.config import parse_config
from crawler.store import Store
from crawler_fakes.faults import FaultPlan, FaultRule
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from crawler_fakes.gitlab import FakeGitLab, GitLabProject, GitLabRelease, GitLabState, GitLabTag
from tests.support.audits import Audits, kinds

TOKEN = "glpat-audit-token-5e0b7d2c91"
NOW = "2026-11-15T00:00:00Z"
WEB = "https://gitlab.test"
MIT = reference_text("MIT")
APACHE = reference_text("Apache-2.0")
CONFIG = """
gitlab: {retry_base_delay: 0, max_retries: 1}
projects:
  - name: Toolkit
    gitlab: acme/compilers/toolkit
  - name: Shim
    gitlab: acme/shim
  - name: Bare
    gitlab: acme/bare
"""


def _state() -> GitLabState:
    return GitLabState(
        [
            GitLabProject(
                path="acme/compilers/toolkit", id=21, license_key="apache-2.0",
                license_name="Apache License 2.0", license_text=APACHE,
                head_sha="a" * 40, head_date="2026-10-20T09:00:00Z",
                releases=[GitLabRelease("v2.0.0", "Toolkit 2.0", "2026-09-15T09:00:00Z"),
                          GitLabRelease("v2.1.0", "Toolkit 2.1", "2026-10-20T09:00:00Z")],
            ),
            GitLabProject(
                path="acme/shim", id=22, license_key="mit", license_name="MIT License",
                license_text=MIT, head_sha="b" * 40, head_date="2026-10-02T09:00:00Z",
                tags=[GitLabTag("v0.3.0", "c" * 40, "2026-10-02T09:00:00Z")],
            ),
            GitLabProject(
                path="acme/bare", id=23, head_sha="d" * 40, head_date="2026-10-05T08:00:00Z"
            ),
        ]
    )  # fmt: skip


Harness = Audits[FakeGitLab]


@pytest.fixture
def harness(db_url: str, tmp_path: Path) -> Iterator[Harness]:
    with FakeGitLab(_state(), token=TOKEN, web_url=WEB, now=NOW) as server:
        h = Harness(server, db_url, tmp_path, server.env(TOKEN))
        yield h
        h.close()


def test_first_audit_then_every_gitlab_change_with_links_on_the_instance(
    harness: Harness,
) -> None:
    config = parse_config(CONFIG)
    first = harness.audit(config).report.as_json()
    assert kinds(first) == [("Toolkit", "project_added"), ("Shim", "project_added"),
                             ("Bare", "project_added")]  # fmt: skip
    rows = {p["name"]: p for p in first["projects"]}
    assert [(rows[n]["version_source"], rows[n]["version"], rows[n]["license"]) for n in rows] == [
        ("release", "v2.1.0", "Apache-2.0"),
        ("tag", "v0.3.0", "MIT"),
        ("commit", "d" * 12, "none found"),
    ]
    assert rows["Toolkit"]["url"] == f"{WEB}/acme/compilers/toolkit/-/releases/v2.1.0"
    assert rows["Shim"]["url"] == f"{WEB}/acme/shim/-/tags/v0.3.0"

    state = _state()
    toolkit, shim, bare = state.projects
    toolkit.releases.append(GitLabRelease("v2.2.0", "Toolkit 2.2", "2026-11-10T09:00:00Z"))
    toolkit.releases.append(GitLabRelease("v3.0.0", "Toolkit 3", "2026-12-24T09:00:00Z"))
    shim.tags.append(GitLabTag("v0.4.0", "e" * 40, "2026-11-12T09:00:00Z"))
    shim.license_key, shim.license_name = "other", "Other"  # licensee no longer matches it
    shim.license_text = MIT + "\nThe logo may not be used without permission.\n"
    shim.archived = True
    bare.head_sha, bare.head_date = "f" * 40, "2026-11-13T08:00:00Z"
    harness.server.set_state(state)
    outcome = harness.audit(config)
    report = outcome.report.as_json()
    assert outcome.exit_code == 0 and report["errors"] == []
    assert kinds(report) == [
        ("Toolkit", "new_release"),
        ("Toolkit", "new_prerelease"),  # dated after "now": GitLab's upcoming_release
        ("Shim", "repo_archived"),
        ("Shim", "new_tag"),
        ("Shim", "license_changed"),
        ("Bare", "new_commit"),
    ]
    changes = report["changes"]
    assert [(c["before"], c["after"], c["evidence_url"]) for c in changes] == [
        ("v2.1.0", "v2.2.0", f"{WEB}/acme/compilers/toolkit/-/releases/v2.2.0"),
        ("v2.1.0", "v3.0.0", f"{WEB}/acme/compilers/toolkit/-/releases/v3.0.0"),
        (False, True, f"{WEB}/acme/shim"),
        ("v0.3.0", "v0.4.0", f"{WEB}/acme/shim/-/tags/v0.4.0"),
        (
            {"forge": "MIT", "detected": "MIT"},
            {"forge": "NOASSERTION", "detected": "MIT"},
            f"{WEB}/acme/shim/-/blob/main/LICENSE",
        ),
        ("d" * 40, "f" * 40, f"{WEB}/acme/bare/-/commit/{'f' * 40}"),
    ]
    flags = {(f["project"], f["kind"]): f for f in report["flags"]}
    noassertion = flags[("Shim", "license_noassertion")]
    assert noassertion["new"] is True
    assert noassertion["detail"].startswith("NOASSERTION per GitLab; ")
    assert flags[("Shim", "no_tagged_release")]["detail"] == (
        "no GitLab release; tracked by tag v0.4.0 (2026-11-12T09:00:00Z)"
    )
    markdown = (harness.reports / "latest" / "report.md").read_text()
    assert f"{WEB}/acme/compilers/toolkit/-/releases/v2.2.0" in markdown
    assert "gitlab.com" not in markdown and "github.com" not in markdown


def test_second_unchanged_audit_is_answered_304_and_reports_nothing(harness: Harness) -> None:
    config = parse_config(CONFIG)
    harness.audit(config)
    first_count = len(harness.server.requests)
    harness.server.reset_log()
    report = harness.audit(config).report.as_json()
    assert report["changes"] == []
    assert len(harness.server.requests) == first_count == 11
    assert all(r.status == 304 and r.conditional for r in harness.server.requests)
    usage = report["requests"]["sources"]["gitlab"]
    assert (usage["requests"], usage["not_modified"], usage["authenticated"]) == (11, 11, True)


def test_a_renamed_project_is_reported_moved_with_its_stable_id(harness: Harness) -> None:
    config = parse_config(CONFIG)
    harness.audit(config)
    state = _state()
    shim = state.projects[1]
    shim.old_paths, shim.path = ["acme/shim"], "platform/shim"
    harness.server.set_state(state)
    report = harness.audit(config).report.as_json()
    assert kinds(report) == [("Shim", "repo_moved")]
    [change] = report["changes"]
    assert (change["before"], change["after"]) == ("acme/shim", "platform/shim")
    assert change["details"] == {  # the line of its `gitlab:` key
        "before_id": 22, "after_id": 22, "moved": True, "replaced": False, "forge": "gitlab",
        "line": 7,
    }
    assert change["evidence_url"] == f"{WEB}/platform/shim"
    assert "update 'gitlab' at sources.yaml line 7" in change["summary"]
    rows = {p["name"]: p for p in report["projects"]}
    assert (rows["Shim"]["repo"], rows["Shim"]["url"]) == (
        "platform/shim",
        f"{WEB}/platform/shim/-/tags/v0.3.0",
    )


def test_a_failing_project_keeps_its_state_and_the_others_report(harness: Harness) -> None:
    config = parse_config(CONFIG)
    harness.audit(config)
    state = _state()
    state.projects[0].releases.append(GitLabRelease("v2.2.0", None, "2026-11-10T09:00:00Z"))
    state.projects[1].tags.append(GitLabTag("v0.4.0", "e" * 40, "2026-11-12T09:00:00Z"))
    harness.server.set_state(state)
    harness.server.faults = FaultPlan(rules=[FaultRule("status_502", path="/21/", times=99)])
    failed = harness.audit(config)
    assert failed.exit_code == 1 and failed.status == "partial"
    assert kinds(failed.report) == [("Shim", "new_tag")]  # no "release removed" for Toolkit
    [error] = failed.report.as_json()["errors"]
    assert (error["project"], error["source"]) == ("Toolkit", "gitlab")
    assert error["error"].startswith("HTTP 502 from GitLab (127.0.0.1:")
    rows = {p["name"]: p for p in failed.report.as_json()["projects"]}
    assert (rows["Toolkit"]["status"], rows["Toolkit"]["version"]) == ("error", "v2.1.0")
    harness.server.faults = None
    assert kinds(harness.audit(config).report.as_json()) == [("Toolkit", "new_release")]


def test_the_token_is_in_no_report_log_or_database_row(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    state = _state()
    state.projects[2].private = True  # readable only with the token: it is really sent
    harness.server.set_state(state)
    harness.server.faults = FaultPlan(rules=[FaultRule("status_500", path="acme%2Fshim", times=99)])
    config = parse_config(CONFIG)
    outcome = harness.audit(config)
    assert {e["project"] for e in outcome.report.as_json()["errors"]} == {"Shim"}
    rows = {p["name"]: p for p in outcome.report.as_json()["projects"]}
    assert rows["Bare"]["status"] == "ok"
    assert {r.authenticated for r in harness.server.requests} == {True}
    assert TOKEN not in json.dumps(outcome.report.as_json())
    for path in (harness.reports / "latest").iterdir():
        assert TOKEN not in path.read_text()
    assert TOKEN not in caplog.text
    if harness.db_url.startswith("sqlite:///"):
        harness.store.close()
        data = Path(harness.db_url.removeprefix("sqlite:///")).read_bytes()
        assert TOKEN.encode() not in data
        harness.store = Store(harness.db_url)
    else:
        with harness.store.engine.connect() as conn:
            for table in ("fetch_errors", "snapshots", "audits", "http_cache", "observations"):
                assert TOKEN not in repr(conn.exec_driver_sql(f"select * from {table}").fetchall())


def test_a_gitlab_outage_leaves_a_github_project_unaffected(harness: Harness) -> None:
    stamp = "2026-10-01T10:00:00Z"
    github_state = GitHubState(
        repos=[
            FakeRepo(
                owner="org", name="alpha", id=1, license_key="mit", spdx_id="MIT",
                license_name="MIT License", license_text=MIT, head_sha="1" * 40,
                head_date=stamp, releases=[FakeRelease("v1.0.0", "v1.0.0", stamp, stamp)],
            )
        ]
    )  # fmt: skip
    harness.server.faults = FaultPlan(rates={"status_502": 1.0})
    config = parse_config(CONFIG + "  - name: Alpha\n    repo: org/alpha\n")
    with FakeGitHub(github_state, unauth_limit=5000) as github:
        outcome = harness.audit(config, env={**harness.env, **github.env()})
    report = outcome.report.as_json()
    assert outcome.status == "partial" and outcome.exit_code == 1
    assert {e["project"] for e in report["errors"]} == {"Toolkit", "Shim", "Bare"}
    assert all(e["error"].startswith("HTTP 502 from GitLab") for e in report["errors"])
    # issue 20: added when first read, not when first tried: only Alpha; nothing is a finding
    assert kinds(report) == [("Alpha", "project_added")]
    rows = {p["name"]: p for p in report["projects"]}
    assert (rows["Alpha"]["status"], rows["Alpha"]["version"]) == ("ok", "v1.0.0")
    assert [rows[n]["status"] for n in ("Toolkit", "Shim", "Bare")] == ["error"] * 3
    assert rows["Alpha"]["url"] == "https://github.com/org/alpha/releases/tag/v1.0.0"


def test_a_readme_watched_through_gitlab_reports_its_pin_change(harness: Harness) -> None:
    config = parse_config(
        CONFIG.replace(
            "    gitlab: acme/compilers/toolkit\n",
            "    gitlab: acme/compilers/toolkit\n    pages:\n      - name: README pins\n"
            "        path: README.md\n        pins: {runtime: 'runtime>=([0-9.]+)'}\n",
        )
    )
    state = _state()
    state.projects[0].files["README.md"] = "Install with `pip install toolkit runtime>=1.2`\n"
    harness.server.set_state(state)
    harness.audit(config)
    state = _state()
    state.projects[0].files["README.md"] = "Install with `pip install toolkit runtime>=1.3`\n"
    harness.server.set_state(state)
    report = harness.audit(config).report.as_json()
    assert kinds(report) == [("Toolkit", "pin_changed")]
    [change] = report["changes"]
    assert (change["before"], change["after"]) == ("1.2", "1.3")
    assert change["evidence_url"] == f"{WEB}/acme/compilers/toolkit/-/blob/main/README.md"


def test_the_demo_states_show_each_gitlab_change_kind(db_url: str, tmp_path: Path) -> None:
    from crawler_fakes.gitlab import DEMO_CONFIG, DEMO_NOW, demo_state

    store = Store(db_url)
    config = parse_config("projects:\n" + DEMO_CONFIG)
    with FakeGitLab(demo_state(after=False), now=DEMO_NOW) as server:
        run_audit(config, store, tmp_path / "r", env=server.env(), sleep=lambda _s: None)
        server.set_state(demo_state(after=True))
        outcome = run_audit(config, store, tmp_path / "r", env=server.env(), sleep=lambda _s: None)
    store.close()
    assert outcome.report.as_json()["errors"] == []
    assert kinds(outcome.report) == [
        ("Compiler Toolkit", "new_release"),
        ("Compiler Toolkit", "new_prerelease"),
        ("Runtime Shim", "repo_moved"),
        ("Runtime Shim", "repo_archived"),
        ("Runtime Shim", "new_tag"),
    ]
