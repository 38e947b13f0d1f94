"""One root-license choice on every path of every forge (issue 32, defect 2).

The GNU layout of an LGPL project -- the GPL text in COPYING, the LGPL's additional permissions
in COPYING.LESSER -- is the LGPL, whichever way the repository is read. GitHub's REST
``/license`` (the path without a token) names COPYING, and the crawler read the GPL there and
reported "GitHub reads LGPL-3.0, the file reads GPL-3.0-only"; GitLab's ``license_url`` can
name COPYING just the same. Each path below is a whole audit against a loopback fake; the
texts are the license data package's, read at test time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_templates import reference_text
from crawler.audit import run_audit
from crawler.config import parse_config
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, FakeRepo, GitHubState
from crawler_fakes.gitlab import FakeGitLab, GitLabProject, GitLabState

TOKEN = "ghp_root_license_choice_0c4d1e"
HEAD = "2026-11-01T00:00:00Z"
# what each path must report for the pair: GitHub's (GitLab's) verdict, the file read, its ids
PAIR = ("LGPL-3.0", "COPYING.LESSER", ["LGPL-3.0-only"], "exact", False)


def gpl() -> str:
    return reference_text("GPL-3.0-only")


def lesser() -> str:
    return reference_text("LGPL-3.0-only")


def github_pair(named: str = "COPYING") -> GitHubState:
    """GitHub's licensee reads the pair as LGPL-3.0, and its ``/license`` names ``named``."""
    other = "COPYING.LESSER" if named == "COPYING" else "COPYING"
    texts = {"COPYING": gpl(), "COPYING.LESSER": lesser()}
    return GitHubState(
        [
            FakeRepo(
                owner="gnu",
                name="pair",
                id=1,
                license_key="lgpl-3.0",
                spdx_id="LGPL-3.0",
                license_name="GNU Lesser General Public License v3.0",
                license_path=named,
                license_text=texts[named],
                head_sha="1" * 40,
                head_date=HEAD,
                files={other: texts[other], "README.md": "# pair\n"},
            ),
        ]
    )


def seen(outcome: Any) -> dict[str, tuple[Any, ...]]:
    report = outcome.report.as_json()
    assert report["errors"] == [], report["errors"]
    return {
        p["name"]: (
            p["forge_license"],
            p["license_analysis"]["path"],
            p["license_analysis"]["spdx_ids"],
            p["license_analysis"]["verdict"],
            p["license_analysis"]["differs_from_forge"],
        )
        for p in report["projects"]
    }


def audit(db_url: str, tmp: Path, config: str, env: dict[str, str]) -> Any:
    store = Store(db_url)
    try:
        return run_audit(
            parse_config(config), store, tmp / "reports", env=env, sleep=lambda _: None
        )
    finally:
        store.close()


@pytest.mark.parametrize(
    ("inventory", "token"),
    [("always", None), ("never", None), ("always", TOKEN), ("never", TOKEN)],
    ids=["rest-with-tree", "rest-without-tree", "graphql-with-tree", "graphql-without-tree"],
)
def test_the_gnu_pair_reads_as_the_lgpl_on_every_github_path(
    db_url: str, tmp_path: Path, inventory: str, token: str | None
) -> None:
    """REST with and without the tree scan (``inventory: never``: only /license and what it
    names), GraphQL with and without: COPYING.LESSER, LGPL-3.0-only, no disagreement. Before
    the fix both REST paths read COPYING as GPL-3.0-only and reported a disagreement."""
    config = (
        f"github: {{inventory: {inventory}, retry_base_delay: 0, max_retries: 0}}\n"
        "projects:\n  - name: LGPL pair\n    repo: gnu/pair\n"
    )
    with FakeGitHub(github_pair(), token=token) as gh:
        outcome = audit(db_url, tmp_path, config, gh.env(token) if token else gh.env())
    assert seen(outcome) == {"LGPL pair": PAIR}


