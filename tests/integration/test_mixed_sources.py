"""One audit over GitHub Enterprise, Gitee, GitLab and PyPI at once: every link points at the
host its source named, and an outage of one source is an error for its projects only.

Regression (issue 10): against a GitHub Enterprise ``api_url``, a project tracked by tag was
linked to github.com while one tracked by commit was linked to the Enterprise host.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.config import parse_config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler_fakes.faults import FaultPlan, FaultRule
from crawler_fakes.gitee import FakeGitee, demo_states
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, FakeTag, GitHubState
from crawler_fakes.gitlab import DEMO_NOW, FakeGitLab
from crawler_fakes.gitlab import demo_state as gitlab_state
from crawler_fakes.pypi import FakePyPI
from crawler_fakes.pypi import demo_state as pypi_state

TOKEN = "ghe_token_for_the_mixed_audit_0123456789"
GHE = "https://ghe.example"
GITLAB_WEB = "https://gitlab.example"

CONFIG = """
github: {retry_base_delay: 0}
gitee: {retry_base_delay: 0, max_retries: 1}
settings: {allow_private_addresses: true}
projects:
  - name: Released
    repo: corp/released
    pypi: kernel-dsl
  - name: Tagged
    repo: corp/tagged
  - name: Committed
    repo: corp/committed
  - name: Accel Plugin
    gitee: demo-vendor/accel-plugin
  - name: Kernel Toolkit
    gitee: demo-vendor/kernel-toolkit
  - name: Compiler Toolkit
    gitlab: demo-group/compilers/toolkit
  - name: Runtime Shim
    gitlab: demo-group/runtime-shim
