"""The Gitea/Forgejo source (crawler/upstream/sources/gitea), added as one package with its fake
(crawler_fakes/gitea.py) and no change elsewhere: found by the registry, read from sources.yaml,
run in the audit's per-project guard, and audited beside GitHub and PyPI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.config import ConfigError, Location, ProjectSpec, parse_config
from crawler.model import ProjectResult, ProjectStatus
from crawler.store import Store
from crawler.upstream.guard import PerProject
from crawler.upstream.source import RepoFile, Source, SourceError, source_kinds
from crawler.upstream.sources.gitea.fetch import GiteaSource
from crawler_fakes.gitea import FakeGitea, GiteaRelease, GiteaRepo, GiteaState, GiteaTag
from crawler_fakes.github import FakeGitHub
from crawler_fakes.pypi import FakePyPI
from crawler_fakes.pypi import demo_state as pypi_state
from tests.support.ops import TOKEN as GITHUB_TOKEN
from tests.support.ops import upstream
from tests.support.sources import open_in_guard

WEB = "https://codeberg.example"
TOKEN = "gitea-test-token-0c4b7e19d2"
README = "# Runtime\n\nWorks with vllm >=0.27.1,<0.28.0.\n"


def _runtime(*extra: GiteaRelease) -> GiteaRepo:
    return GiteaRepo(
        owner="forge-org", name="runtime", id=31, licenses=["Apache-2.0"],
        head_sha="a" * 40, head_date="2026-10-01T01:00:00Z",
        releases=[GiteaRelease("v1.0.0", "2026-08-01T02:00:00Z", "v1.0.0"),
                  GiteaRelease("v1.1.0rc1", "2026-09-01T02:00:00Z", "RC", prerelease=True),
                  GiteaRelease("v1.1.0", "2026-09-20T02:00:00Z", "v1.1.0 final"),
                  GiteaRelease("v2.0.0", "2026-09-25T02:00:00Z", "draft", draft=True),
                  *extra],
        files={"LICENSE": reference_text("Apache-2.0"), "NOTICE": "Copyright Vendor\n",
               "README.md": README, "docs/LICENSE-docs": "CC text\n"},
    )  # fmt: skip


def _tools() -> GiteaRepo:
    return GiteaRepo(
        owner="forge-org", name="tools", id=32, archived=True, head_sha="b" * 40,
        head_date="2026-09-30T16:30:00Z",
        tags=[GiteaTag("v0.9", "c" * 40, "2026-07-01T00:00:00Z"),
              GiteaTag("v0.11", "d" * 40, "2026-09-01T00:00:00Z"),
              GiteaTag("v0.10", "e" * 40, "2026-08-01T00:00:00Z")],
        files={"COPYING": reference_text("MIT")},
    )  # fmt: skip


@pytest.fixture
def fake() -> Iterator[FakeGitea]:
    with FakeGitea(GiteaState([_runtime(), _tools()]), token=TOKEN, web_url=WEB) as server:
        yield server


def _source(fake: FakeGitea, token: str | None = TOKEN, **settings: Any) -> Source:
    source = open_in_guard(
        "gitea", fake.env(token), now="2026-11-02T03:00:00Z",
        settings={"concurrency": 1, **settings},
    )  # fmt: skip
    assert isinstance(source, PerProject) and isinstance(source.source, GiteaSource)
    return source


def _spec(name: str, path: str, **options: Any) -> ProjectSpec:
    return ProjectSpec(name=name, forge=Location(source="gitea", path=path), **options)


def _fetch(source: Source, *specs: ProjectSpec) -> dict[str, ProjectResult]:
    return source.fetch(specs, {})


def test_the_registry_finds_gitea_and_sources_yaml_names_it() -> None:
    kind = source_kinds()["gitea"]
    assert (kind.label, kind.role, kind.project_key) == ("Gitea", "forge", "gitea")
    config = parse_config(
        "gitea: {api_url: 'https://codeberg.org/api/v1', releases_per_repo: 5}\n"
        "projects:\n  - name: Runtime\n    gitea: forge-org/runtime\n"
    )
    assert config.projects[0].forge == Location(source="gitea", path="forge-org/runtime")
    assert config.source_settings("gitea").releases_per_repo == 5
    for bad in ("forge-org", "forge-org/runtime.git", "../etc/passwd", "a/.."):
        with pytest.raises(ConfigError, match=r"gitea .* must look like 'owner/repo'"):
            parse_config(f"projects:\n  - name: X\n    gitea: '{bad}'\n")


def test_releases_license_and_repository_facts(fake: FakeGitea) -> None:
    result = _fetch(_source(fake), _spec("Runtime", "forge-org/runtime"))["Runtime"]
    assert (result.status, result.errors) == (ProjectStatus.OK, ())
    snap = result.snapshot
    assert snap is not None and snap.repo is not None
    assert (snap.repo.id, snap.repo.full_name, snap.repo.forge, snap.repo.archived) == (
        31, "forge-org/runtime", "gitea", False,
    )  # fmt: skip
    assert snap.repo.url == f"{WEB}/forge-org/runtime"
    assert [(r.tag, r.published_at, r.prerelease, r.draft) for r in snap.releases or ()] == [
        ("v2.0.0", "2026-09-25T02:00:00Z", False, True),
        ("v1.1.0", "2026-09-20T02:00:00Z", False, False),
        ("v1.1.0rc1", "2026-09-01T02:00:00Z", True, False),
        ("v1.0.0", "2026-08-01T02:00:00Z", False, False),
    ]
    assert snap.releases is not None
    assert snap.releases[1].url == f"{WEB}/forge-org/runtime/releases/tag/v1.1.0"
    assert snap.tags is None and snap.head is None  # a usable release: nothing more asked
    assert (snap.forge_license.spdx_id, snap.forge_license.name) == ("Apache-2.0", "Apache-2.0")
    assert snap.license_file is not None
    assert (snap.license_file.path, snap.license_file.text) == (
        "LICENSE", reference_text("Apache-2.0"),
    )  # fmt: skip
    assert [e.path for e in snap.license_inventory or ()] == ["LICENSE", "NOTICE"]
    assert [name for name, _ in snap.provenance] == [
        "repo", "releases", "license_inventory", "license",
    ]  # fmt: skip


def test_tags_newest_first_and_an_archived_repository(fake: FakeGitea) -> None:
    result = _fetch(_source(fake), _spec("Tools", "forge-org/tools"))["Tools"]
    snap = result.snapshot
    assert snap is not None and snap.repo is not None
    assert snap.repo.archived is True
    assert [(t.name, t.date) for t in snap.tags or ()] == [
        ("v0.11", "2026-09-01T00:00:00Z"),
        ("v0.10", "2026-08-01T00:00:00Z"),
        ("v0.9", "2026-07-01T00:00:00Z"),
    ]
    assert snap.forge_license.spdx_id is None  # Forgejo-like: no `licenses` field
    assert snap.license_file is not None and snap.license_file.path == "COPYING"


def test_the_head_for_a_project_tracking_commits(fake: FakeGitea) -> None:
    spec = _spec("Runtime", "forge-org/runtime", track="commits")
    snap = _fetch(_source(fake), spec)["Runtime"].snapshot
    assert snap is not None and snap.head is not None
    assert (snap.head.sha, snap.head.date) == ("a" * 40, "2026-10-01T01:00:00Z")
    assert snap.releases is None and snap.tags is None


def test_lists_follow_pages_up_to_the_limit(fake: FakeGitea) -> None:
    source = _source(fake, page_size=2, releases_per_repo=3)
    snap = _fetch(source, _spec("Runtime", "forge-org/runtime"))["Runtime"].snapshot
    assert snap is not None
    assert [r.tag for r in snap.releases or ()] == ["v2.0.0", "v1.1.0", "v1.1.0rc1"]
    asked = [r.path for r in fake.requests if "/releases" in r.path]
    assert asked == [
        "/api/v1/repos/forge-org/runtime/releases?limit=2&page=1",
        "/api/v1/repos/forge-org/runtime/releases?limit=2&page=2",
    ]


def test_an_unchanged_project_costs_304s_and_its_license_is_not_read_again(
    fake: FakeGitea,
) -> None:
    source = _source(fake)
    spec = _spec("Runtime", "forge-org/runtime")
    first = _fetch(source, spec)["Runtime"]
    fake.requests.clear()
    second = source.fetch([spec], {"Runtime": first.snapshot})  # type: ignore[dict-item]
    assert second["Runtime"].snapshot is not None
    assert second["Runtime"].snapshot.license_file == first.snapshot.license_file  # type: ignore[union-attr]
    assert [(r.status, r.conditional) for r in fake.requests] == [(304, True)] * 3
    assert not any(r.path.endswith("/contents/LICENSE?ref=main") for r in fake.requests)
    assert source.usage()["not_modified"] == 3


def test_a_missing_repository_is_its_error_only_and_says_what_to_fix(fake: FakeGitea) -> None:
    results = _fetch(
        _source(fake), _spec("Gone", "forge-org/gone"), _spec("Runtime", "forge-org/runtime")
    )
    assert results["Runtime"].status == ProjectStatus.OK
    gone = results["Gone"]
    assert gone.status == ProjectStatus.ERROR
    assert [(e.source, e.url, e.message) for e in gone.errors] == [(
        "gitea",
        f"{fake.api_url}/repos/forge-org/gone",
        "repository forge-org/gone not found on Gitea (deleted, private, or renamed without a "
        "redirect): fix 'gitea' in sources.yaml",
    )]  # fmt: skip


def test_a_wrong_token_is_an_error_that_never_shows_the_token(fake: FakeGitea) -> None:
    wrong = "gitea-wrong-token-91e0c3aa77"
    result = _fetch(_source(fake, token=wrong), _spec("Runtime", "forge-org/runtime"))["Runtime"]
    assert result.status == ProjectStatus.ERROR
    (error,) = result.errors
    assert error.message.startswith("HTTP 401 from Gitea")
    assert wrong not in repr(result)
    assert all(r.authenticated for r in fake.requests)


def test_a_readme_is_read_for_a_page_and_a_missing_file_is_an_error(fake: FakeGitea) -> None:
    source = _source(fake)
    location = Location(source="gitea", path="forge-org/runtime")
    assert source.read_file(location, "README.md") == RepoFile(
        README, f"{WEB}/forge-org/runtime/src/branch/main/README.md", "text/markdown"
    )
    with pytest.raises(SourceError, match=r"docs/missing\.md not found in forge-org/runtime"):
        source.read_file(location, "docs/missing.md")


# -- in the audit, beside GitHub and PyPI ------------------------------------------------------

CONFIG = """
github: {retry_base_delay: 0}
gitea: {retry_base_delay: 0, max_retries: 0}
projects:
  - name: Alpha
    repo: org/alpha
  - name: Runtime
    gitea: forge-org/runtime
    pypi: kernel-dsl
    pages:
      - name: README pins
        path: README.md
        pins:
          vllm: 'vllm (>=[0-9.]+,<[0-9.]+)'
  - name: Tools
    gitea: forge-org/tools