def test_the_root_license_stays_chosen_by_the_rule_on_the_next_rest_night(
    db_url: str, tmp_path: Path
) -> None:
    """A second REST night with the tree unchanged keeps COPYING.LESSER (carried, not read
    again), and a night where GitHub's /license names COPYING.LESSER itself agrees."""
    config = (
        "github: {inventory: always, retry_base_delay: 0, max_retries: 0}\n"
        "projects:\n  - name: LGPL pair\n    repo: gnu/pair\n"
    )
    state = github_pair()
    with FakeGitHub(state) as gh:
        first = audit(db_url, tmp_path, config, gh.env())
        second = audit(db_url, tmp_path, config, gh.env())
    assert seen(first) == seen(second) == {"LGPL pair": PAIR}
    with FakeGitHub(github_pair(named="COPYING.LESSER")) as gh:
        third = audit(db_url, tmp_path, config, gh.env())
    assert seen(third) == {"LGPL pair": PAIR}


def test_the_gnu_pair_reads_as_the_lgpl_on_gitlab(db_url: str, tmp_path: Path) -> None:
    """GitLab's ``license_url`` names COPYING beside COPYING.LESSER: the pair is still the
    LGPL (before the fix: "GitLab reads LGPL-3.0, the file reads GPL-3.0-only")."""
    state = GitLabState(
        [
            GitLabProject(
                path="gnu/pair",
                id=41,
                license_key="lgpl-3.0",
                license_name="GNU Lesser General Public License v3.0",
                license_path="COPYING",
                license_text=gpl(),
                files={"COPYING.LESSER": lesser(), "README.md": "# pair\n"},
                head_sha="4" * 40,
                head_date=HEAD,
            ),
            # a lone COPYING is the GPL it says: the pair rule needs the pair
            GitLabProject(
                path="gnu/alone",
                id=42,
                license_key="gpl-3.0",
                license_name="GNU General Public License v3.0",
                license_path="COPYING",
                license_text=gpl(),
                head_sha="5" * 40,
                head_date=HEAD,
            ),
        ]
    )
    config = (
        "gitlab: {retry_base_delay: 0, max_retries: 0}\nprojects:\n"
        "  - name: LGPL pair\n    gitlab: gnu/pair\n"
        "  - name: GPL alone\n    gitlab: gnu/alone\n"
    )
    with FakeGitLab(state) as gl:
        outcome = audit(db_url, tmp_path, config, gl.env())
    assert seen(outcome) == {
        "LGPL pair": PAIR,
        "GPL alone": ("GPL-3.0", "COPYING", ["GPL-3.0-only"], "exact", False),
    }


def test_the_gnu_pair_reads_as_the_lgpl_on_gitee_and_gitea(db_url: str, tmp_path: Path) -> None:
    """The sources that list the root themselves (Gitee, Gitea) apply the same rule."""
    from crawler_fakes.gitea import FakeGitea, GiteaRepo, GiteaState
    from crawler_fakes.gitee import FakeGitee, GiteeRepo, GiteeState

    files = {"COPYING": gpl(), "COPYING.LESSER": lesser(), "README.md": "# pair\n"}
    gitee = GiteeState(
        [
            GiteeRepo(
                owner="gnu",
                name="pair",
                id=51,
                license="LGPL-3.0",
                head_sha="6" * 40,
                head_date=HEAD,
                files=dict(files),
            )
        ]
    )
    gitea = GiteaState(
        [
            GiteaRepo(
                owner="gnu",
                name="pair",
                id=61,
                licenses=["LGPL-3.0"],
                head_sha="7" * 40,
                head_date=HEAD,
                files=dict(files),
            )
        ]
    )
    config = (
        "gitee: {retry_base_delay: 0, max_retries: 0}\n"
        "gitea: {retry_base_delay: 0, max_retries: 0}\nprojects:\n"
        "  - name: Gitee pair\n    gitee: gnu/pair\n"
        "  - name: Gitea pair\n    gitea: gnu/pair\n"
    )
    with FakeGitee(gitee) as ge, FakeGitea(gitea) as ga:
        outcome = audit(db_url, tmp_path, config, {**ge.env(), **ga.env()})
    normalised = ("LGPL-3.0-only", *PAIR[1:])  # these two report the verdict normalised
    assert seen(outcome) == {"Gitee pair": normalised, "Gitea pair": normalised}


