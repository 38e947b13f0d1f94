"""A repository whose description names no successor but whose README's top does (GitHub over
GraphQL on loopback, a real database): the README is read only for an archived or dormant
repository, again only after a commit (an unchanged night asks nothing; an archived one is
read-only), conditionally, and a README that could not be read
keeps the successor it named: a failure never closes the finding.

Guards the gap "a repository whose README says it moved" (docs/links.md): before, only the
description was read, and none of these repositories was reported."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crawler.config import parse_config
from crawler.export.from_store import export_audit
from crawler.findings import source_names
from crawler.model import ReadmeTop
from crawler.store.pending import open_pending
from crawler_fakes.faults import FaultPlan, FaultRule
from crawler_fakes.gitea import FakeGitea, GiteaRelease, GiteaRepo, GiteaState
from crawler_fakes.gitee import FakeGitee
from crawler_fakes.gitee_state import GiteeRelease, GiteeRepo, GiteeState
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.github_state import FakeRelease, FakeRepo
from crawler_fakes.gitlab import FakeGitLab
from crawler_fakes.gitlab_state import GitLabProject, GitLabRelease, GitLabState
from tests.support.audits import Audits, changes, project_statuses

TOKEN = "ghp_" + "r" * 36
# modelled on HabanaAI's vLLM fork, superseded by vllm-project/vllm-gaudi (not its exact words)
FORK_README = (
    "> [!WARNING]\n"
    "> This fork is no longer maintained: it is superseded by\n"
    "> [vllm-gaudi](https://github.com/vllm-project/vllm-gaudi), the vLLM plugin for Gaudi.\n"
    "\n"
    '<p align="center"><img src="docs/logo.png" alt="vLLM"></p>\n'
    "\n"
    "# vLLM\n"
    "\n"
    "Easy, fast, and cheap LLM serving. Built on PyTorch; replaced by nothing.\n"
    "\n"
    "## Installation\n"
    "\n"
    "Our docs moved to https://docs.vllm.ai (a move of the docs, not of the project).\n"
)
DORMANT_README = (
    "# torch_x\n"
    "\n"
    "**Development continues at [accel/torch_y](https://github.com/accel/torch_y).**\n"
    "\n"
    "## Build\n"
    "\n"
    "```sh\n"
    "pip install torch  # replaced by torch_y in new code\n"
    "```\n"
)
LIVELY_README = "# lively\n\n> This project moved to org/elsewhere.\n"
DESCRIPTION = "A high-throughput and memory-efficient inference and serving engine for LLMs"
LONG_AGO = "2024-05-11T00:00:00Z"  # Glow's last commit: dormant


def _recent(days: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


NEW = _recent(15)  # lively whenever the test runs
DORMANT_PATH = "/repos/accel/torch_x/contents/README.md"
README_PATHS = {"/repos/HabanaAI/vllm-fork/contents/README.md", DORMANT_PATH}


def _repo(
    owner: str,
    name: str,
    repo_id: int,
    readme: str,
    *,
    archived: bool = False,
    head_date: str = NEW,
    released: str | None = NEW,
) -> FakeRepo:
    return FakeRepo(
        owner=owner, name=name, id=repo_id, license_path=None, archived=archived,
        description=DESCRIPTION if repo_id == 1 else None,
        head_sha=f"{repo_id:x}" * 40, head_date=head_date, files={"README.md": readme},
        releases=[FakeRelease("v1.0", "v1.0", released, released)] if released else [],
    )  # fmt: skip


CONFIG = parse_config(
    "projects:\n"
    "  - name: vLLM fork\n    repo: HabanaAI/vllm-fork\n"
    "  - name: torch_x\n    repo: accel/torch_x\n"
    "  - name: Lively\n    repo: org/lively\n"
)


def _readme_requests(github: FakeGitHub) -> list[tuple[str, int, bool]]:
    return sorted(
        (r.path, r.status, r.conditional) for r in github.requests if r.path.endswith("README.md")
    )


def _graphql_bodies(github: FakeGitHub) -> list[bytes]:
    bodies: list[bytes] = []
    github.on_request = lambda _method, path, body: (
        bodies.append(body) if path.startswith("/graphql") else None
    )
    return bodies


def _graphql_readmes(bodies: list[bytes]) -> list[list[tuple[str, str]]]:
    """The READMEs each GraphQL query asked for, as (owner/name, commit), for each query that
    asked for any (``object(expression: "<commit>:README.md")``)."""
    asked = []
    for body in bodies:
        given = json.loads(body)["variables"]
        found = [
            (f"{given[f'o{i}']}/{given[f'n{i}']}", given[f"e{i}"].removesuffix(":README.md"))
            for i in range(len(given))
            if given.get(f"e{i}", "").endswith(":README.md")
        ]
        if found:
            asked.append(found)
    return asked


def _paths(github: FakeGitHub) -> dict[str, int]:
    return dict(Counter(r.path.partition("?")[0] for r in github.requests))


def _readme_of(audits: Audits[FakeGitHub], audit_id: int, project: str) -> ReadmeTop | None:
    return audits.store.states_as_of(audit_id, include_own=True)[project].snapshot.readme


@pytest.mark.parametrize("path", ["graphql", "rest"])
def test_a_readme_names_the_successor_of_an_archived_or_dormant_repository(
    path: str, db_url: str, tmp_path: Path
) -> None:
    """With a token, the READMEs are read in GraphQL, with the batch (one query for every
    repository that wants one, no request of their own); without one, a REST request each."""
    state = GitHubState(
        repos=[
            _repo("HabanaAI", "vllm-fork", 1, FORK_README, archived=True),
            _repo("accel", "torch_x", 2, DORMANT_README, head_date=LONG_AGO, released=None),
            _repo("org", "lively", 3, LIVELY_README),  # lively: its README is never read
        ]
    )
    graphql = path == "graphql"
    with FakeGitHub(state, unauth_limit=1000) as github:
        bodies = _graphql_bodies(github)
        audits = Audits(github, db_url, tmp_path, github.env(TOKEN if graphql else None))
        first = audits.audit(CONFIG)
        # the archived and the dormant repository's README read, the lively one's never
        if graphql:  # one query for both, with the batch; no README request
            assert _graphql_readmes(bodies) == [
                [("HabanaAI/vllm-fork", "1" * 40), ("accel/torch_x", "2" * 40)]
            ]
            assert _paths(github) == {
                "/rate_limit": 1,
                "/graphql": 2,  # the batch, the READMEs
                **{f"/repos/{repo}/git/trees/{n * 40}": 1
                   for repo, n in (("HabanaAI/vllm-fork", "1"), ("accel/torch_x", "2"),
                                   ("org/lively", "3"))},
            }  # fmt: skip
        else:  # one request each
            assert _readme_requests(github) == [(p, 200, False) for p in sorted(README_PATHS)]
            assert _graphql_readmes(bodies) == []
        found = [c for c in changes(first.report, "evidence_url", "details")
                 if c[1] == "upstream_superseded"]  # fmt: skip
        assert found == [
            ("vLLM fork", "upstream_superseded", "HabanaAI/vllm-fork",
             "https://github.com/vllm-project/vllm-gaudi",
             "https://github.com/HabanaAI/vllm-fork/blob/main/README.md",
             {"repo": "HabanaAI/vllm-fork", "phrase": "superseded by",
              "successor": "https://github.com/vllm-project/vllm-gaudi",
              "successor_url": "https://github.com/vllm-project/vllm-gaudi", "stopped": True,
              "description": DESCRIPTION, "said_in": "readme",
              "readme_url": "https://github.com/HabanaAI/vllm-fork/blob/main/README.md",
              "readme": "[!WARNING] This fork is no longer maintained: it is superseded by "
                        "[vllm-gaudi](https://github.com/vllm-project/vllm-gaudi), the vLLM "
                        "plugin for Gaudi."}),
            ("torch_x", "upstream_superseded", "accel/torch_x",
             "https://github.com/accel/torch_y",
             "https://github.com/accel/torch_x/blob/main/README.md",
             {"repo": "accel/torch_x", "phrase": "development continues at",
              "successor": "https://github.com/accel/torch_y",
              "successor_url": "https://github.com/accel/torch_y", "stopped": False,
              "description": "", "said_in": "readme",
              "readme_url": "https://github.com/accel/torch_x/blob/main/README.md",
              "readme": "Development continues at [accel/torch_y]"
                        "(https://github.com/accel/torch_y)."}),
        ]  # fmt: skip
        assert first.report_dir is not None
        markdown = (first.report_dir / "report.md").read_text(encoding="utf-8")
        assert (
            "- **vLLM fork** upstream superseded: HabanaAI/vllm-fork: its README says: "
            "superseded by `https://github.com/vllm-project/vllm-gaudi` — suggested maturity "
            "'superseded'"
        ) in markdown

        # an unchanged night: the heads are the commits the READMEs were read at: no request,
        # and with a token no query beyond the batch's
        github.reset_log()
        bodies.clear()
        second = audits.audit(CONFIG)
        assert _readme_requests(github) == []
        assert _graphql_readmes(bodies) == []
        if graphql:
            assert _paths(github) == {"/rate_limit": 1, "/graphql": 1}
        assert [c for c in changes(second.report) if c[1] == "upstream_superseded"] == []

        # a commit lands on both (an old date: still dormant): the dormant repository's README
        # is asked again (by REST, conditionally); the archived one's cannot have changed
        for moved in state.repos[:2]:
            moved.head_sha = "e" * 40
        github.set_state(state)
        github.reset_log()
        bodies.clear()
        third = audits.audit(CONFIG)
        if graphql:
            assert _graphql_readmes(bodies) == [[("accel/torch_x", "e" * 40)]]
            assert _readme_requests(github) == []
        else:
            assert _readme_requests(github) == [(DORMANT_PATH, 304, True)]
        read = _readme_of(audits, third.audit_id, "torch_x")
        assert read is not None and (read.commit, read.url) == (
            "e" * 40,
            "https://github.com/accel/torch_x/blob/main/README.md",
        )

        # the README cannot be read tonight: the last reading is kept, the finding stays
        # pending (errors are not findings)
        for moved in state.repos[:2]:
            moved.head_sha = "f" * 40
        github.set_state(state)
        github.faults = FaultPlan(rules=[
            FaultRule("graphql_partial", path="/graphql", field="object", times=100,
                      message="Could not read the blob.")  # a files query's objects
            if graphql else FaultRule("status_500", path="README", times=100)
        ])  # fmt: skip
        github.reset_log()
        bodies.clear()
        fourth = audits.audit(CONFIG)
        github.faults = None
        if graphql:
            assert _graphql_readmes(bodies) == [[("accel/torch_x", "f" * 40)]]
            assert _readme_requests(github) == []
        else:
            assert {(r.path, r.fault) for r in github.requests
                    if r.path.endswith("README.md")} == {(DORMANT_PATH, "status_500")}  # fmt: skip
        assert _readme_of(audits, fourth.audit_id, "torch_x") == read  # the last one kept
        pending = {(i.project, i.kind) for i in open_pending(audits.store)}
        assert {("vLLM fork", "upstream_superseded"), ("torch_x", "upstream_superseded")} <= (
            pending
        )

        # the README no longer says so: the finding closes as fixed
        state.repos[1].files = {"README.md": "# torch_x\n\nA small library.\n"}
        state.repos[1].head_sha = "a" * 40  # the commit that changed it
        github.set_state(state)
        audits.audit(CONFIG)
        pending = {(i.project, i.kind) for i in open_pending(audits.store)}
        assert ("torch_x", "upstream_superseded") not in pending
        assert ("vLLM fork", "upstream_superseded") in pending
        audits.close()


def test_a_spent_graphql_budget_leaves_the_readme_at_its_last_reading(
    db_url: str, tmp_path: Path
) -> None:
    """The batch's query is answered, then GraphQL's budget is down to the reserve: the README
    query is not sent (the budget handling of every query), the README stays at its last
    reading, the project's other facts are tonight's, and the finding stays pending."""
    state = GitHubState(
        repos=[_repo("accel", "torch_x", 2, DORMANT_README, head_date=LONG_AGO, released=None)]
    )
    config = parse_config(
        "github: {budget_reserve: 1}\nprojects:\n  - name: torch_x\n    repo: accel/torch_x\n"
    )
    with FakeGitHub(state) as github:
        bodies = _graphql_bodies(github)
        audits = Audits(github, db_url, tmp_path, github.env(TOKEN))
        first = audits.audit(config)
        read = _readme_of(audits, first.audit_id, "torch_x")
        assert read is not None and read.commit == "2" * 40
        state.repos[0].head_sha = "e" * 40  # a commit: the README is wanted again
        github.set_state(state)
        github.set_rate_limit(2, resource="graphql")  # the batch's query, then the reserve
        github.reset_log()
        bodies.clear()
        second = audits.audit(config)
        assert _paths(github)["/graphql"] == 1  # the batch's; no README query
        assert (_graphql_readmes(bodies), _readme_requests(github)) == ([], [])
        assert project_statuses(second.report) == {"torch_x": "ok"}
        state_now = audits.store.states_as_of(second.audit_id, include_own=True)["torch_x"]
        assert state_now.snapshot.head is not None and state_now.snapshot.head.sha == "e" * 40
        assert state_now.snapshot.readme == read  # the last reading, kept
        pending = {(i.project, i.kind) for i in open_pending(audits.store)}
        assert ("torch_x", "upstream_superseded") in pending
        audits.close()


@pytest.mark.parametrize("path", ["graphql", "rest"])
def test_no_readme_at_the_head_is_an_answer_on_either_path(
    path: str, db_url: str, tmp_path: Path
) -> None:
    """A dormant repository with no README.md at its head (GraphQL's ``object: null``, REST's
    404): recorded as no README at that commit, the project read without an error, and not
    asked again while the head stays there."""
    bare = _repo("accel", "bare", 5, "", head_date=LONG_AGO, released=None)
    bare.files = {"docs/README.md": "Moved to accel/elsewhere.\n"}  # not the root's README.md
    config = parse_config("projects:\n  - name: bare\n    repo: accel/bare\n")
    graphql = path == "graphql"
    with FakeGitHub(GitHubState(repos=[bare]), unauth_limit=1000) as github:
        bodies = _graphql_bodies(github)
        audits = Audits(github, db_url, tmp_path, github.env(TOKEN if graphql else None))
        first = audits.audit(config)
        if graphql:
            assert _graphql_readmes(bodies) == [[("accel/bare", "5" * 40)]]
            assert _readme_requests(github) == []
        else:
            asked = [("/repos/accel/bare/contents/README.md", 404, False)]
            assert _readme_requests(github) == asked
        assert _readme_of(audits, first.audit_id, "bare") == ReadmeTop("", "", "5" * 40)
        assert project_statuses(first.report) == {"bare": "ok"}
        assert [c[1] for c in changes(first.report)] == ["project_added", "upstream_dormant"]
        github.reset_log()
        bodies.clear()
        second = audits.audit(config)
        assert (_graphql_readmes(bodies), _readme_requests(github)) == ([], [])
        assert _readme_of(audits, second.audit_id, "bare") == ReadmeTop("", "", "5" * 40)
        audits.close()


# -- every forge path: an archived repository's README, read through the forge's file API ----

STALE = "2024-09-18T08:00:00Z"
BANNER = "> **Note**: superseded by vllm-project/vllm-accel.\n\n# stale\n\nOld.\n"


def _github_rest() -> Any:
    repos = [
        FakeRepo(owner="org", name=name, id=repo_id, license_path=None, archived=archived,
                 head_sha=f"{repo_id:x}" * 40, head_date=NEW, description="Kernels.",
                 releases=[FakeRelease("v1.0", "v1.0", NEW, NEW)],
                 files={"README.md": BANNER})
        for name, repo_id, archived in (("stale", 2, True), ("fresh", 3, False))
    ]  # fmt: skip
    return FakeGitHub(GitHubState(repos=repos), unauth_limit=1000)


def _gitlab() -> Any:
    projects = [
        GitLabProject(path=f"org/{name}", id=project_id, head_sha=f"{project_id:x}" * 40,
                      archived=archived, head_date=NEW, description="Kernels.",
                      releases=[GitLabRelease("v1.0", "v1.0", NEW)],
                      files={"README.md": BANNER})
        for name, project_id, archived in (("stale", 2, True), ("fresh", 3, False))
    ]  # fmt: skip
    return FakeGitLab(GitLabState(projects=projects))


def _gitee() -> Any:
    repos = [
        GiteeRepo(owner="org", name=name, id=repo_id, head_sha=f"{repo_id:x}" * 40,
                  head_date=STALE, releases=[GiteeRelease("v1.0", STALE)],
                  description="Kernels.", files={"README.md": BANNER})
        for name, repo_id in (("stale", 2),)
    ]  # fmt: skip
    return FakeGitee(GiteeState(repos=repos), anonymous_limit=1000)


def _gitea() -> Any:
    repos = [
        GiteaRepo(owner="org", name=name, id=repo_id, head_sha=f"{repo_id:x}" * 40,
                  archived=archived, head_date=NEW, releases=[GiteaRelease("v1.0", NEW)],
                  description="Kernels.", files={"README.md": BANNER})
        for name, repo_id, archived in (("stale", 2, True), ("fresh", 3, False))
    ]  # fmt: skip
    return FakeGitea(GiteaState(repos=repos))


# the fake, how sources.yaml names a repository there, the README request of org/stale
FORGES: dict[str, tuple[Callable[[], Any], str, str]] = {
    "github-rest": (_github_rest, "repo", "/repos/org/stale/contents/README.md"),
    "gitlab": (_gitlab, "gitlab", "/api/v4/projects/2/repository/files/README.md"),
    "gitee": (_gitee, "gitee", "/api/v5/repos/org/stale/contents/README.md"),
    "gitea": (_gitea, "gitea", "/api/v1/repos/org/stale/contents/README.md"),
}


@pytest.mark.parametrize("forge", sorted(FORGES))
def test_a_readme_is_read_for_a_successor_on_every_forge_path(
    forge: str, db_url: str, tmp_path: Path
) -> None:
    """GitHub's REST path, GitLab, Gitee and Gitea: the README of the archived (or, on Gitee,
    dormant) repository is read through the forge's own file API, once (the lively one's never),
    not asked again while its head stays at the commit it was read at, and its banner names the
    successor on that forge."""
    start, key, path = FORGES[forge]
    names = ("stale", "fresh") if forge != "gitee" else ("stale",)
    config = parse_config(
        "projects:\n" + "".join(f"  - name: {n}\n    {key}: org/{n}\n" for n in names)
    )
    with start() as server:
        audits = Audits(server, db_url, tmp_path, server.env())
        try:
            first = audits.audit(config)
            asked = [r.path.partition("?")[0] for r in server.requests if "README" in r.path]
            server.requests.clear()
            audits.audit(config)
            again = [(r.path.partition("?")[0], r.status, r.conditional)
                     for r in server.requests if "README" in r.path]  # fmt: skip
        finally:
            audits.close()
    assert asked == [path]
    assert again == []
    [found] = [c for c in changes(first.report, "details") if c[1] == "upstream_superseded"]
    web = found[4]["readme_url"].partition("/org/stale")[0]
    assert found[:4] == ("stale", "upstream_superseded", "org/stale", "vllm-project/vllm-accel")
    assert (found[4]["said_in"], found[4]["successor_url"], found[4]["readme"]) == (
        "readme",
        f"{web}/vllm-project/vllm-accel",
        "Note: superseded by vllm-project/vllm-accel.",
    )


def test_a_dormant_repository_whose_readme_says_superseded_is_suggested_superseded(
    db_url: str, tmp_path: Path
) -> None:
    """The export's maturity suggestion reads the README's successor as it reads the
    description's: a dormant repository whose README says it was superseded is suggested
    `superseded` (it stopped, and its successor is named), not only `dormant` as before."""
    readme = "# torch_z\n\n**Deprecated**: superseded by [accel/torch_w](https://github.com/accel/torch_w).\n"
    state = GitHubState(
        repos=[_repo("accel", "torch_z", 4, readme, head_date=LONG_AGO, released=None)]
    )
    config = parse_config("projects:\n  - name: torch_z\n    repo: accel/torch_z\n")
    with FakeGitHub(state) as github:
        audits = Audits(github, db_url, tmp_path, github.env(TOKEN))
        audits.audit(config)
        labels = {n: s.label for n, s in source_names().items()}
        export_audit(audits.store, config, None, tmp_path / "export", labels=labels)
        audits.close()
    exported = json.loads((tmp_path / "export" / "catalog.json").read_text("utf-8"))
    assert [(p["name"], p.get("maturity_suggestion")) for p in exported["projects"]] == [
        ("torch_z", "superseded")
    ]
