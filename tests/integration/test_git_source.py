"""The git source (crawler/upstream/sources/git) against a real git server on loopback: git's
own ``git http-backend`` behind a CGI bridge (crawler_fakes/git_http.py), over repositories
made here with the git binary. Tags (annotated and lightweight), the default branch and its
move, dates read by shallow filtered fetches, the root license file, a path: page; a
repository gone (404), moved (a redirect), a server that is not git's smart HTTP, a cut or an
oversized answer; and full audits into SQLite and PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler import __version__
from crawler.analysis.license_texts import reference_text
from crawler.config import ConfigError, Location, ProjectSpec, Settings, parse_config
from crawler.model import ProjectResult, ProjectSnapshot, ProjectStatus
from crawler.upstream.guard import PerProject
from crawler.upstream.source import Source, SourceError, source_kinds
from crawler.upstream.sources.git.fetch import GitSource
from crawler_fakes.git_http import GitHttpServer
from crawler_fakes.proxy import RecordingProxy
from tests.support.audits import Audits, changes, project_statuses
from tests.support.git_repos import GitRepo
from tests.support.sources import open_in_guard

NOW = "2026-11-02T03:00:00Z"
COMPAT = "# Compatibility\n\n| vLLM | status |\n| --- | --- |\n| 0.11 | supported |\n"
LOOPBACK = Settings(allow_private_addresses=True)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    served = tmp_path / "served"
    served.mkdir()
    return served


@pytest.fixture
def runtime(root: Path) -> GitRepo:
    """Three tags on main (lightweight v1.0; v1.1 annotated, tagged three weeks after its
    commit; v1.2rc1), and a develop branch ahead of it."""
    repo = GitRepo(root, "org/runtime.git")
    files = {"LICENSE": reference_text("Apache-2.0"), "NOTICE": "Copyright 2026 Vendor\n",
             "docs/LICENSE-docs": "CC text\n", "docs/compat.md": COMPAT}  # fmt: skip
    repo.commit("2026-01-10T10:00:00Z", files)
    repo.tag("v1.0")
    repo.commit("2026-02-10T10:00:00Z", {"README.md": "# Runtime\n"})
    repo.tag("v1.1", message="Runtime 1.1", when="2026-03-03T10:00:00Z")
    repo.commit("2026-03-10T10:00:00Z")
    repo.tag("v1.2rc1")
    repo.commit("2026-04-01T10:00:00Z", {"DEVELOP": "x\n"}, branch="develop")
    repo.run("checkout", "-q", "main")
    repo.push()
    return repo


@pytest.fixture
def server(root: Path, runtime: GitRepo) -> Iterator[GitHttpServer]:
    with GitHttpServer(root) as served:
        yield served


def _source(common: Settings = LOOPBACK, **settings: Any) -> Source:
    source = open_in_guard("git", {}, now=NOW, common=common,
                           settings={"concurrency": 1, **settings})  # fmt: skip
    assert isinstance(source, PerProject) and isinstance(source.source, GitSource)
    return source


def _spec(url: str, name: str = "Runtime", **options: Any) -> ProjectSpec:
    return ProjectSpec(name=name, forge=Location(source="git", path=url), **options)


def _fetch(url: str, prior: ProjectSnapshot | None = None, source: Source | None = None,
           **options: Any) -> ProjectResult:  # fmt: skip
    spec = _spec(url, **options)
    return (source or _source()).fetch([spec], {spec.name: prior} if prior else {})[spec.name]


def _ok(result: ProjectResult) -> ProjectSnapshot:
    assert (result.status, result.errors) == (ProjectStatus.OK, ())
    assert result.snapshot is not None
    return result.snapshot


def _error(result: ProjectResult) -> tuple[str, str]:
    assert result.status == ProjectStatus.ERROR and result.snapshot is None
    [error] = result.errors
    return error.message, error.url


def test_the_registry_finds_git_and_sources_yaml_names_a_clone_url() -> None:
    kind = source_kinds()["git"]
    assert (kind.label, kind.role, kind.project_key) == ("git server", "forge", "git")
    config = parse_config(
        "git: {dated_tags: 20, concurrency: 4}\n"
        "projects:\n  - name: torch-npu\n    git: https://gitcode.com/Ascend/pytorch.git/\n"
        "    tag_pattern: '^v2\\.'\n"
    )
    assert config.projects[0].forge == Location(
        source="git", path="https://gitcode.com/Ascend/pytorch.git"
    )
    assert config.source_settings("git").dated_tags == 20
    bad = {
        "gitcode.com/Ascend/pytorch": "must be a repository's https:// clone URL",
        "ftp://example.org/r.git": "must be a repository's https:// clone URL",
        "https://example.org/": "must be a repository's https:// clone URL",
        "https://example.org/r.git?x=1": "must be a repository's https:// clone URL",
        "https://user:secret@example.org/r.git": "no credentials in the URL",
    }
    for value, message in bad.items():
        with pytest.raises(ConfigError, match=message):
            parse_config(f"projects:\n  - name: X\n    git: '{value}'\n")
    with pytest.raises(ConfigError, match="'api_url' does not apply"):
        parse_config("git: {api_url: 'https://x.org'}\nprojects:\n  - name: X\n    git: https://x.org/r\n")


def test_tags_head_dates_and_the_root_license_from_a_real_git_server(
    server: GitHttpServer, runtime: GitRepo
) -> None:
    url = server.url("org/runtime.git")
    snap = _ok(_fetch(url))
    main = runtime.run("rev-parse", "main")
    first = runtime.run("rev-parse", "v1.0")
    second = runtime.run("rev-parse", "v1.1^{commit}")
    assert runtime.run("rev-parse", "v1.1") != second  # an annotated tag: an object of its own
    assert snap.repo is not None
    assert (snap.repo.full_name, snap.repo.url, snap.repo.default_branch, snap.repo.forge) == (
        url, url, "main", "git",
    )  # fmt: skip
    assert [(t.name, t.sha, t.date, t.url) for t in snap.tags or ()] == [
        ("v1.2rc1", main, "2026-03-10T10:00:00Z", url),
        ("v1.1", second, "2026-02-10T10:00:00Z", url),  # the commit's date, not the tagger's
        ("v1.0", first, "2026-01-10T10:00:00Z", url),
    ]
    assert snap.head is not None
    assert (snap.head.sha, snap.head.date, snap.head.url) == (main, "2026-03-10T10:00:00Z", url)
    assert snap.releases is None and snap.forge_license is None  # a git server has neither
    assert snap.license_file is not None
    assert (snap.license_file.path, snap.license_file.text, snap.license_file.url) == (
        "LICENSE", reference_text("Apache-2.0"), url,
    )  # fmt: skip
    assert snap.license_file.blob_sha == runtime.run("rev-parse", "main:LICENSE")
    assert [e.path for e in snap.license_inventory or ()] == ["LICENSE", "NOTICE"]
    assert [name for name, _ in snap.provenance] == [
        "repo", "tags", "head", "license_inventory", "license",
    ]  # fmt: skip
    # the refs (info/refs, then ls-refs), the three commits, the root tree, the license blob
    assert server.requests() == [
        "/org/runtime.git/info/refs?service=git-upload-pack",
        *["/org/runtime.git/git-upload-pack"] * 4,
    ]
    # a git agent, as GitHub and others require, saying it is the crawler
    assert server.agents == {f"git/2.0 (crawler/{__version__} (+https://github.com/; release "
                             "and license audit))"}  # fmt: skip


def test_an_unchanged_night_costs_the_refs_and_a_new_tag_one_fetch_more(
    server: GitHttpServer, runtime: GitRepo
) -> None:
    url = server.url("org/runtime.git")
    source = _source()
    first = _ok(_fetch(url, source=source))
    server.log.clear()
    again = _ok(_fetch(url, first, source=source))
    assert again.content_hash() == first.content_hash()
    assert len(server.requests()) == 2  # info/refs and ls-refs: every date and the license kept
    runtime.tag("v1.2", message="Runtime 1.2")
    runtime.push()
    server.log.clear()
    later = _ok(_fetch(url, again, source=source))
    assert [(t.name, t.date) for t in later.tags or ()][:2] == [
        ("v1.2", "2026-03-10T10:00:00Z"), ("v1.2rc1", "2026-03-10T10:00:00Z"),
    ]  # fmt: skip
    assert later.license_file == first.license_file
    assert len(server.requests()) == 2  # the tagged commit's date was known: nothing fetched


def test_a_moved_default_branch_is_followed_and_its_files_read_again(
    server: GitHttpServer, runtime: GitRepo
) -> None:
    url = server.url("org/runtime.git")
    first = _ok(_fetch(url, track="commits"))
    assert first.tags is None  # track: commits asks for no tags
    runtime.point_head_at("develop")
    moved = _ok(_fetch(url, first, track="commits"))
    assert moved.repo is not None and moved.repo.default_branch == "develop"
    assert moved.head is not None
    assert (moved.head.sha, moved.head.date) == (
        runtime.run("rev-parse", "develop"), "2026-04-01T10:00:00Z",
    )  # fmt: skip
    assert [e.path for e in moved.license_inventory or ()] == ["LICENSE", "NOTICE"]
    assert moved.license_file == first.license_file  # the same blob: its text not read again


def test_an_old_server_without_protocol_v2_or_filters_gives_the_refs_undated(
    root: Path, runtime: GitRepo
) -> None:
    for options in ({"protocol_v2": False}, {"allow_filter": False}):
        with GitHttpServer(root, **options) as old:
            url = old.url("org/runtime.git")
            snap = _ok(_fetch(url))
            assert [(t.name, t.sha, t.date) for t in snap.tags or ()] == [
                ("v1.2rc1", runtime.run("rev-parse", "main"), None),
                ("v1.1", runtime.run("rev-parse", "v1.1^{commit}"), None),
                ("v1.0", runtime.run("rev-parse", "v1.0"), None),
            ]
            assert snap.head is not None and snap.head.date is None
            assert snap.repo is not None and snap.repo.default_branch == "main"
            assert snap.license_file is None and snap.license_inventory is None
            # v0: the advertisement lists the refs; v2 without filters: ls-refs, and no fetch
            assert len(old.requests()) == (1 if options == {"protocol_v2": False} else 2)


def test_a_path_page_is_read_from_the_head_and_a_missing_file_is_an_error(
    server: GitHttpServer,
) -> None:
    url = server.url("org/runtime.git")
    source = _source()
    location = Location(source="git", path=url)
    page = source.read_file(location, "docs/compat.md")
    assert (page.text, page.url, page.content_type) == (COMPAT, url, "text/markdown")
    with pytest.raises(SourceError, match=r"^docs/missing.md not found in http://127\.0\.0\.1"):
        source.read_file(location, "docs/missing.md")
    with pytest.raises(SourceError, match="not found"):
        source.read_file(location, "docs")  # a folder is not a file


def test_a_missing_repository_is_a_clear_error(server: GitHttpServer) -> None:
    message, where = _error(_fetch(server.url("org/gone.git")))
    assert message == (
        f"repository {server.url('org/gone.git')} not found on its git server (HTTP 404): "
        "deleted, private, or moved without a redirect: fix 'git' in sources.yaml"
    )
    assert where == server.url("org/gone.git/info/refs?service=git-upload-pack")


def test_a_redirected_repository_is_followed_at_its_new_address(server: GitHttpServer) -> None:
    server.redirects["/old/runtime.git"] = "/org/runtime.git"
    snap = _ok(_fetch(server.url("old/runtime.git")))
    assert snap.repo is not None and snap.repo.full_name == server.url("org/runtime.git")
    assert snap.license_file is not None and snap.head is not None and snap.head.date
    posts = server.requests("POST")
    assert posts and set(posts) == {"/org/runtime.git/git-upload-pack"}
    server.redirects["/away.git"] = "/sign-in?return=/away.git"
    message, _ = _error(_fetch(server.url("away.git")))
    assert message == (
        f"{server.url('away.git')} redirected to {server.base_url}/sign-in?return=/away.git/info"
        "/refs?service=git-upload-pack, which is not a git repository's address (a sign-in or a "
        "web page?)"
    )


def test_a_server_that_does_not_speak_smart_http_is_a_clear_error(
    server: GitHttpServer, runtime: GitRepo
) -> None:
    runtime.run("update-server-info", cwd=runtime.bare)  # what a dumb server publishes
    server.dumb.add("/org/runtime.git")
    message, _ = _error(_fetch(server.url("org/runtime.git")))
    assert message.endswith(
        "answered 'text/plain': a dumb HTTP server (files only), not git's smart HTTP "
        "protocol: is this a git repository's URL?"
    )
    server.dumb.clear()
    server.html.add("/org/runtime.git")
    message, _ = _error(_fetch(server.url("org/runtime.git")))
    assert "answered an HTML page, not git's smart HTTP protocol" in message


def test_a_cut_or_an_oversized_answer_is_an_error_never_an_empty_repository(
    server: GitHttpServer,
) -> None:
    server.truncate.add("/org/runtime.git")
    message, _ = _error(_fetch(server.url("org/runtime.git")))
    assert message.startswith("git server answer cut short (RemoteProtocolError) (gave up after 4")
    server.truncate.clear()
    server.oversize["/org/runtime.git"] = 200_000
    message, _ = _error(_fetch(server.url("org/runtime.git"),
                               source=_source(answer_size_limit=65_536)))  # fmt: skip
    assert message.startswith("git server answer is 200")
    assert "over the answer size limit of 65536 bytes" in message


def test_loopback_and_plain_http_are_refused_unless_private_addresses_are_allowed(
    server: GitHttpServer,
) -> None:
    guarded = _source(common=Settings())
    message, _ = _error(_fetch(server.url("org/runtime.git"), source=guarded))
    assert "resolves to 127.0.0.1, a loopback address (server-side request forgery" in message
    assert server.requests() == []  # refused before anything was sent
    message, _ = _error(_fetch("http://192.0.43.10/org/runtime.git", source=guarded))
    assert message == (  # a public address (never reached): refused for its scheme
        "refusing http://192.0.43.10/org/runtime.git/info/refs?service=git-upload-pack: plain "
        "http:// is read only where private addresses are allowed (tests, an intranet mirror); "
        "use https://"
    )


@pytest.fixture
def tools(root: Path) -> GitRepo:
    """A repository without tags, followed by its default branch."""
    repo = GitRepo(root, "org/tools.git")
    repo.commit("2026-05-01T08:00:00Z", {"COPYING": reference_text("MIT")})
    repo.push()
    return repo


def _config(server: GitHttpServer) -> str:
    return (
        "settings: {allow_private_addresses: true}\n"
        "git: {retry_base_delay: 0}\n"
        "projects:\n"
        f"  - name: Runtime\n    git: {server.url('org/runtime.git')}\n"
        "    prereleases: exclude\n"
        f"  - name: Tools\n    git: {server.url('org/tools.git')}\n    track: commits\n"
        f"  - name: Kernels\n    git: {server.url('old/tools.git')}\n    track: commits\n"
    )


def test_audits_report_new_tags_new_commits_a_move_and_keep_the_last_state_on_errors(
    server: GitHttpServer, runtime: GitRepo, tools: GitRepo, db_url: str, tmp_path: Path
) -> None:
    server.redirects["/old/tools.git"] = "/org/tools.git"
    audits = Audits(server, db_url, tmp_path, {})
    try:
        first = audits.audit(_config(server))
        runtime.tag("v1.2", message="Runtime 1.2")
        runtime.push()
        moved_to = tools.commit("2026-06-01T08:00:00Z", {"tool.py": "print(1)\n"})
        tools.push()
        second = audits.audit(_config(server))
        runtime.run("update-ref", "-d", "refs/tags/v1.0", cwd=runtime.bare)  # no finding either
        server.redirects["/org/runtime.git"] = "/org/gone.git"
        third = audits.audit(_config(server))
    finally:
        audits.close()
    url, tools_url = server.url("org/runtime.git"), server.url("org/tools.git")
    rows = {p["name"]: p for p in first.report.as_json()["projects"]}
    assert {n: (p["forge"], p["forge_label"], p["version_source"], p["version"],
                p["published_at"], p["license"]) for n, p in rows.items()} == {
        "Runtime": ("git", "git server", "tag", "v1.1", "2026-02-10T10:00:00Z",
                    "no verdict from git server; text reads Apache-2.0"),
        "Tools": ("git", "git server", "commit", tools.run("rev-parse", "HEAD~1")[:12],
                  "2026-05-01T08:00:00Z", "no verdict from git server; text reads MIT"),
        "Kernels": ("git", "git server", "commit", tools.run("rev-parse", "HEAD~1")[:12],
                    "2026-05-01T08:00:00Z", "no verdict from git server; text reads MIT"),
    }  # fmt: skip
    old = server.url("old/tools.git")
    assert changes(first.report, "evidence_url") == [
        ("Runtime", "project_added", None, url, url),
        ("Tools", "project_added", None, tools_url, tools_url),
        ("Kernels", "project_added", None, old, tools_url),
        ("Kernels", "repo_moved", old, tools_url, tools_url),  # followed, and said
    ]
    assert first.report.as_json()["summary"]["errors"] == 0
    assert changes(second.report, "evidence_url") == [
        ("Runtime", "new_tag", "v1.1", "v1.2", url),
        ("Tools", "new_commit", tools.run("rev-parse", "HEAD~1"), moved_to, tools_url),
        ("Kernels", "new_commit", tools.run("rev-parse", "HEAD~1"), moved_to, tools_url),
    ]
    [night_two] = (tmp_path / "reports").glob("*-audit2/report.md")
    markdown = night_two.read_text()
    assert changes(third.report) == []
    assert project_statuses(third.report) == {"Runtime": "error", "Tools": "ok", "Kernels": "ok"}
    [error] = third.report.as_json()["errors"]
    assert (error["project"], error["error"]) == ("Runtime", (
        f"repository {url} (redirected to {server.url('org/gone.git')}) not found on its git "
        "server (HTTP 404): deleted, private, or moved without a redirect: fix 'git' in "
        "sources.yaml"
    ))  # fmt: skip
    kept = {p["name"]: p["version"] for p in third.report.as_json()["projects"]}
    assert kept["Runtime"] == "v1.2"  # the last good state, kept
    tagged = runtime.run("rev-parse", "v1.2^{commit}")[:12]
    assert (f"| Runtime | new tag | v1.1 → v1.2 | tag v1.2 ({tagged}) 2026-03-10T10:00:00Z | "
            f"[evidence](<{url}>) |") in markdown  # fmt: skip
    assert (f"| Tools | [{moved_to[:12]}](<{tools_url}>) | git server commit | 2026-06-01 | "
            "no verdict from git server; text reads MIT |") in markdown  # fmt: skip


def test_a_fetch_of_objects_is_capped_far_below_the_answer_limit(root: Path) -> None:
    """What a shallow fetch answers is inflated in memory: it is held to its own bound, so a
    hostile or huge object cannot cost gigabytes (a LICENSE of 4 MB of noise here)."""
    repo = GitRepo(root, "org/noise.git")
    repo.commit("2026-01-10T10:00:00Z", {"LICENSE": os.urandom(2_000_000).hex()})
    repo.push()
    with GitHttpServer(root) as served:
        message, _ = _error(_fetch(served.url("org/noise.git")))
    assert message.startswith("git server answer is ")
    assert message.endswith(" bytes, over the answer size limit of 1048576 bytes (this request's "
                            "own bound, below git.answer_size_limit)")  # fmt: skip


def test_every_request_goes_through_the_environment_s_proxy(
    server: GitHttpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shared HTTP client's rule (crawler.upstream.network): HTTP_PROXY for http://."""
    for name in ("HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    with RecordingProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
        snap = _ok(_fetch(server.url("org/runtime.git")))
    assert snap.license_file is not None
    host = server.base_url.removeprefix("http://")
    assert [(r.method, r.host, r.path) for r in proxy.requests] == [
        (method, host, path) for method, path in server.log
    ]
    assert len(proxy.requests) == 5