def test_the_git_source_chooses_the_lesser_file_of_the_pair(tmp_path: Path) -> None:
    """git's own smart HTTP (no forge verdict): the root listing's choice is COPYING.LESSER."""
    from crawler.config import Location, ProjectSpec, Settings
    from crawler.model import ProjectStatus
    from crawler_fakes.git_http import GitHttpServer
    from tests.support.git_repos import GitRepo
    from tests.support.sources import open_in_guard

    root = tmp_path / "served"
    root.mkdir()
    repo = GitRepo(root, "gnu/pair.git")
    repo.commit(HEAD, {"COPYING": gpl(), "COPYING.LESSER": lesser(), "README.md": "# pair\n"})
    repo.tag("v1.0")
    repo.push()
    with GitHttpServer(root) as served:
        source = open_in_guard(
            "git",
            {},
            now="2026-11-02T03:00:00Z",
            common=Settings(allow_private_addresses=True),
            settings={"concurrency": 1},
        )
        spec = ProjectSpec(
            name="pair", forge=Location(source="git", path=served.url("gnu/pair.git"))
        )
        result = source.fetch([spec], {})["pair"]
    assert result.status == ProjectStatus.OK and result.snapshot is not None
    found = result.snapshot.license_file
    assert found is not None and (found.path, found.text) == ("COPYING.LESSER", lesser())


def test_graphql_looks_at_the_root_again_when_the_forge_says_the_pair(
    db_url: str, tmp_path: Path
) -> None:
    """With a token the known license path is asked for again each night: a COPYING.LESSER
    added beside a known COPYING (GitHub's verdict turning to LGPL-3.0) must move the reading
    to the pair, not keep reading COPYING's unchanged GPL blob (before the fix: "GitHub reads
    LGPL-3.0, the file reads GPL-3.0-only")."""
    config = (
        "github: {retry_base_delay: 0, max_retries: 0}\n"
        "projects:\n  - name: LGPL pair\n    repo: gnu/pair\n"
    )
    alone = GitHubState(
        [
            FakeRepo(
                owner="gnu",
                name="pair",
                id=1,
                license_key="gpl-3.0",
                spdx_id="GPL-3.0",
                license_name="GNU General Public License v3.0",
                license_path="COPYING",
                license_text=gpl(),
                head_sha="1" * 40,
                head_date=HEAD,
                files={"README.md": "# pair\n"},
            ),
        ]
    )
    with FakeGitHub(alone, token=TOKEN) as gh:
        first = audit(db_url, tmp_path, config, gh.env(TOKEN))
    assert seen(first) == {"LGPL pair": ("GPL-3.0", "COPYING", ["GPL-3.0-only"], "exact", False)}
    pair = github_pair()
    pair.repos[0].head_sha = "2" * 40
    with FakeGitHub(pair, token=TOKEN) as gh:
        second = audit(db_url, tmp_path, config, gh.env(TOKEN))
    assert seen(second) == {"LGPL pair": PAIR}


def test_a_license_too_big_for_graphql_is_read_at_the_chosen_path(
    db_url: str, tmp_path: Path
) -> None:
    """GitHub cuts a blob's GraphQL text at 512,000 bytes (isTruncated): the crawler then reads
    it by REST -- the file the rule chose (COPYING.LESSER), not the one /license names
    (COPYING, the GPL: before the fix the pair read GPL-3.0-only there)."""
    notices = "".join(f"Bundled component {k}: see its own notice.\n" for k in range(14000))
    big = f"{lesser()}\n{notices}"
    assert len(big.encode()) > 512_000
    state = github_pair()
    state.repos[0].files["COPYING.LESSER"] = big
    config = (
        "github: {retry_base_delay: 0, max_retries: 0}\n"
        "projects:\n  - name: LGPL pair\n    repo: gnu/pair\n"
    )
    with FakeGitHub(state, token=TOKEN) as gh:
        outcome = audit(db_url, tmp_path, config, gh.env(TOKEN))
    [project] = outcome.report.as_json()["projects"]
    analysis = project["license_analysis"]
    assert (analysis["path"], analysis["spdx_ids"][:1]) == ("COPYING.LESSER", ["LGPL-3.0-only"])
    # the ids agree; only the appended notices are what GitHub ignores
    assert analysis["why"].startswith("GitHub reads LGPL-3.0 and ignores the rest: ")
