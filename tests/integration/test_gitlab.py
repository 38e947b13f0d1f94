"""The GitLab source over real HTTP to ``FakeGitLab`` on loopback: each facet, pagination,
conditional requests, renames, rate limits, retries, tokens and several instances.

Audit-level tests (a real database, SQLite and PostgreSQL) are in test_gitlab_audit.py.
``sleep`` is a list's ``append``: waits are recorded, never slept.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.config import ConfigError, Location, ProjectSpec, parse_config
from crawler.model import (
    Commit,
    ForgeLicense,
    LicenseFile,
    ProjectResult,
    ProjectStatus,
    Release,
    RepoInfo,
    Tag,
)
from crawler.upstream.json_api import ApiResponse
from crawler.upstream.source import RepoFile, SourceError
from crawler.upstream.sources.gitlab import parse
from crawler_fakes.faults import FaultPlan, FaultRule
from crawler_fakes.github_state import git_blob_sha
from crawler_fakes.gitlab import FakeGitLab, GitLabProject, GitLabRelease, GitLabState, GitLabTag
from tests.support.sources import open_in_guard

TOKEN = "glpat-unit-token-8d2f6c1a9e"
NOW = "2026-11-15T00:00:00Z"
WEB = "https://gitlab.test"
APACHE = reference_text("Apache-2.0")
MIT = reference_text("MIT")
README = "# Toolkit\n\n| GPU | Since |\n|---|---|\n| X1 | 2.0 |\n"


def _release(tag: str, day: str) -> GitLabRelease:
    return GitLabRelease(tag, f"Toolkit {tag}", f"2026-{day}T09:30:00Z")


def _state() -> GitLabState:
    return GitLabState(
        [
            GitLabProject(
                path="acme/compilers/toolkit", id=11, license_key="apache-2.0",
                license_name="Apache License 2.0", license_text=APACHE,
                head_sha="a" * 40, head_date="2026-10-20T11:00:00+02:00",
                files={"README.md": README},
                releases=[_release("v2.0.0", "09-15"), _release("v2.1.0", "10-20"),
                          _release("v3.0.0", "12-24")],  # after NOW: an upcoming release
            ),
            GitLabProject(
                path="acme/shim", id=12, license_key="mit", license_name="MIT License",
                license_text=MIT, head_sha="b" * 40, head_date="2026-10-02T09:00:00Z",
                tags=[GitLabTag("v0.3.0", "c" * 40, "2026-10-02T09:00:00-05:00"),
                      GitLabTag("v0.2.0", "d" * 40, "2026-08-01T09:00:00Z",
                                message="annotated")],
            ),
            GitLabProject(
                path="acme/bare", id=13, head_sha="e" * 40, head_date="2026-10-05T08:00:00Z"
            ),
        ]
    )  # fmt: skip


@pytest.fixture
def gitlab() -> Iterator[FakeGitLab]:
    with FakeGitLab(_state(), token=TOKEN, web_url=WEB, now=NOW) as server:
        yield server


class Harness:
    """A GitLabSource opened as the audit opens it, on a ``gitlab:`` settings section."""

    def __init__(self, env: dict[str, str], **settings: object) -> None:
        self.sleeps: list[float] = []
        self.source = open_in_guard(
            "gitlab", env, now=NOW, settings={"max_retries": 2, **settings},
            sleep=self.sleeps.append,
        )  # fmt: skip

    def fetch(self, *specs: ProjectSpec) -> dict[str, ProjectResult]:
        return self.source.fetch(list(specs), {})


def _spec(name: str, path: str, track: str = "auto", **options: str) -> ProjectSpec:
    location = Location(source="gitlab", path=path, options=tuple(sorted(options.items())))
    return ProjectSpec.model_validate({"name": name, "forge": location, "track": track})


def _api_paths(server: FakeGitLab) -> list[str]:
    return [r.path.removeprefix("/api/v4") for r in server.requests]


# -- facets ---------------------------------------------------------------------------------


def test_project_releases_license_verdict_and_license_file(gitlab: FakeGitLab) -> None:
    result = Harness(gitlab.env(TOKEN)).fetch(_spec("Toolkit", "acme/compilers/toolkit"))
    snapshot = result["Toolkit"].snapshot
    assert result["Toolkit"].status == ProjectStatus.OK and snapshot is not None
    home = f"{WEB}/acme/compilers/toolkit"
    assert snapshot.repo == RepoInfo(11, "acme/compilers/toolkit", "main", False, home, "gitlab")
    assert snapshot.forge_license == ForgeLicense("apache-2.0", "Apache-2.0", "Apache License 2.0")
    rel = f"{home}/-/releases"
    assert snapshot.releases == (
        Release("v3.0.0", "Toolkit v3.0.0", "2026-12-24T09:30:00Z", True, False, f"{rel}/v3.0.0"),
        Release("v2.1.0", "Toolkit v2.1.0", "2026-10-20T09:30:00Z", False, False, f"{rel}/v2.1.0"),
        Release("v2.0.0", "Toolkit v2.0.0", "2026-09-15T09:30:00Z", False, False, f"{rel}/v2.0.0"),
    )
    assert snapshot.license_file == LicenseFile(
        "LICENSE", git_blob_sha(APACHE), f"{home}/-/blob/main/LICENSE", None, APACHE
    )
    assert (snapshot.tags, snapshot.head) == (None, None)  # a release exists: neither is needed
    api = f"{gitlab.base_url}/api/v4"
    assert [(facet, p.url, p.fetched_at) for facet, p in snapshot.provenance] == [
        ("repo", f"{api}/projects/acme%2Fcompilers%2Ftoolkit?license=true", NOW),
        ("releases", f"{api}/projects/11/releases?order_by=released_at&per_page=10&sort=desc", NOW),
        ("license", f"{api}/projects/11/repository/files/LICENSE?ref=main", NOW),
    ]
    assert all(r.authenticated for r in gitlab.requests)


def test_tags_when_no_release_and_the_head_only_when_nothing_else(gitlab: FakeGitLab) -> None:
    harness = Harness(gitlab.env())
    results = harness.fetch(_spec("Shim", "acme/shim"), _spec("Bare", "acme/bare"))
    shim, bare = results["Shim"].snapshot, results["Bare"].snapshot
    assert shim is not None and bare is not None
    assert shim.releases == () and shim.head is None
    assert shim.tags == (
        Tag("v0.3.0", "c" * 40, "2026-10-02T14:00:00Z", f"{WEB}/acme/shim/-/tags/v0.3.0"),
        Tag("v0.2.0", "d" * 40, "2026-08-01T09:00:00Z", f"{WEB}/acme/shim/-/tags/v0.2.0"),
    )
    assert (bare.releases, bare.tags) == ((), ())
    assert bare.head == Commit(
        "e" * 40, "2026-10-05T08:00:00Z", f"{WEB}/acme/bare/-/commit/{'e' * 40}"
    )
    # GitLab detected no license: no license file is looked for, and none is invented
    assert (bare.forge_license, bare.license_file) == (ForgeLicense(None, None, None), None)
    assert not any(r.authenticated for r in gitlab.requests)  # no token: anonymous


def test_track_commits_reads_the_head_and_nothing_else(gitlab: FakeGitLab) -> None:
    result = Harness(gitlab.env()).fetch(_spec("Toolkit", "acme/compilers/toolkit", "commits"))
    snapshot = result["Toolkit"].snapshot
    assert snapshot is not None
    assert snapshot.head == Commit(
        "a" * 40, "2026-10-20T09:00:00Z", f"{WEB}/acme/compilers/toolkit/-/commit/{'a' * 40}"
    )
    assert (snapshot.releases, snapshot.tags) == (None, None)
    assert _api_paths(gitlab) == [
        "/projects/acme%2Fcompilers%2Ftoolkit?license=true",
        "/projects/11/repository/branches/main",
        "/projects/11/repository/files/LICENSE?ref=main",
    ]


def test_read_file_gives_the_text_and_its_web_page(gitlab: FakeGitLab) -> None:
    harness = Harness(gitlab.env())
    location = Location(source="gitlab", path="acme/compilers/toolkit")
    assert harness.source.read_file(location, "README.md") == RepoFile(
        README, f"{WEB}/acme/compilers/toolkit/-/blob/main/README.md", "text/markdown"
    )
    with pytest.raises(SourceError) as caught:
        harness.source.read_file(location, "docs/missing.md")
    assert str(caught.value) == "docs/missing.md not found in acme/compilers/toolkit on main"
    assert caught.value.status == 404


def test_license_verdict_keys_map_to_spdx_ids_from_choosealicense() -> None:
    assert [parse.spdx_for_key(k) for k in ("mit", "apache-2.0", "gpl-3.0", "bsd-3-clause")] == [
        "MIT",
        "Apache-2.0",
        "GPL-3.0",
        "BSD-3-Clause",
    ]
    assert parse.spdx_for_key("other") == "NOASSERTION"  # licensee could not match the file
    assert parse.spdx_for_key("no-such-license") is None  # never guessed


def test_the_license_file_path_is_read_off_gitlabs_license_url() -> None:
    repo = RepoInfo(7, "g/p", "release/2.x", False, "https://git.example/g/p", "gitlab")
    read = parse.license_path
    assert read("https://git.example/g/p/-/blob/release/2.x/LICENSE.md", repo) == "LICENSE.md"
    assert read("https://git.example/g/p/blob/release/2.x/docs/COPYING", repo) == "docs/COPYING"
    assert read("https://git.example/g/p/-/blob/release%2F2.x/LICENSE%20MIT", repo) == (
        "LICENSE MIT"
    )
    assert read("https://elsewhere.example/g/p/-/blob/release/2.x/LICENSE", repo) is None
    assert read(None, repo) is None


# -- pagination -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "link_origin",
    [
        None,
        "http://gitlab.internal:8080",  # a misconfigured external_url: Link rebased on our host
        "http://gitlab.internal:8080/prefix",  # not under our API's path: x-next-page instead
    ],
)
def test_pagination_follows_next_pages_on_the_api_host_only(link_origin: str | None) -> None:
    state = _state()
    toolkit = state.project("acme/compilers/toolkit")
    toolkit.releases = [_release(f"v1.{n}.0", f"10-{n + 1:02d}") for n in range(7)]
    with FakeGitLab(state, web_url=WEB, now=NOW, link_origin=link_origin) as server:
        harness = Harness(server.env(), releases_per_repo=5, page_size=2)
        snapshot = harness.fetch(_spec("Toolkit", "acme/compilers/toolkit"))["Toolkit"].snapshot
        paths = _api_paths(server)
    assert snapshot is not None and snapshot.releases is not None
    assert [r.tag for r in snapshot.releases] == ["v1.6.0", "v1.5.0", "v1.4.0", "v1.3.0", "v1.2.0"]
    query = "order_by=released_at&{}per_page=2&sort=desc"
    assert paths == [
        "/projects/acme%2Fcompilers%2Ftoolkit?license=true",
        "/projects/11/releases?" + query.format(""),
        "/projects/11/releases?" + query.format("page=2&"),  # sorted: byte-stable cache keys
        "/projects/11/releases?" + query.format("page=3&"),  # five releases: no fourth page
        "/projects/11/repository/files/LICENSE?ref=main",
    ]


def test_link_header_is_parsed_by_relation() -> None:
    headers = {
        "link": '<https://g/api/v4/x?page=1>; rel="prev", <https://g/api/v4/x?page=3>; rel="next",'
        ' <https://g/api/v4/x?page=9>; rel="last", <https://g/other>'
    }
    response = ApiResponse(200, [], "https://g/api/v4/x?page=2", headers)
    assert response.links == {
        "prev": "https://g/api/v4/x?page=1",
        "next": "https://g/api/v4/x?page=3",
        "last": "https://g/api/v4/x?page=9",
    }
    assert ApiResponse(200, [], "https://g/api/v4/x").links == {}


# -- conditional requests, renames ----------------------------------------------------------


def test_second_fetch_is_answered_304_for_every_request(gitlab: FakeGitLab) -> None:
    harness = Harness(gitlab.env(TOKEN))
    specs = [_spec("Toolkit", "acme/compilers/toolkit"), _spec("Shim", "acme/shim")]
    first = harness.fetch(*specs)
    count = len(gitlab.requests)
    gitlab.reset_log()
    second = harness.fetch(*specs)
    assert len(gitlab.requests) == count == 7
    assert all(r.status == 304 and r.conditional for r in gitlab.requests)
    assert {n: r.snapshot for n, r in second.items()} == {n: r.snapshot for n, r in first.items()}
    assert harness.source.usage()["not_modified"] == 7


def test_a_renamed_project_comes_back_with_its_new_path_and_the_same_id(
    gitlab: FakeGitLab,
) -> None:
    state = _state()
    shim = state.project("acme/shim")
    shim.old_paths, shim.path = ["acme/shim"], "platform/runtime/shim"
    gitlab.set_state(state)
    snapshot = Harness(gitlab.env()).fetch(_spec("Shim", "acme/shim"))["Shim"].snapshot
    assert snapshot is not None and snapshot.repo is not None
    assert (snapshot.repo.id, snapshot.repo.full_name) == (12, "platform/runtime/shim")
    assert snapshot.repo.url == f"{WEB}/platform/runtime/shim"
    assert snapshot.forge_license == ForgeLicense("mit", "MIT", "MIT License")
    assert [(r.path.removeprefix("/api/v4"), r.status) for r in gitlab.requests][:2] == [
        ("/projects/acme%2Fshim?license=true", 301),
        ("/projects/12", 200),  # GitLab's redirect drops the query string …
    ]
    assert _api_paths(gitlab)[2] == "/projects/12?license=true"  # … so ask again by id


def test_a_missing_project_is_an_error_that_says_what_to_fix(gitlab: FakeGitLab) -> None:
    result = Harness(gitlab.env()).fetch(_spec("Gone", "acme/gone"))["Gone"]
    assert result.status == ProjectStatus.ERROR
    [error] = result.errors
    host = gitlab.base_url.removeprefix("http://")
    assert error.message == (
        f"project acme/gone not found on {host} (deleted, private, or moved without a "
        "redirect): fix 'gitlab' in sources.yaml"
    )
    assert error.url == f"{gitlab.base_url}/api/v4/projects/acme%2Fgone?license=true"


# -- budgets, retries, failures -------------------------------------------------------------


def test_a_spent_rate_budget_defers_the_remaining_projects(gitlab: FakeGitLab) -> None:
    gitlab.set_rate_limit(3)  # enough for the toolkit (three requests), nothing after it
    harness = Harness(gitlab.env(), concurrency=1)
    results = harness.fetch(_spec("Toolkit", "acme/compilers/toolkit"), _spec("Shim", "acme/shim"))
    assert results["Toolkit"].status == ProjectStatus.OK
    shim = results["Shim"]
    assert shim.status == ProjectStatus.DEFERRED and shim.errors == ()
    host = gitlab.base_url.removeprefix("http://")
    assert shim.note is not None and shim.note.startswith(
        f"not checked this audit: GitLab ({host}) rate budget spent (0 left of 2000, keeping 0 "
        "in reserve; resets 2"
    )
    assert len(gitlab.requests) == 3  # the budget was read from RateLimit-*, not hit
    assert harness.source.usage()["rate_remaining"] == 0


def test_a_429_with_retry_after_is_waited_out_and_retried(gitlab: FakeGitLab) -> None:
    gitlab.faults = FaultPlan(rules=[FaultRule("rate_429", path="/releases", retry_after=7)])
    harness = Harness(gitlab.env())
    result = harness.fetch(_spec("Toolkit", "acme/compilers/toolkit"))["Toolkit"]
    assert result.status == ProjectStatus.OK
    assert harness.sleeps == [7.0]
    assert [r.status for r in gitlab.requests] == [200, 429, 200, 200]
    assert harness.source.usage()["retries"] == 1


def test_5xx_is_retried_then_an_error_for_that_project_only(gitlab: FakeGitLab) -> None:
    gitlab.faults = FaultPlan(rules=[FaultRule("status_500", path="acme%2Fshim", times=99)])
    harness = Harness(gitlab.env(), retry_base_delay=0.5)
    results = harness.fetch(_spec("Toolkit", "acme/compilers/toolkit"), _spec("Shim", "acme/shim"))
    assert results["Toolkit"].status == ProjectStatus.OK
    [error] = results["Shim"].errors
    assert results["Shim"].status == ProjectStatus.ERROR
    assert error.source == "gitlab"
    assert error.url == f"{gitlab.base_url}/api/v4/projects/acme%2Fshim?license=true"
    assert error.message.startswith("HTTP 500 from GitLab (127.0.0.1:")
    waited = f"{sum(harness.sleeps):.1f}s"
    assert error.message.endswith(f"(gave up after 3 attempts, {waited} of waiting)")
    assert len(harness.sleeps) == 2 and 0.5 <= harness.sleeps[0] <= 1.0 <= harness.sleeps[1] <= 1.5
    assert sum(1 for r in gitlab.requests if "acme%2Fshim" in r.path) == 3


def test_an_unreachable_instance_is_given_up_on_quickly() -> None:
    with socket.socket() as probe:  # a port with nobody listening: connection refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    harness = Harness({"GITLAB_URL": f"http://127.0.0.1:{port}"}, max_retries=0)
    specs = [_spec(f"P{n}", f"acme/p{n}") for n in range(5)]
    results = harness.fetch(*specs)
    messages = [results[s.name].errors[0].message for s in specs]
    assert messages[0].startswith("no answer from GitLab (127.0.0.1:")
    assert messages[4].startswith("not attempted: GitLab (127.0.0.1:")
    assert all(results[s.name].status == ProjectStatus.ERROR for s in specs)


# -- tokens and instances -------------------------------------------------------------------


def test_each_instance_gets_its_own_projects_and_only_its_own_token() -> None:
    other_token = "glpat-other-instance-31f7a0"
    state = _state()
    state.project("acme/shim").private = True  # answered only with the token
    with (
        FakeGitLab(_state(), token=TOKEN, web_url=WEB, now=NOW) as main,
        FakeGitLab(state, token=other_token, web_url="https://git.example.org", now=NOW) as other,
    ):
        env = {**main.env(TOKEN), "OTHER_GITLAB_TOKEN": other_token}
        harness = Harness(env, tokens={f"{other.base_url}/": "OTHER_GITLAB_TOKEN"})
        results = harness.fetch(
            _spec("Toolkit", "acme/compilers/toolkit"),
            _spec("Shim", "acme/shim", gitlab_url=other.base_url + "/"),
        )
        main_paths, other_paths = _api_paths(main), _api_paths(other)
        main_auth = {r.authenticated for r in main.requests}
        other_auth = {r.authenticated for r in other.requests}
    shim = results["Shim"].snapshot
    assert shim is not None and shim.repo is not None
    assert shim.repo.url == "https://git.example.org/acme/shim"
    assert all("toolkit" in p or "/11/" in p for p in main_paths)
    assert all("shim" in p or "/12/" in p for p in other_paths)
    assert main_auth == other_auth == {True}  # each with the token the server accepts
    assert harness.source.usage()["instances"] == 2


def test_the_default_token_never_goes_to_another_instance() -> None:
    with (
        FakeGitLab(_state(), token=TOKEN, now=NOW) as main,
        FakeGitLab(_state(), token="glpat-theirs-77", now=NOW) as other,
    ):
        harness = Harness(main.env(TOKEN))
        harness.fetch(_spec("Shim", "acme/shim", gitlab_url=other.base_url))
        assert {r.authenticated for r in other.requests} == {False}
        assert main.requests == []


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("gitlab: lonely", "gitlab 'lonely' must look like 'group/project'"),
        ("gitlab: group/project.git", "gitlab 'group/project.git' must look like"),
        ("repo: a/b\n    gitlab: c/d", "a project's repository lives on one forge"),
        ("repo: a/b\n    gitlab_url: https://g.example", "gitlab_url only applies with 'gitlab:'"),
        (
            "gitlab: a/b\n    gitlab_url: ftp://gitlab.example.com",
            "gitlab_url 'ftp://gitlab.example.com' must be the instance's address, like "
            "https://gitlab.example.com",
        ),
    ],
)
def test_config_errors_name_the_file_line_and_project(entry: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(f"projects:\n  - name: X\n    {entry}\n", "sources.yaml")
    # the line of the key at fault: gitlab: (3), gitlab_url: (4); two forges: the project's
    line = 2 if "one forge" in message else 4 if "gitlab_url" in message else 3
    assert str(caught.value).startswith(f"sources.yaml:{line}: project 'X': ")
    assert message in str(caught.value)


def test_settings_reject_an_api_url_and_accept_an_instance_url() -> None:
    with pytest.raises(ConfigError, match="set 'url'"):
        parse_config("gitlab: {api_url: https://g.example/api/v4}\nprojects: []\n")
    config = parse_config("gitlab: {url: 'https://G.example/api/v4/'}\nprojects: []\n")
    assert config.source_settings("gitlab").url == "https://g.example"


# -- the fake speaks GitLab's documented shapes ---------------------------------------------

# Attribute names from GitLab's REST documentation (doc/api/projects.md "Get a single
# project", releases/_index.md, tags.md, branches.md, repository_files.md).
DOCUMENTED = {
    "/projects/11?license=true": {
        "id", "description", "name", "name_with_namespace", "path", "path_with_namespace",
        "created_at", "default_branch", "tag_list", "topics", "ssh_url_to_repo",
        "http_url_to_repo", "web_url", "readme_url", "forks_count", "star_count",
        "last_activity_at", "namespace", "empty_repo", "archived", "visibility", "license_url",
        "license", "_links",
    },
    "/projects/11/releases": {
        "name", "tag_name", "description", "created_at", "released_at", "upcoming_release",
        "author", "commit", "commit_path", "tag_path", "assets", "evidences", "_links",
    },
    "/projects/12/repository/tags": {
        "name", "message", "target", "commit", "release", "protected", "created_at",
    },
    "/projects/11/repository/branches/main": {
        "name", "merged", "protected", "default", "developers_can_push", "developers_can_merge",
        "can_push", "web_url", "commit",
    },
    "/projects/11/repository/files/LICENSE?ref=main": {
        "file_name", "file_path", "size", "encoding", "content", "content_sha256", "ref",
        "blob_id", "commit_id", "last_commit_id", "execute_filemode",
    },
}  # fmt: skip
COMMIT = {
    "id", "short_id", "created_at", "parent_ids", "title", "message", "author_name",
    "author_email", "authored_date", "committer_name", "committer_email", "committed_date",
    "web_url",
}  # fmt: skip


def test_the_fake_answers_with_gitlabs_documented_field_names(gitlab: FakeGitLab) -> None:
    import httpx

    with httpx.Client(base_url=f"{gitlab.base_url}/api/v4") as client:
        for path, fields in DOCUMENTED.items():
            response = client.get(path)
            body = response.json()
            item = body[0] if isinstance(body, list) else body
            assert set(item) == fields, path
            if "commit" in item:
                assert set(item["commit"]) - {"trailers"} == COMMIT, path
        release = client.get("/projects/11/releases").json()[0]
        assert set(release["_links"]) >= {"self", "edit_url"}
        assert set(client.get("/projects/11?license=true").json()["license"]) == {
            "key", "name", "nickname", "html_url", "source_url",
        }  # fmt: skip
        listing = client.get("/projects/11/releases", params={"per_page": 1})
        assert {"link", "x-page", "x-per-page", "x-next-page", "x-total"} <= set(listing.headers)
        assert {"ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"} <= set(listing.headers)
        assert listing.headers["etag"].startswith('W/"')
