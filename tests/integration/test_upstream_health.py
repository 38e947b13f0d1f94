"""Upstream health from the forge fakes' own dates (GitHub over GraphQL on loopback, a real
database): a repository with no commit and no release or tag for a year is `upstream_dormant`,
an archived one `repo_archived`; the export suggests the catalog's maturity (`dormant`,
`archived`) beside the curated value and never over it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crawler.audit import rebuild_report
from crawler.config import parse_config
from crawler.export.from_store import export_audit
from crawler.findings import source_names
from crawler_fakes.gitea import FakeGitea, GiteaRelease, GiteaRepo, GiteaState
from crawler_fakes.gitee import FakeGitee
from crawler_fakes.gitee_state import GiteeRelease, GiteeRepo, GiteeState
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.github_state import FakeRelease, FakeRepo
from crawler_fakes.gitlab import FakeGitLab
from crawler_fakes.gitlab_state import GitLabProject, GitLabRelease, GitLabState, GitLabTag
from tests.support.audits import Audits, changes

TOKEN = "ghp_" + "h" * 36


def _repo(name: str, repo_id: int, head: str, release: str | None = None,
          archived: bool = False) -> FakeRepo:  # fmt: skip
    return FakeRepo(
        owner="org", name=name, id=repo_id, archived=archived, license_path=None,
        head_sha=f"{repo_id:x}" * 40, head_date=head,
        releases=[FakeRelease("v1.0", "v1.0", release, release)] if release else [],
    )  # fmt: skip


def test_dormant_and_archived_upstreams_flagged_and_suggested_not_imposed(
    db_url: str, tmp_path: Path
) -> None:
    state = GitHubState(
        repos=[
            _repo("glow", 1, "2024-05-11T08:00:00Z"),  # no tag, no commit since May 2024
            _repo("mlu", 2, "2024-09-18T08:00:00Z", release="2024-01-05T00:00:00Z"),
            _repo("legacy", 3, "2099-01-01T00:00:00Z", archived=True),
            _repo("lively", 4, "2020-01-01T00:00:00Z", release="2099-01-01T00:00:00Z"),
        ]
    )
    names = ("glow", "mlu", "legacy", "lively")
    config = parse_config(
        "projects:\n" + "".join(f"  - name: {n}\n    repo: org/{n}\n" for n in names)
    )
    with FakeGitHub(state) as github:
        audits = Audits(github, db_url, tmp_path, github.env(TOKEN))
        first = audits.audit(config)
        again = audits.audit(config)
        store = audits.store
        health = [
            c for c in changes(first.report, "evidence_url", "details")
            if c[1] in ("upstream_dormant", "repo_archived")
        ]  # fmt: skip
        assert health == [
            ("glow", "upstream_dormant", None, "2024-05-11T08:00:00Z",
             "https://github.com/org/glow",
             {"last_commit": "2024-05-11T08:00:00Z", "last_release": None,
              "days": health[0][5]["days"], "repo": "org/glow"}),
            ("mlu", "upstream_dormant", None, "2024-09-18T08:00:00Z",
             "https://github.com/org/mlu",
             {"last_commit": "2024-09-18T08:00:00Z", "last_release": "2024-01-05T00:00:00Z",
              "days": health[1][5]["days"], "repo": "org/mlu"}),
            ("legacy", "repo_archived", False, True, "https://github.com/org/legacy",
             {"repo": "org/legacy"}),
        ]  # fmt: skip
        assert health[0][5]["days"] >= 365 and health[1][5]["days"] >= 365
        # crawler report N shows them as the audit's own report did
        shown = changes(rebuild_report(audits.store, config, first.audit_id),
                        "evidence_url", "details")  # fmt: skip
        assert [c for c in shown if c[1] in ("upstream_dormant", "repo_archived")] == health
        # reported the night it began, then pending: not a change again
        assert [c for c in changes(again.report) if c[1] == "upstream_dormant"] == []
        pending = {(p["project"], p["kind"]) for p in again.report.as_json()["pending"]}
        assert {("glow", "upstream_dormant"), ("mlu", "upstream_dormant")} <= pending

        curated_path = tmp_path / "catalog.json"
        curated = {
            "schema_version": 1, "audit": {"id": 1, "date": "2026-01-01"},
            "projects": [{"id": "glow", "name": "glow", "maturity": "production"}],
            "platforms": [], "integrations": [],
        }  # fmt: skip
        curated_path.write_text(json.dumps(curated), encoding="utf-8")
        labels = {n: s.label for n, s in source_names().items()}
        outcome = export_audit(
            store, config, None, tmp_path / "export", into=curated_path, labels=labels
        )
        audits.close()
    exported = json.loads((tmp_path / "export" / "catalog.json").read_text(encoding="utf-8"))
    suggested = {p["name"]: p.get("maturity_suggestion") for p in exported["projects"]}
    assert suggested == {"glow": "dormant", "mlu": "dormant", "legacy": "archived", "lively": None}
    merged = json.loads(curated_path.read_text(encoding="utf-8"))
    records = {p["name"]: p for p in merged["projects"]}
    assert records["glow"]["maturity"] == "production"  # curated: kept
    assert records["glow"]["maturity_suggestion"] == "dormant"
    assert "maturity" not in records["legacy"]  # a suggestion never becomes the value
    assert outcome.merge_report is not None
    assert outcome.merge_report["suggestions"] == [
        {"path": "$.projects[0].maturity", "id": "glow", "curated": "production",
         "suggested": "dormant"},
        {"path": "$.projects[1].maturity", "id": "mlu", "curated": None,
         "suggested": "dormant"},
        {"path": "$.projects[2].maturity", "id": "legacy", "curated": None,
         "suggested": "archived"},
    ]  # fmt: skip


# -- dormancy on every forge path ----------------------------------------------------------

STALE_HEAD, STALE_RELEASE = "2024-09-18T08:00:00Z", "2024-01-05T00:00:00Z"


def _recent(days: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Forge:
    key: str  # how sources.yaml names a repository there
    # the fake, serving a stale and a fresh repository, the stale one with this description
    start: Callable[[str], Any]
    head_of: Callable[[str], str]  # the head request's path (without its query) per project


def _world() -> list[tuple[str, int, str]]:
    """(name, id, newest release date): one project silent for years, one that just released."""
    return [("stale", 2, STALE_RELEASE), ("fresh", 3, _recent(30))]


def _github_rest(said: str) -> Any:
    repos = [
        FakeRepo(owner="org", name=name, id=repo_id, license_path=None,
                 head_sha=f"{repo_id:x}" * 40, head_date=STALE_HEAD,
                 releases=[FakeRelease("v1.0", "v1.0", date, date)],
                 description=said if name == "stale" else "Kernels.")
        for name, repo_id, date in _world()
    ]  # fmt: skip
    return FakeGitHub(GitHubState(repos=repos), unauth_limit=1000)


def _gitlab(said: str) -> Any:
    projects = [
        GitLabProject(path=f"org/{name}", id=project_id, head_sha=f"{project_id:x}" * 40,
                      head_date=STALE_HEAD, tags=[GitLabTag("v1.0", "ab" * 20, date)],
                      releases=[GitLabRelease("v1.0", "v1.0", date)],
                      description=said if name == "stale" else "Kernels.")
        for name, project_id, date in _world()
    ]  # fmt: skip
    return FakeGitLab(GitLabState(projects=projects))


def _gitee(said: str) -> Any:
    repos = [
        GiteeRepo(owner="org", name=name, id=repo_id, head_sha=f"{repo_id:x}" * 40,
                  head_date=STALE_HEAD, releases=[GiteeRelease("v1.0", date)],
                  description=said if name == "stale" else "Kernels.")
        for name, repo_id, date in _world()
    ]  # fmt: skip
    return FakeGitee(GiteeState(repos=repos), anonymous_limit=1000)


def _gitea(said: str) -> Any:
    repos = [
        GiteaRepo(owner="org", name=name, id=repo_id, head_sha=f"{repo_id:x}" * 40,
                  head_date=STALE_HEAD, releases=[GiteaRelease("v1.0", date)],
                  description=said if name == "stale" else "Kernels.")
        for name, repo_id, date in _world()
    ]  # fmt: skip
    return FakeGitea(GiteaState(repos=repos))


def _config(forge: _Forge) -> Any:
    return parse_config(
        "projects:\n"
        + "".join(f"  - name: {n}\n    {forge.key}: org/{n}\n" for n in ("stale", "fresh"))
    )


FORGES = {
    "github-rest": _Forge("repo", _github_rest, lambda name: f"/repos/org/{name}/commits"),
    "gitlab": _Forge(
        "gitlab", _gitlab,
        lambda name: f"/api/v4/projects/{2 if name == 'stale' else 3}/repository/branches/main",
    ),
    "gitee": _Forge("gitee", _gitee, lambda name: f"/api/v5/repos/org/{name}/commits"),
    "gitea": _Forge("gitea", _gitea, lambda name: f"/api/v1/repos/org/{name}/commits"),
}  # fmt: skip


@pytest.mark.parametrize("forge", sorted(FORGES))
def test_dormancy_is_judged_on_every_forge_path_at_one_conditional_request(
    forge: str, db_url: str, tmp_path: Path
) -> None:
    """Before, only GitHub's GraphQL path read the head commit of a project with releases: a
    project whose newest release is older than a year was never judged on GitHub's REST path,
    GitLab, Gitee or Gitea. Now its head is read (one request; a 304 on an unchanged night),
    and a project that released within the year costs no request for it (its releases say it
    is lively)."""
    spec = FORGES[forge]
    config = _config(spec)
    with spec.start("Kernels.") as server:
        audits = Audits(server, db_url, tmp_path, server.env())
        try:
            first = audits.audit(config)
            heads = [r.path.partition("?")[0] for r in server.requests
                     if r.path.partition("?")[0] in (spec.head_of("stale"),
                                                     spec.head_of("fresh"))]  # fmt: skip
            server.requests.clear()
            again = audits.audit(config)
            later = [(r.path.partition("?")[0], r.status, r.conditional) for r in server.requests
                     if r.path.partition("?")[0] == spec.head_of("stale")]  # fmt: skip
        finally:
            audits.close()
    dormant = [c for c in changes(first.report, "details") if c[1] == "upstream_dormant"]
    assert dormant == [
        ("stale", "upstream_dormant", None, STALE_HEAD,
         {"last_commit": STALE_HEAD, "last_release": STALE_RELEASE,
          "days": dormant[0][4]["days"], "repo": "org/stale"}),
    ]  # fmt: skip
    assert heads == [spec.head_of("stale")]  # the fresh project's head was not asked for
    assert later == [(spec.head_of("stale"), 304, True)]  # unchanged: answered 304
    assert [c for c in changes(again.report) if c[1] == "upstream_dormant"] == []


@pytest.mark.parametrize("forge", sorted(FORGES))
def test_a_description_naming_a_successor_is_read_on_every_forge_path(
    forge: str, db_url: str, tmp_path: Path
) -> None:
    """The forge's description now travels with the repository's facts (GitHub REST here,
    GraphQL in test_upstream_successor.py; GitLab, Gitee, Gitea), and a description that says
    the project was superseded is `upstream_superseded`, with the successor's page on that
    forge. Before, no snapshot carried the description: nothing was reported."""
    spec = FORGES[forge]
    with spec.start("Superseded by vllm-project/vllm-accel; this fork is frozen.") as server:
        audits = Audits(server, db_url, tmp_path, server.env())
        try:
            outcome = audits.audit(_config(spec))
        finally:
            audits.close()
    [found] = [c for c in changes(outcome.report, "evidence_url", "details")
               if c[1] == "upstream_superseded"]  # fmt: skip
    web = found[4].removesuffix("/org/stale")
    assert found[:4] == ("stale", "upstream_superseded", "org/stale", "vllm-project/vllm-accel")
    assert found[5] == {
        "repo": "org/stale", "phrase": "superseded by", "successor": "vllm-project/vllm-accel",
        "successor_url": f"{web}/vllm-project/vllm-accel", "stopped": True,
        "description": "Superseded by vllm-project/vllm-accel; this fork is frozen.",
    }  # fmt: skip
