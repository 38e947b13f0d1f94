"""Repository links of items the audit does not track are asked of the forge's API, not over
HTTP (the fake GitHub on loopback, its pages on its own host as GitHub Enterprise serves them;
a real database): a renamed repository is `link_moved` to its new page, an archived one
`repo_archived`, a missing one broken on the second night; with a token all of them in one
GraphQL query, without one a REST request each; a repository the audit tracks tonight costs no
request; a spent budget leaves them for a later night, never a finding."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.config import parse_config
from crawler.store.links import link_histories
from crawler_fakes.gitea import FakeGitea, GiteaRepo, GiteaState
from crawler_fakes.gitee import FakeGitee
from crawler_fakes.gitee_state import GiteeRepo, GiteeState
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.github_state import FakeRelease, FakeRepo
from crawler_fakes.gitlab import FakeGitLab
from crawler_fakes.gitlab_state import GitLabProject, GitLabState
from tests.support.audits import Audits, a_day_passes, changes

TOKEN = "ghp_" + "k" * 36
UNTRACKED = ("org/frozen", "old-org/renamed", "org/gone")  # in the order they are cited


def _repo(owner: str, name: str, repo_id: int, **facts: Any) -> FakeRepo:
    return FakeRepo(
        owner=owner, name=name, id=repo_id, license_path=None,
        head_sha=f"{repo_id:x}" * 40, head_date="2026-11-20T08:00:00Z",
        releases=[FakeRelease("v1.0", "v1.0", "2026-11-01T00:00:00Z", "2026-11-01T00:00:00Z")],
        **facts,
    )  # fmt: skip


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    state = GitHubState(
        repos=[
            _repo("org", "kit", 1),
            _repo("old-org", "renamed", 2, moved_to="new-org/renamed"),
            _repo("org", "frozen", 3, archived=True),
        ]
    )
    with FakeGitHub(state, unauth_limit=1000) as server:
        server.web_url = server.base_url  # its pages on its own host, as GitHub Enterprise
        yield server


def _config(github: FakeGitHub, tmp_path: Path) -> str:
    web = github.base_url
    catalog = {
        "projects": [
            {"id": "renamed", "name": "Renamed", "url": f"{web}/old-org/renamed"},
            {"id": "gone", "name": "Gone", "url": f"{web}/org/gone"},
            {"id": "kit", "name": "Kit", "url": f"{web}/org/kit"},  # tracked: its snapshot
            {"id": "fail", "name": "Fail", "url": f"{web}/org/fail"},  # tracked, failing
        ],
        "platforms": [], "integrations": [],
    }  # fmt: skip
    (tmp_path / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    (tmp_path / "sources.yaml").write_text("", encoding="utf-8")
    return (
        "settings: {catalog: catalog.json, links_per_night: 100,"
        ' private_networks: ["127.0.0.0/8"]}\n'
        "github: {retry_base_delay: 0, max_retries: 0}\n"
        "projects:\n"
        "  - name: Kit\n    repo: org/kit\n"
        "  - name: Fail\n    repo: org/fail\n"
        "  - name: Frozen\n"
        "    not_trackable: closed builds; its repository holds the documentation only\n"
        f"    homepage: {web}/org/frozen\n"  # line 10
    )


def _graphql_bodies(github: FakeGitHub) -> list[bytes]:
    bodies: list[bytes] = []
    github.on_request = lambda _method, path, body: (
        bodies.append(body) if path.startswith("/graphql") else None
    )
    return bodies


def _lookups(bodies: list[bytes]) -> list[list[str]]:
    """The repositories each link lookup query asked for, as owner/name."""
    asked = []
    for body in bodies:
        doc = json.loads(body)
        if "CrawlerLinks" in doc["query"]:
            names = doc["variables"]
            asked.append([f"{names[f'o{i}']}/{names[f'n{i}']}" for i in range(len(names) // 2)])
    return asked


@pytest.mark.parametrize("token", [TOKEN, None], ids=["graphql", "rest"])
def test_untracked_repository_links_are_answered_by_the_forge_api(
    github: FakeGitHub, token: str | None, db_url: str, tmp_path: Path
) -> None:
    config = parse_config(_config(github, tmp_path), path=str(tmp_path / "sources.yaml"))
    web = github.base_url
    bodies = _graphql_bodies(github)
    audits = Audits(github, db_url, tmp_path, github.env(token))
    try:
        first = audits.audit(config)
        asked = [r.path.partition("?")[0] for r in github.requests]
        found = [c for c in changes(first.report, "details")
                 if c[1] in ("link_moved", "link_broken", "repo_archived")]  # fmt: skip
        assert [(c[0], c[1], c[2], c[3]) for c in found] == [
            ("Frozen", "repo_archived", False, True),
            ("Renamed", "link_moved", f"{web}/old-org/renamed", f"{web}/new-org/renamed"),
        ]
        assert found[0][4]["where"] == ["sources.yaml line 10 (homepage)"]
        failing = [(e["url"], e["status"], e["reason"]) for e in first.report.as_json()["links"]]
        assert failing == [
            (f"{web}/org/gone", 404, "the forge's API has no repository org/gone")
        ]
        # no repository page was asked over HTTP (tracked ones cost no request at all); the
        # other pages on the forge's host are (Kit's release page: an evidence link)
        pages = {f"/{name}" for name in (*UNTRACKED, "org/kit", "org/fail")}
        assert [p for p in asked if p in pages] == []
        assert "/org/kit/releases/tag/v1.0" in asked
        if token:
            assert _lookups(bodies) == [list(UNTRACKED)]  # one query for the three
        else:
            lookups = [p for p in asked
                       if p.startswith(("/repos/", "/repositories/")) and p.count("/") in (2, 3)]
            assert sorted(lookups[:2]) == ["/repos/org/fail", "/repos/org/kit"]  # the projects
            assert lookups[2:] == [  # then one request each (a rename redirects by id)
                "/repos/org/frozen", "/repos/old-org/renamed", "/repositories/2",
                "/repos/org/gone",
            ]
        usage = first.report.as_json()["requests"]["sources"]["links"]
        assert (usage["answered_by_forge"], usage["answered_by_forge_api"]) == (1, 3)
        assert usage["forge_api_requests"] == (1 if token else 3)
        assert link_histories(audits.store, [f"{web}/org/fail"]) == {}  # not checked tonight

        a_day_passes(audits.store)
        second = audits.audit(config)
        assert [(c[0], c[1], c[2]) for c in changes(second.report)
                if c[1].startswith("link_") or c[1] == "repo_archived"] == [
            ("Gone", "link_broken", f"{web}/org/gone"),
        ]  # fmt: skip
        pending = {(p["project"], p["kind"]) for p in second.report.as_json()["pending"]}
        assert {("Renamed", "link_moved"), ("Gone", "link_broken")} <= pending
    finally:
        audits.close()


def test_a_spent_budget_leaves_repository_links_for_a_later_night(
    github: FakeGitHub, db_url: str, tmp_path: Path
) -> None:
    config = parse_config(_config(github, tmp_path), path=str(tmp_path / "sources.yaml"))
    bodies = _graphql_bodies(github)
    audits = Audits(github, db_url, tmp_path, github.env(TOKEN))
    try:
        audits.audit(config)
        a_day_passes(audits.store)
        bodies.clear()
        github.set_rate_limit(1, resource="graphql")  # the projects' query spends the last point
        second = audits.audit(config)
    finally:
        audits.close()
    assert _lookups(bodies) == []  # never sent: GitHub would have refused it
    usage = second.report.as_json()["requests"]["sources"]["links"]
    assert (usage["answered_by_forge_api"], usage["left_for_later"]) == (0, 3)
    # not a second night of 404 for the missing one: it was not asked
    assert [c for c in changes(second.report) if c[1] == "link_broken"] == []
    assert [e["url"] for e in second.report.as_json()["links"]] == []


def _gitee(web: str) -> Any:
    return FakeGitee(GiteeState(repos=[
        GiteeRepo(owner="org", name="live", id=1, head_sha="1" * 40, head_date=HEAD),
        GiteeRepo(owner="org", name="frozen", id=2, status="关闭"),
        GiteeRepo(owner="org", name="old", id=3, moved_to="new-org/moved"),
    ]), anonymous_limit=100, web_url=web)  # fmt: skip


def _gitlab(web: str) -> Any:
    return FakeGitLab(GitLabState(projects=[
        GitLabProject(path="org/live", id=1, head_sha="1" * 40, head_date=HEAD),
        GitLabProject(path="org/frozen", id=2, archived=True),
        GitLabProject(path="new-org/sub/moved", id=3, old_paths=["org/old"]),
    ]), web_url=web)  # fmt: skip


def _gitea(web: str) -> Any:
    return FakeGitea(GiteaState(repos=[
        GiteaRepo(owner="org", name="live", id=1, head_sha="1" * 40, head_date=HEAD),
        GiteaRepo(owner="org", name="frozen", id=2, archived=True),
    ]), web_url=web)  # fmt: skip


HEAD = "2026-11-20T08:00:00Z"
OTHER_FORGES = {"gitee": (_gitee, "/api/v5/repos/"), "gitlab": (_gitlab, "/api/v4/projects/"),
                "gitea": (_gitea, "/api/v1/repos/")}  # fmt: skip


@pytest.mark.parametrize("forge", sorted(OTHER_FORGES))
def test_gitee_gitlab_and_gitea_answer_their_repository_links(
    forge: str, db_url: str, tmp_path: Path
) -> None:
    """One conditional API request per repository link on Gitee, GitLab and Gitea (their pages
    on the API's host here): ok, archived, renamed (where the fake renames: Gitee and GitLab
    redirect the old path), missing. No page is fetched."""
    start, api = OTHER_FORGES[forge]
    web = "https://forge.example"
    with start(web) as server:
        host = server.base_url  # the forge's host: the API's (GITEE_API_URL, GITLAB_URL…)
        names = ["org/live", "org/frozen", "org/gone"] + (["org/old"] if forge != "gitea" else [])
        catalog = {"projects": [{"id": f"p{i}", "name": f"P{i}", "url": f"{host}/{name}"}
                                for i, name in enumerate(names)],
                   "platforms": [], "integrations": []}  # fmt: skip
        (tmp_path / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
        config = parse_config(
            "settings: {catalog: catalog.json, links_per_night: 100,"
            ' private_networks: ["127.0.0.0/8"]}\n'
            "projects:\n  - name: Closed\n    not_trackable: no public repository\n",
            path=str(tmp_path / "sources.yaml"),
        )
        audits = Audits(server, db_url, tmp_path, server.env())
        try:
            outcome = audits.audit(config)
            seen = link_histories(audits.store)
        finally:
            audits.close()
        asked = [r.path for r in server.requests]
    outcomes = {url.removeprefix(host + "/"): (h.outcome, h.moved_to) for url, h in seen.items()}
    moved = {"gitee": f"{web}/new-org/moved", "gitlab": f"{web}/new-org/sub/moved"}.get(forge)
    assert outcomes == {
        "org/live": ("ok", None), "org/frozen": ("archived", None), "org/gone": ("failing", None),
        **({"org/old": ("moved", moved)} if moved else {}),
    }  # fmt: skip
    assert len(asked) >= len(names)  # a request each (a rename's redirect one more)
    assert all(path.startswith(api) for path in asked), asked  # the API only
    kinds = sorted((c[0], c[1]) for c in changes(outcome.report) if c[1] != "project_added")
    assert kinds == [("P1", "repo_archived")] + ([("P3", "link_moved")] if moved else [])