"""


def test_a_mixed_audit_reports_gitea_projects_and_their_changes(
    fake: FakeGitea, tmp_path: Path
) -> None:
    config = parse_config(CONFIG)
    store = Store(f"sqlite:///{tmp_path / 'c.sqlite'}")
    reports = tmp_path / "reports"
    try:
        with (
            FakeGitHub(upstream("v1.0"), token=GITHUB_TOKEN) as github,
            FakePyPI(pypi_state(after=False)) as pypi,
        ):
            env = {**github.env(GITHUB_TOKEN), **fake.env(TOKEN), **pypi.env()}
            first = run_audit(config, store, reports, env=env, sleep=lambda _s: None)
            fake.set_state(
                GiteaState([_runtime(GiteaRelease("v1.2.0", "2026-10-20T02:00:00Z")), _tools()])
            )
            second = run_audit(config, store, reports, env=env, sleep=lambda _s: None)
    finally:
        store.close()
    assert (first.exit_code, first.report.as_json()["summary"]["errors"]) == (0, 0)
    rows = {p["name"]: p for p in first.report.as_json()["projects"]}
    assert {n: (p["forge"], p["forge_label"], p["version"]) for n, p in rows.items()} == {
        "Alpha": ("github", "GitHub", "v1.0"),
        "Runtime": ("gitea", "Gitea", "v1.1.0"),
        "Tools": ("gitea", "Gitea", "v0.11"),
    }
    assert rows["Runtime"]["repo_url"] == f"{WEB}/forge-org/runtime"
    assert rows["Runtime"]["license"] == "Apache-2.0"
    assert second.report.as_json()["summary"]["errors"] == 0
    changes = [(c["project"], c["kind"]) for c in second.report.as_json()["changes"]]
    assert changes == [("Runtime", "new_release")]
    assert "Gitea" in (reports / "latest" / "report.md").read_text()
    assert TOKEN not in (reports / "latest" / "report.json").read_text()