"""


def _github(second: bool) -> GitHubState:
    def repo(name: str, repo_id: int, **kwargs: Any) -> FakeRepo:
        return FakeRepo(
            owner="corp", name=name, id=repo_id, license_key="mit", spdx_id="MIT",
            license_name="MIT License", license_text=reference_text("MIT"),
            head_sha=f"{repo_id:040x}", head_date="2026-10-01T00:00:00Z",
            tree=[("third_party/lib/LICENSE", "e" * 40)], **kwargs,
        )  # fmt: skip

    stamp = "2026-10-01T00:00:00Z"
    released = repo("released", 1, releases=[FakeRelease("v1.0.0", "v1.0.0", stamp, stamp)])
    tagged = repo("tagged", 2, tags=[FakeTag("v0.1.0", "a" * 40, stamp)])
    committed = repo("committed", 3)
    if second:
        later = "2026-11-01T00:00:00Z"
        released.releases.append(FakeRelease("v1.1.0", "v1.1.0", later, later))
        tagged.tags.append(FakeTag("v0.2.0", "b" * 40, later))
        committed.head_sha, committed.head_date = "c" * 40, later
    return GitHubState(repos=[released, tagged, committed])


@pytest.fixture(params=["rest", "graphql"])
def token(request: pytest.FixtureRequest) -> str | None:
    return TOKEN if request.param == "graphql" else None


@pytest.fixture
def servers() -> Iterator[tuple[FakeGitHub, FakeGitee, FakeGitLab, FakePyPI]]:
    gitee_before, _ = demo_states(reference_text("Apache-2.0"))
    with (
        FakeGitHub(_github(False), token=TOKEN, unauth_limit=5000, web_url=GHE) as github,
        FakeGitee(gitee_before, web_url="https://gitee.example") as gitee,
        FakeGitLab(gitlab_state(after=False), now=DEMO_NOW, web_url=GITLAB_WEB) as gitlab,
        FakePyPI(pypi_state(after=False), web_url="https://pypi.example") as pypi,
    ):  # fmt: skip
        yield github, gitee, gitlab, pypi


def _urls(value: Any) -> list[str]:
    return re.findall(r"https?://[^\s\"'<>)]+", json.dumps(value))


def test_links_point_at_each_sources_host_and_an_outage_stays_with_its_source(
    servers: tuple[FakeGitHub, FakeGitee, FakeGitLab, FakePyPI],
    token: str | None,
    db_url: str,
    tmp_path: Path,
) -> None:
    github, gitee, gitlab, pypi = servers
    env = {**github.env(token), **gitee.env(), **gitlab.env(), **pypi.env()}
    config = parse_config(CONFIG)
    store = Store(db_url)
    try:
        first = run_audit(config, store, tmp_path / "r", env=env, sleep=lambda _s: None)
        github.set_state(_github(True))
        _, gitee_after = demo_states(reference_text("Apache-2.0"))
        gitee.set_state(gitee_after)
        gitlab.set_state(gitlab_state(after=True))
        pypi.set_state(pypi_state(after=True))
        gitee.faults = FaultPlan(rules=[FaultRule("status_500", path=".", times=999)])  # down
        second = run_audit(config, store, tmp_path / "r", env=env, sleep=lambda _s: None)
    finally:
        store.close()
    for outcome in (first, second):
        validate_report(outcome.report.as_json())
    assert first.report.as_json()["errors"] == []

    rows = {p["name"]: p for p in first.report.as_json()["projects"]}
    assert (rows["Tagged"]["version_source"], rows["Tagged"]["url"]) == (
        "tag",
        f"{GHE}/corp/tagged/releases/tag/v0.1.0",
    )
    assert (rows["Committed"]["version_source"], rows["Committed"]["url"]) == (
        "commit",
        f"{GHE}/corp/committed/commit/{3:040x}",
    )
    assert rows["Released"]["license_analysis"]["url"] == f"{GHE}/corp/released/blob/main/LICENSE"
    # every link of a GitHub Enterprise project is on the Enterprise host, none on github.com
    for report in (first.report.as_json(), second.report.as_json()):
        assert not [u for u in _urls(report) if "github.com" in u]
    on_github = ("Released", "Tagged", "Committed")
    github_changes = [c for c in second.report.as_json()["changes"] if c["project"] in on_github]
    assert {(c["project"], c["kind"], c["evidence_url"]) for c in github_changes} == {
        ("Released", "new_release", f"{GHE}/corp/released/releases/tag/v1.1.0"),
        ("Released", "new_package_version", "https://pypi.example/project/kernel-dsl/3.9.0/"),
        ("Released", "new_package_version", "https://pypi.example/project/kernel-dsl/3.10.0/"),
        ("Tagged", "new_tag", f"{GHE}/corp/tagged/releases/tag/v0.2.0"),
        ("Committed", "new_commit", f"{GHE}/corp/committed/commit/{'c' * 40}"),
    }
    gitlab_changes = {
        (c["project"], c["kind"])
        for c in second.report.as_json()["changes"]
        if "Toolkit" in c["project"]
        or c["project"] == "Runtime Shim"
    }  # fmt: skip
    assert gitlab_changes == {
        ("Compiler Toolkit", "new_release"),
        ("Compiler Toolkit", "new_prerelease"),
        ("Runtime Shim", "new_tag"),
        ("Runtime Shim", "repo_moved"),
        ("Runtime Shim", "repo_archived"),
    }
    assert all(
        u.startswith("https://gitlab.example/")
        for c in second.report.as_json()["changes"]
        if c["project"] in ("Compiler Toolkit", "Runtime Shim")
        for u in _urls(c["evidence_url"])
    )
    # Gitee is down: its two projects are errors with their last good state, nothing else is
    statuses = {p["name"]: p["status"] for p in second.report.as_json()["projects"]}
    assert statuses == {
        "Released": "ok", "Tagged": "ok", "Committed": "ok",
        "Accel Plugin": "error", "Kernel Toolkit": "error",
        "Compiler Toolkit": "ok", "Runtime Shim": "ok",
    }  # fmt: skip
    erred = {e["project"] for e in second.report.as_json()["errors"]}
    assert erred == {"Accel Plugin", "Kernel Toolkit"}
    assert {e["source"] for e in second.report.as_json()["errors"]} == {"gitee"}
    assert not [
        c
        for c in second.report.as_json()["changes"]
        if c["project"] in ("Accel Plugin", "Kernel Toolkit")
    ]
    second_rows = {p["name"]: p for p in second.report.as_json()["projects"]}
    assert second_rows["Accel Plugin"]["version"] == rows["Accel Plugin"]["version"] == "v0.27.1"
