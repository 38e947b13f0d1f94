"""The Gitee source against the Gitee-shaped fake, over real HTTP on loopback: each facet
parsed, pagination, conditional requests, the fake's answers in Gitee's documented shapes,
and the configuration of ``gitee:`` projects. Audit-level tests:
tests/integration/test_gitee_audit.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.request import Request, urlopen

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.config import ConfigError, Location, ProjectSpec, parse_config
from crawler.model import (
    Commit,
    ForgeLicense,
    InventoryEntry,
    ProjectResult,
    ProjectStatus,
    Release,
    RepoInfo,
    Tag,
)
from crawler.upstream.guard import PerProject
from crawler.upstream.http import MemoryCache
from crawler.upstream.source import Source, SourceError
from crawler.upstream.sources.gitee import parse
from crawler.upstream.sources.gitee.fetch import GiteeSource
from crawler_fakes.gitee import (
    FakeGitee,
    GiteeRelease,
    GiteeRepo,
    GiteeState,
    GiteeTag,
    cst,
)
from crawler_fakes.github_state import git_blob_sha
from tests.support.sources import open_in_guard

WEB = "https://code.vendor.example"  # the fake's web host: every link must point there
TOKEN = "gitee-test-token-5f3a9c0e1d"
README = "# Plugin\n\nRequires vllm >=0.27.1,<0.28.0.\n"


def _plugin() -> GiteeRepo:
    return GiteeRepo(
        owner="deep-spark", name="plugin", id=41, license="Apache-2.0",
        head_sha="a" * 40, head_date="2026-10-01T01:00:00Z",
        releases=[GiteeRelease("v0.26.0", "2026-08-01T02:00:00Z", "v0.26.0"),
                  GiteeRelease("v0.27.0rc1", "2026-09-01T02:00:00Z", "RC", prerelease=True),
                  GiteeRelease("v0.27.0", "2026-09-20T02:00:00Z", "v0.27.0 final")],
        files={"LICENSE": reference_text("Apache-2.0"), "NOTICE": "Copyright Vendor\n",
               "README.md": README, "docs/LICENSE-docs": "CC text\n"},
    )  # fmt: skip


def _toolkit() -> GiteeRepo:
    return GiteeRepo(
        owner="deep-spark", name="toolkit", id=42, head_sha="b" * 40,
        head_date="2026-09-30T16:30:00Z",
        tags=[GiteeTag("v1.0.0", "c" * 40, "2026-07-01T00:00:00Z"),
              GiteeTag("v1.2.0", "d" * 40, "2026-09-01T00:00:00Z"),
              GiteeTag("v1.1.0", "e" * 40, "2026-08-01T00:00:00Z")],
    )  # fmt: skip


@pytest.fixture
def fake() -> Iterator[FakeGitee]:
    with FakeGitee(GiteeState([_plugin(), _toolkit()]), token=TOKEN, web_url=WEB) as server:
        yield server


def open_source(
    fake: FakeGitee,
    token: str | None = TOKEN,
    cache: MemoryCache | None = None,
    stop: bool = False,
    **settings: Any,
) -> Source:
    source = open_in_guard(
        "gitee", fake.env(token), now="2026-11-02T03:00:00Z",
        settings={"concurrency": 1, **settings}, cache=cache, stop=stop,
    )  # fmt: skip
    assert isinstance(source, PerProject) and isinstance(source.source, GiteeSource)
    return source


def spec(name: str, path: str, **options: Any) -> ProjectSpec:
    return ProjectSpec(name=name, forge=Location(source="gitee", path=path), **options)


def fetch(source: Source, *specs: ProjectSpec) -> dict[str, ProjectResult]:
    return source.fetch(specs, {})


# -- facets ---------------------------------------------------------------------------------


def test_repository_releases_license_and_files_are_read_with_links_on_the_web_host(
    fake: FakeGitee,
) -> None:
    source = open_source(fake)
    result = fetch(source, spec("Plugin", "deep-spark/plugin"))["Plugin"]
    assert (result.status, result.errors) == (ProjectStatus.OK, ())
    snap = result.snapshot
    assert snap is not None
    assert snap.repo == RepoInfo(41, "deep-spark/plugin", "master", False,
                                 f"{WEB}/deep-spark/plugin", "gitee")  # fmt: skip
    assert snap.forge_license == ForgeLicense("apache-2.0", "Apache-2.0", "Apache-2.0")
    page = f"{WEB}/deep-spark/plugin/releases/tag"
    assert sorted(snap.releases or (), key=lambda r: r.tag) == [
        Release("v0.26.0", "v0.26.0", "2026-08-01T02:00:00Z", False, False, f"{page}/v0.26.0"),
        Release("v0.27.0", "v0.27.0 final", "2026-09-20T02:00:00Z", False, False,
                f"{page}/v0.27.0"),
        Release("v0.27.0rc1", "RC", "2026-09-01T02:00:00Z", True, False, f"{page}/v0.27.0rc1"),
    ]  # fmt: skip
    assert (snap.tags, snap.head) == (None, None)  # releases exist: neither is needed
    license_file = snap.license_file
    assert license_file is not None
    assert (license_file.path, license_file.blob_sha, license_file.url) == (
        "LICENSE",
        git_blob_sha(reference_text("Apache-2.0")),
        f"{WEB}/deep-spark/plugin/blob/master/LICENSE",
    )
    assert license_file.text == reference_text("Apache-2.0")
    assert license_file.analysis is None  # the audit analyses it
    assert snap.license_inventory == (
        InventoryEntry(
            "LICENSE",
            git_blob_sha(reference_text("Apache-2.0")),
            f"{WEB}/deep-spark/plugin/blob/master/LICENSE",
        ),
        InventoryEntry(
            "NOTICE",
            git_blob_sha("Copyright Vendor\n"),
            f"{WEB}/deep-spark/plugin/blob/master/NOTICE",
        ),
    )  # the root only, each linked on the web host
    api = fake.api_url + "/repos/deep-spark/plugin"
    assert [(facet, where.url) for facet, where in snap.provenance] == [
        ("repo", api),
        ("releases", f"{api}/releases?direction=desc&page=1&per_page=10"),
        ("license_inventory", f"{api}/git/trees/master"),
        ("license", f"{api}/contents/LICENSE"),
    ]
    assert all(r.authenticated for r in fake.requests)
    assert source.usage() == {"requests": 4, "not_modified": 0, "retries": 0,
                              "rate_remaining": 4996, "authenticated": True}  # fmt: skip


def test_tags_and_the_head_commit_are_read_when_the_track_needs_them(fake: FakeGitee) -> None:
    source = open_source(fake, token=None)
    results = fetch(
        source,
        spec("By tag", "deep-spark/toolkit"),  # auto, no releases: tags
        spec("By commit", "deep-spark/toolkit", track="commits"),
    )
    by_tag, by_commit = results["By tag"].snapshot, results["By commit"].snapshot
    assert by_tag is not None and by_commit is not None
    tree = f"{WEB}/deep-spark/toolkit/tree"
    assert by_tag.tags == (
        Tag("v1.2.0", "d" * 40, "2026-09-01T00:00:00Z", f"{tree}/v1.2.0"),
        Tag("v1.1.0", "e" * 40, "2026-08-01T00:00:00Z", f"{tree}/v1.1.0"),
        Tag("v1.0.0", "c" * 40, "2026-07-01T00:00:00Z", f"{tree}/v1.0.0"),
    )  # asked newest first (sort=updated, direction=desc); dates back in UTC
    assert (by_tag.releases, by_tag.head) == ((), None)
    assert by_commit.head == Commit(
        "b" * 40, "2026-09-30T16:30:00Z", f"{WEB}/deep-spark/toolkit/commit/{'b' * 40}"
    )
    assert (by_commit.releases, by_commit.tags) == (None, None)
    assert (by_tag.license_file, by_tag.license_inventory) == (None, ())
    assert not any(r.authenticated for r in fake.requests)


def test_a_repository_without_releases_or_tags_is_followed_by_its_head(fake: FakeGitee) -> None:
    fake.state.repos.append(GiteeRepo(owner="deep-spark", name="bare", id=43, head_sha="f" * 40,
                                      head_date="2026-10-05T00:00:00Z"))  # fmt: skip
    snap = fetch(open_source(fake), spec("Bare", "deep-spark/bare"))["Bare"].snapshot
    assert snap is not None and snap.head is not None
    assert (snap.releases, snap.tags, snap.head.sha) == ((), (), "f" * 40)
    assert [f for f, _ in snap.provenance] == [
        "repo", "releases", "tags", "head", "license_inventory"
    ]  # fmt: skip


def test_pages_are_followed_by_total_page_up_to_the_limit(fake: FakeGitee) -> None:
    plugin = fake.state.repos[0]
    plugin.releases += [GiteeRelease(f"v0.28.{n}", f"2026-10-0{n + 1}T02:00:00Z") for n in range(3)]
    source = open_source(fake, page_size=2, releases_per_repo=4)
    snap = fetch(source, spec("Plugin", "deep-spark/plugin"))["Plugin"].snapshot
    assert snap is not None
    assert [r.tag for r in snap.releases or ()] == ["v0.28.2", "v0.28.1", "v0.28.0", "v0.27.0"]
    assert [r.path.partition("?")[2] for r in fake.requests if "/releases" in r.path] == [
        "direction=desc&page=1&per_page=2",
        "direction=desc&page=2&per_page=2",
    ]  # four wanted: the third page is never asked for

    fake.reset_log()
    fake.state.repos[1].tags.append(GiteeTag("v0.9.0", "9" * 40, "2026-06-01T00:00:00Z"))
    toolkit = open_source(fake, page_size=2)
    snap = fetch(toolkit, spec("Toolkit", "deep-spark/toolkit", track="tags"))["Toolkit"].snapshot
    assert snap is not None
    assert [t.name for t in snap.tags or ()] == ["v1.2.0", "v1.1.0", "v1.0.0", "v0.9.0"]
    pages = [r.path.partition("?")[2] for r in fake.requests if "/tags" in r.path]
    assert pages == [  # the second page is full, but total_page says 2: no third request
        "direction=desc&page=1&per_page=2&sort=updated",
        "direction=desc&page=2&per_page=2&sort=updated",
    ]


def test_conditional_requests_are_answered_304_and_the_license_text_is_not_read_again(
    fake: FakeGitee,
) -> None:
    cache = MemoryCache()
    first = fetch(open_source(fake, cache=cache), spec("Plugin", "deep-spark/plugin"))["Plugin"]
    fake.reset_log()
    source = open_source(fake, cache=cache)
    second = source.fetch([spec("Plugin", "deep-spark/plugin")], {"Plugin": first.snapshot})
    assert second["Plugin"].snapshot == first.snapshot
    assert [(r.path.partition("?")[0], r.status, r.conditional) for r in fake.requests] == [
        ("/api/v5/repos/deep-spark/plugin", 304, True),
        ("/api/v5/repos/deep-spark/plugin/releases", 304, True),
        ("/api/v5/repos/deep-spark/plugin/git/trees/master", 304, True),
    ]  # the root license file's blob SHA did not move: its text is the stored one
    assert source.usage()["not_modified"] == 3


def test_forge_license_names_map_to_spdx_or_noassertion() -> None:
    assert parse.forge_license("MIT") == ForgeLicense("mit", "MIT", "MIT")
    assert parse.forge_license("MulanPSL-2.0") == ForgeLicense(
        "mulanpsl-2.0", "MulanPSL-2.0", "MulanPSL-2.0"
    )
    assert parse.forge_license("GPL-3.0").spdx_id == "GPL-3.0-only"  # current SPDX form
    name = "木兰许可证"  # not an SPDX id
    assert parse.forge_license(name) == ForgeLicense(name, "NOASSERTION", name)
    assert parse.forge_license(None) == ForgeLicense(None, None, None)
    assert parse.utc("2026-10-01T10:00:00+08:00") == "2026-10-01T02:00:00Z"
    assert parse.utc("2026-10-01T10:00:00.123+08:00") == "2026-10-01T02:00:00Z"
    assert parse.utc("yesterday") is None and parse.utc("2026-10-01T10:00:00") is None


def test_read_file_returns_text_and_web_link_and_names_what_is_missing(fake: FakeGitee) -> None:
    source = open_source(fake)
    location = Location(source="gitee", path="deep-spark/plugin")
    readme = source.read_file(location, "README.md")
    assert (readme.text, readme.url, readme.content_type) == (
        README, f"{WEB}/deep-spark/plugin/blob/master/README.md", "text/markdown"
    )  # fmt: skip
    for missing in ("README.rst", "docs"):  # a file that is not there, a directory
        with pytest.raises(SourceError) as caught:
            source.read_file(location, missing)
        assert str(caught.value) == f"{missing} not found in Gitee repository deep-spark/plugin"


def test_a_missing_repository_is_an_error_that_says_what_to_fix(fake: FakeGitee) -> None:
    result = fetch(open_source(fake), spec("Gone", "deep-spark/gone"))["Gone"]
    assert result.status == ProjectStatus.ERROR
    [error] = result.errors
    assert (error.source, error.url, error.message) == (
        "gitee",
        f"{fake.api_url}/repos/deep-spark/gone",
        "repository deep-spark/gone not found on Gitee (deleted, private, or renamed without a "
        "redirect): fix 'gitee' in sources.yaml",
    )


def test_a_stop_request_defers_the_projects_not_yet_started(fake: FakeGitee) -> None:
    result = fetch(open_source(fake, stop=True), spec("Plugin", "deep-spark/plugin"))["Plugin"]
    assert (result.status, result.note) == (
        ProjectStatus.DEFERRED, "not checked this audit: stop requested"
    )  # fmt: skip
    assert fake.requests == []


# -- the fake speaks Gitee's documented shapes ------------------------------------------------

# Field names of Gitee's Open API v5 models (https://gitee.com/api/v5/swagger), as Gitee's own
# CLI (oschina/gitee-cli, pkg/gitee/types.go and releases.go) and go-gitee read them, and as
# GitCode's copy of the v5 API documents them (docs.gitcode.com/docs/openapi/repos).
REPO_FIELDS = {
    "id", "full_name", "human_name", "url", "namespace", "path", "name", "owner",
    "description", "private", "public", "internal", "fork", "html_url", "ssh_url",
    "default_branch", "license", "status", "pushed_at", "created_at", "updated_at",
    "forks_count", "stargazers_count", "watchers_count", "open_issues_count", "has_issues",
    "has_wiki", "has_page", "pull_requests_enabled", "permission", "relation", "language",
}  # fmt: skip
NAMESPACE_FIELDS = {"id", "type", "name", "path", "html_url"}
RELEASE_FIELDS = {"id", "tag_name", "target_commitish", "prerelease", "name", "body", "author",
                  "created_at", "assets"}  # fmt: skip
TAG_FIELDS = {"name", "message", "commit", "tagger"}
COMMIT_FIELDS = {"url", "sha", "html_url", "comments_url", "commit", "author", "committer",
                 "parents"}  # fmt: skip
CONTENT_FIELDS = {"type", "encoding", "size", "name", "path", "content", "sha", "url",
                  "html_url", "download_url", "_links"}  # fmt: skip
TREE_FIELDS = {"sha", "url", "tree", "truncated"}


def _get(url: str) -> tuple[Any, dict[str, str]]:
    with urlopen(Request(url, headers={"Authorization": f"Bearer {TOKEN}"})) as answer:
        return json.load(answer), {k.lower(): v for k, v in answer.headers.items()}


def test_the_fake_answers_in_gitees_documented_shapes(fake: FakeGitee) -> None:
    api = fake.api_url + "/repos/deep-spark/plugin"
    repo, headers = _get(api)
    assert set(repo) >= REPO_FIELDS and set(repo["namespace"]) == NAMESPACE_FIELDS
    assert (repo["html_url"], repo["status"], repo["license"]) == (
        f"{WEB}/deep-spark/plugin.git", "开始", "Apache-2.0"
    )  # fmt: skip
    assert repo["pushed_at"] == "2026-10-01T09:00:00+08:00" == cst("2026-10-01T01:00:00Z")
    assert {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"} <= set(headers)
    assert headers["etag"].startswith('W/"')

    releases, headers = _get(api + "/releases?per_page=2")
    assert all(set(r) == RELEASE_FIELDS for r in releases)
    assert [r["tag_name"] for r in releases] == ["v0.26.0", "v0.27.0rc1"]  # oldest first
    assert (headers["total_count"], headers["total_page"]) == ("3", "2")
    tags, _ = _get(fake.api_url + "/repos/deep-spark/toolkit/tags")
    assert all(set(t) == TAG_FIELDS and set(t["commit"]) == {"sha", "date"} for t in tags)
    assert [t["name"] for t in tags] == ["v1.0.0", "v1.1.0", "v1.2.0"]  # by name
    commits, _ = _get(api + "/commits?sha=master&per_page=1")
    assert set(commits[0]) == COMMIT_FIELDS
    assert set(commits[0]["commit"]) == {"author", "committer", "message", "tree"}
    content, _ = _get(api + "/contents/README.md")
    assert set(content) == CONTENT_FIELDS and content["encoding"] == "base64"
    tree, _ = _get(api + "/git/trees/master")
    assert set(tree) == TREE_FIELDS
    assert {e["path"]: e["type"] for e in tree["tree"]} == {
        "LICENSE": "blob", "NOTICE": "blob", "README.md": "blob", "docs": "tree"
    }  # fmt: skip
    assert all(set(e) >= {"path", "mode", "type", "sha", "url"} for e in tree["tree"])


# -- configuration ----------------------------------------------------------------------------


def test_gitee_projects_are_configured_and_checked_like_any_forge() -> None:
    config = parse_config(
        "gitee: {page_size: 50}\nprojects:\n"
        "  - name: Plugin\n    gitee: deep-spark/vllm-iluvatar\n"
        "  - name: Dotted\n    gitee: openharmony/.gitee\n"
    )
    plugin = Location(source="gitee", path="deep-spark/vllm-iluvatar")
    assert config.project("Plugin").forge == plugin
    assert config.source_settings("gitee").page_size == 50
    assert config.project("Dotted").forge == Location(source="gitee", path="openharmony/.gitee")
    for bad in ("deep-spark", "a/b/c", "owner/..", "-x/y", "owner/re po"):
        with pytest.raises(ConfigError) as caught:
            parse_config(f"projects:\n  - name: P\n    gitee: '{bad}'\n", "s.yaml")
        assert str(caught.value) == (
            f"s.yaml:3: project 'P': gitee {bad!r} must look like 'owner/repo' "
            "(as in https://gitee.com/owner/repo)"
        )
    with pytest.raises(ConfigError, match="lives on one forge: keep one of"):
        parse_config("projects:\n  - name: P\n    gitee: a/b\n    repo: a/b\n", "s.yaml")
