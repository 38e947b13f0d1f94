"""Gitee projects in the nightly audit, end to end: the Gitee-shaped fake on loopback, a real
SQLite file and the real PostgreSQL server, report files on disk."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.config import parse_config
from crawler.store import Store
from crawler_fakes.faults import FaultPlan, FaultRule
from crawler_fakes.gitee import FakeGitee, GiteeRelease, GiteeRepo, GiteeState, GiteeTag
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from crawler_fakes.github_state import git_blob_sha
from tests.support.audits import Audits, changes

WEB = "https://gitee.vendor.example"
TOKEN = "gitee-audit-token-77c1e0b9a4"
CONFIG = """
gitee: {retry_base_delay: 0, max_retries: 2, concurrency: 1}
projects:
  - name: Plugin
    gitee: deep-spark/plugin
    pages:
      - name: README pins
        path: README.md
        pins:
          vllm: 'vllm (>=[0-9.]+,<[0-9.]+)'
  - name: Toolkit
    gitee: deep-spark/toolkit
  - name: Docs
    gitee: deep-spark/docs
    track: commits
"""
MIT_2025 = reference_text("MIT").replace("2026 Example Authors", "2025 Deep Spark Authors")


def _world(changed: bool = False) -> GiteeState:
    plugin = GiteeRepo(
        owner="deep-spark", name="plugin", id=501, license="Apache-2.0",
        head_sha="a" * 40, head_date="2026-09-01T00:00:00Z",
        releases=[GiteeRelease("v1.0.0", "2026-09-01T02:00:00Z", "v1.0.0")],
        files={"LICENSE": reference_text("Apache-2.0"),
               "README.md": "Needs vllm >=0.27.1,<0.28.0\n"},
    )  # fmt: skip
    toolkit = GiteeRepo(
        owner="deep-spark", name="toolkit", id=502, head_sha="b" * 40,
        head_date="2026-09-02T00:00:00Z",
        tags=[GiteeTag("v1.0.0", "c" * 40, "2026-08-01T00:00:00Z")],
        files={"LICENSE": reference_text("MIT")},
    )  # fmt: skip
    docs = GiteeRepo(
        owner="deep-spark", name="docs", id=503, license="MIT", head_sha="d" * 40,
        head_date="2026-09-03T00:00:00Z", files={"LICENSE": reference_text("MIT")},
    )  # fmt: skip
    if changed:
        plugin.releases += [
            GiteeRelease("v1.1.0", "2026-10-02T02:00:00Z", "v1.1.0"),
            GiteeRelease("v1.2.0rc1", "2026-10-03T02:00:00Z", "RC", prerelease=True),
        ]
        plugin.license = "MIT"
        plugin.files["LICENSE"] = reference_text("MIT")
        plugin.files["README.md"] = "Needs vllm >=0.28.0,<0.29.0\n"
        toolkit.tags.append(GiteeTag("v1.1.0", "e" * 40, "2026-10-01T00:00:00Z"))
        toolkit.status = "关闭"
        docs.head_sha, docs.head_date = "f" * 40, "2026-10-04T08:00:00Z"
        docs.files["LICENSE"] = MIT_2025
    return GiteeState([plugin, toolkit, docs])


Harness = Audits[FakeGitee]


@pytest.fixture
def harness(db_url: str, tmp_path: Path) -> Iterator[Harness]:
    with FakeGitee(_world(), token=TOKEN, web_url=WEB) as gitee:
        h = Harness(gitee, db_url, tmp_path, gitee.env(TOKEN))
        yield h
        h.close()


def test_each_change_kind_is_reported_with_links_on_the_gitee_web_host(harness: Harness) -> None:
    first = harness.audit(CONFIG).report.as_json()
    assert [(c["project"], c["kind"]) for c in first["changes"]] == [
        (n, "project_added") for n in ("Plugin", "Toolkit", "Docs")
    ]
    rows = {p["name"]: p for p in first["projects"]}
    assert {n: (r["forge"], r["forge_label"], r["repo_url"]) for n, r in rows.items()} == {
        "Plugin": ("gitee", "Gitee", f"{WEB}/deep-spark/plugin"),
        "Toolkit": ("gitee", "Gitee", f"{WEB}/deep-spark/toolkit"),
        "Docs": ("gitee", "Gitee", f"{WEB}/deep-spark/docs"),
    }
    assert [(r["version"], r["version_source"], r["license"]) for r in rows.values()] == [
        ("v1.0.0", "release", "Apache-2.0"),
        ("v1.0.0", "tag", "no verdict from Gitee; text reads MIT"),
        ("d" * 12, "commit", "MIT"),
    ]
    assert rows["Toolkit"]["forge_license"] is None  # Gitee named no license: not NOASSERTION
    assert rows["Plugin"]["published_at"] == "2026-09-01T02:00:00Z"  # Gitee's +08:00, in UTC

    harness.server.set_state(_world(changed=True))
    report = harness.audit(CONFIG).report.as_json()
    plugin, toolkit, docs = (f"{WEB}/deep-spark/{n}" for n in ("plugin", "toolkit", "docs"))
    assert changes(report, "evidence_url") == [
        ("Plugin", "new_release", "v1.0.0", "v1.1.0", f"{plugin}/releases/tag/v1.1.0"),
        ("Plugin", "new_prerelease", "v1.0.0", "v1.2.0rc1", f"{plugin}/releases/tag/v1.2.0rc1"),
        ("Plugin", "license_changed", {"forge": "Apache-2.0", "detected": "Apache-2.0"},
         {"forge": "MIT", "detected": "MIT"}, f"{plugin}/blob/master/LICENSE"),
        ("Plugin", "pin_changed", ">=0.27.1,<0.28.0", ">=0.28.0,<0.29.0",
         f"{plugin}/blob/master/README.md"),
        ("Toolkit", "repo_archived", False, True, toolkit),
        ("Toolkit", "new_tag", "v1.0.0", "v1.1.0", f"{toolkit}/tree/v1.1.0"),
        ("Docs", "new_commit", "d" * 40, "f" * 40, f"{docs}/commit/{'f' * 40}"),
        ("Docs", "license_text_changed", git_blob_sha(reference_text("MIT")),
         git_blob_sha(MIT_2025), f"{docs}/blob/master/LICENSE"),
    ]  # fmt: skip
    text_change = report["changes"][-1]
    assert text_change["summary"] == "LICENSE text changed; license still MIT"
    assert text_change["details"]["word_diff"][1:3] == [
        ["delete", "2026 Example"], ["insert", "2025 Deep Spark"]
    ]  # fmt: skip
    assert [(f["project"], f["kind"], f["new"]) for f in report["flags"]] == [
        ("Toolkit", "no_tagged_release", False),
        ("Docs", "no_tagged_release", False),
    ]
    assert report["flags"][1]["detail"] == (
        f"tracked by commit {'f' * 12} (2026-10-04T08:00:00Z) (track: commits; releases not "
        "checked)"  # track: commits never asks for releases: it cannot say there are none
    )
    assert report["errors"] == [] and report["audit"]["status"] == "complete"
    markdown = (harness.reports / "latest" / "report.md").read_text()
    assert f"{plugin}/releases/tag/v1.1.0" in markdown
    assert "github.com" not in markdown


def test_an_unchanged_second_audit_is_answered_by_304s(harness: Harness) -> None:
    harness.audit(CONFIG)
    harness.server.reset_log()
    outcome = harness.audit(CONFIG)
    assert outcome.report.as_json()["changes"] == []
    requests = harness.server.requests
    paths = [r.path.partition("?")[0].removeprefix("/api/v5/repos/deep-spark/") for r in requests]
    assert paths == [
        "plugin", "plugin/releases", "plugin/git/trees/master",
        "toolkit", "toolkit/releases", "toolkit/tags", "toolkit/git/trees/master",
        "docs", "docs/commits", "docs/git/trees/master",
        "plugin/contents/README.md",
    ]  # fmt: skip  (no license text read again: the blob SHAs did not move)
    assert all(r.status == 304 and r.conditional and r.authenticated for r in requests)
    usage = outcome.report.as_json()["requests"]["sources"]["gitee"]
    assert (usage["requests"], usage["not_modified"], usage["authenticated"]) == (11, 11, True)


def test_a_renamed_repository_keeps_its_id_and_is_reported_moved(harness: Harness) -> None:
    harness.audit(CONFIG)
    moved = _world()
    moved.repos[1].moved_to = "iluvatar/toolkit-ng"
    harness.server.set_state(moved)
    harness.server.reset_log()
    report = harness.audit(CONFIG).report.as_json()
    [change] = report["changes"]
    assert (change["project"], change["kind"], change["before"], change["after"]) == (
        "Toolkit", "repo_moved", "deep-spark/toolkit", "iluvatar/toolkit-ng"
    )  # fmt: skip
    assert change["details"] == {  # the line of its `gitee:` key
        "before_id": 502, "after_id": 502, "moved": True, "replaced": False, "forge": "gitee",
        "line": 12,
    }
    assert change["evidence_url"] == f"{WEB}/iluvatar/toolkit-ng"
    assert change["summary"] == (
        "repository moved deep-spark/toolkit → iluvatar/toolkit-ng; update 'gitee' at "
        "sources.yaml line 12"
    )
    toolkit = [(r.path.partition("?")[0], r.status) for r in harness.server.requests
               if "toolkit" in r.path]  # fmt: skip
    assert toolkit == [
        ("/api/v5/repos/deep-spark/toolkit", 301),
        ("/api/v5/repos/iluvatar/toolkit-ng", 200),
        ("/api/v5/repos/iluvatar/toolkit-ng/releases", 200),
        ("/api/v5/repos/iluvatar/toolkit-ng/tags", 200),
        ("/api/v5/repos/iluvatar/toolkit-ng/git/trees/master", 200),
    ]  # one redirect, then the name Gitee reports now
    rows = {p["name"]: p for p in report["projects"]}
    assert (rows["Toolkit"]["repo"], rows["Toolkit"]["url"]) == (
        "iluvatar/toolkit-ng", f"{WEB}/iluvatar/toolkit-ng/tree/v1.0.0"
    )  # fmt: skip


def test_a_spent_rate_budget_defers_and_the_next_audit_catches_up(harness: Harness) -> None:
    harness.audit(CONFIG)
    harness.server.set_state(_world(changed=True))
    harness.server.set_rate_limit(2, authenticated=True)  # Plugin's repo and releases, no more
    harness.server.reset_log()
    outcome = harness.audit(CONFIG)
    report = outcome.report.as_json()
    assert report["changes"] == [] and report["errors"] == []
    assert len(harness.server.requests) == 2
    rows = {p["name"]: p for p in report["projects"]}
    assert {n: r["status"] for n, r in rows.items()} == dict.fromkeys(
        ("Plugin", "Toolkit", "Docs"), "deferred"
    )
    assert rows["Docs"]["note"].startswith(
        "not checked this audit: Gitee rate budget spent (0 left of 5000, keeping 0 in reserve; "
        "resets 20"
    )
    assert rows["Plugin"]["version"] == "v1.0.0"  # the last good state, not a finding
    # nothing checked is no quiet night (issue 38 item 5): partial, and a person is told
    assert (outcome.status, outcome.exit_code) == ("partial", 1)

    harness.server.set_rate_limit(5000, authenticated=True)
    caught_up = harness.audit(CONFIG).report.as_json()
    assert [(c["project"], c["kind"]) for c in caught_up["changes"]][:2] == [
        ("Plugin", "new_release"), ("Plugin", "new_prerelease")
    ]  # fmt: skip
    assert len(caught_up["changes"]) == 8


def test_a_budget_spent_elsewhere_is_a_deferral_from_the_first_answer(harness: Harness) -> None:
    harness.server.set_rate_limit(0, authenticated=True)  # Gitee answers 403, nothing left
    report = harness.audit(CONFIG).report.as_json()
    assert [r.status for r in harness.server.requests] == [403]
    assert {p["status"] for p in report["projects"]} == {"deferred"}
    assert report["projects"][0]["note"] == (
        "not checked this audit: Gitee rate limit reached (HTTP 403); never checked yet"
    )


def test_a_429_waits_for_retry_after_and_then_succeeds(harness: Harness) -> None:
    rule = FaultRule(kind="rate_429", path="toolkit/tags", retry_after=9)
    harness.server.faults = FaultPlan(rules=[rule])
    report = harness.audit(CONFIG).report.as_json()
    assert report["errors"] == [] and harness.sleeps == [9.0]
    tags = [(r.status, r.fault) for r in harness.server.requests if "/tags" in r.path]
    assert tags == [(429, "rate_429"), (200, None)]
    assert {p["name"]: p["version"] for p in report["projects"]}["Toolkit"] == "v1.0.0"


def test_server_errors_are_retried_then_an_error_for_that_project_only(harness: Harness) -> None:
    harness.audit(CONFIG)
    harness.server.set_state(_world(changed=True))
    rule = FaultRule(kind="status_500", path="deep-spark/plugin", times=99)
    harness.server.faults = FaultPlan(rules=[rule])
    outcome = harness.audit(CONFIG)
    report = outcome.report.as_json()
    assert report["errors"] == [
        {
            "project": "Plugin",
            "source": "gitee",
            "url": f"{harness.server.api_url}/repos/deep-spark/plugin",
            "error": "HTTP 500 from Gitee (gave up after 3 attempts, 0.0s of waiting)",
        }
    ]
    plugin_requests = [r for r in harness.server.requests if "deep-spark/plugin" in r.path]
    assert [r.status for r in plugin_requests[-3:]] == [500, 500, 500]
    assert [c["project"] for c in report["changes"]] == ["Toolkit", "Toolkit", "Docs", "Docs"]
    rows = {p["name"]: p for p in report["projects"]}
    assert (rows["Plugin"]["status"], rows["Plugin"]["version"]) == ("error", "v1.0.0")
    assert (outcome.status, outcome.exit_code) == ("partial", 1)


def test_the_token_never_reaches_reports_logs_or_the_database(
    harness: Harness, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    harness.audit(CONFIG)
    rule = FaultRule(kind="status_500", path="deep-spark/docs", times=99)
    reset = FaultRule(kind="reset", path="toolkit", times=9)
    harness.server.faults = FaultPlan(rules=[rule, reset])
    harness.server.set_state(_world(changed=True))
    outcome = harness.audit(CONFIG)
    assert {e["project"] for e in outcome.report.as_json()["errors"]} == {"Toolkit", "Docs"}
    assert all(r.authenticated for r in harness.server.requests)  # the token was sent…
    assert TOKEN not in json.dumps(outcome.report.as_json())  # …and is nowhere else
    for report_file in harness.reports.rglob("report.*"):
        assert TOKEN not in report_file.read_text()
    assert TOKEN not in caplog.text
    if db_url.startswith("sqlite"):
        harness.store.close()
        database = Path(db_url.removeprefix("sqlite:///")).read_bytes()
        assert TOKEN.encode() not in database and len(database) > 10_000
    else:
        with harness.store.engine.connect() as conn:
            for table in ("fetch_errors", "snapshots", "audits", "http_cache", "observations"):
                rows = conn.exec_driver_sql(f"select * from {table}").fetchall()
                assert rows and TOKEN not in repr(rows)


def test_a_gitee_outage_leaves_a_github_project_in_the_same_audit_unaffected(
    db_url: str, tmp_path: Path
) -> None:
    with socket.socket() as probe:  # a port nobody listens on: Gitee is down
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    stamp = "2026-10-01T00:00:00Z"
    github = GitHubState(repos=[FakeRepo(
        owner="org", name="engine", id=1, head_sha="1" * 40, head_date=stamp,
        releases=[FakeRelease(tag="v2.0.0", name="v2.0.0", published_at=stamp, created_at=stamp)],
    )])  # fmt: skip
    config = parse_config(
        "gitee: {retry_base_delay: 0, max_retries: 1, concurrency: 1}\nprojects:\n"
        "  - name: Engine\n    repo: org/engine\n"
        + "".join(f"  - name: G{n}\n    gitee: deep-spark/g{n}\n" for n in range(1, 5))
    )
    with FakeGitHub(github) as server:
        store = Store(db_url)
        env = {**server.env(), "GITEE_API_URL": f"http://127.0.0.1:{port}/api/v5"}
        outcome = run_audit(config, store, tmp_path / "r", env=env, sleep=lambda _s: None)
        store.close()
    rows = {p["name"]: p for p in outcome.report.as_json()["projects"]}
    assert (rows["Engine"]["status"], rows["Engine"]["version"]) == ("ok", "v2.0.0")
    errors = {e["project"]: e["error"] for e in outcome.report.as_json()["errors"]}
    assert errors["G1"] == (
        "no answer from Gitee: ConnectError (gave up after 2 attempts, 0.0s of waiting)"
    )
    assert errors["G4"] == "not attempted: Gitee unreachable (3 requests in a row got no answer)"
    assert (outcome.status, outcome.exit_code) == ("partial", 1)
    # issue 20: added when first read; the unreachable G1-G4 were not
    assert [(c["project"], c["kind"]) for c in outcome.report.as_json()["changes"]] == [
        ("Engine", "project_added")
    ]
