"""The fake GitHub server, exercised over real HTTP with httpx."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    build_schema,
    parse,
    print_ast,
    validate,
)

from crawler.upstream.sources.github import GitHubSettings
from crawler.upstream.sources.github.queries import batch_query, files_query
from crawler_fakes.github import (
    FakeGitHub,
    FakeRelease,
    FakeRepo,
    FakeTag,
    FaultPlan,
    FaultRule,
    GitHubState,
    RepoView,
    git_blob_sha,
    synthetic_state,
)
from crawler_fakes.github_graphql import SCHEMA
from tests.support import SHARED

REAL_SCHEMA = SHARED / "github" / "schema.graphql"
MIT = "MIT License\n\nCopyright (c) 2024 Acme\n\nPermission is hereby granted...\n" * 3
TOKEN = "ghp_test"

CRAWLER_QUERY = """
query CrawlerBatch {
  rateLimit { cost remaining limit resetAt used }
  r0: repository(owner: "acme", name: "widget") {
    databaseId nameWithOwner url isArchived isEmpty
    licenseInfo { key spdxId name }
    defaultBranchRef { name target { ... on Commit { oid committedDate url } } }
    releases(first: 10, orderBy: {field: CREATED_AT, direction: DESC}) {
      totalCount
      nodes { tagName name publishedAt createdAt isPrerelease isDraft isLatest url }
    }
    refs(refPrefix: "refs/tags/", first: 10, orderBy: {field: TAG_COMMIT_DATE, direction: DESC}) {
      totalCount
      nodes { name target { oid ... on Commit { committedDate }
        ... on Tag { target { oid ... on Commit { committedDate } } } } }
    }
    licenseBlob: object(expression: "HEAD:LICENSE") { ... on Blob { oid } }
  }
  r1: repository(owner: "acme", name: "missing") { databaseId }
}
"""


def make_state() -> GitHubState:
    widget = FakeRepo(
        owner="acme", name="widget", id=11, license_key="mit", spdx_id="MIT",
        license_name="MIT License", license_text=MIT,
        head_sha="c" * 40, head_date="2025-03-01T00:00:00Z",
        files={"README.md": "# widget\n"}, tree=[("src/widget.py", "d" * 40)],
    )
    for n, (tag, day) in enumerate([("v1.0.0", "01"), ("v1.1.0", "10"), ("v2.0.0-rc1", "20")]):
        stamp = f"2025-02-{day}T00:00:00Z"
        widget.releases.append(FakeRelease(tag, tag, stamp, stamp, prerelease="rc" in tag))
        widget.tags.append(FakeTag(tag, f"{n}" * 40, stamp, annotated=tag == "v1.1.0"))
    moved = FakeRepo(owner="old", name="thing", id=12, moved_to="neworg/thing2",
                     license_text=MIT, head_sha="e" * 40, head_date="2025-01-01T00:00:00Z")
    empty = FakeRepo(owner="acme", name="empty", id=13, license_text=None)
    return GitHubState([widget, moved, empty])


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(make_state(), token=TOKEN) as server:
        yield server


_clients: list[httpx.Client] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _clients:
        _clients.pop().close()


def client(gh: FakeGitHub, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"token {token}"} if token else {}
    _clients.append(httpx.Client(base_url=gh.base_url, headers=headers))
    return _clients[-1]


def graphql(gh: FakeGitHub, query: str) -> httpx.Response:
    return client(gh, TOKEN).post("/graphql", json={"query": query})


def test_pagination_links_are_absolute_and_same_host(gh: FakeGitHub) -> None:
    c, base = client(gh), f"{gh.base_url}/repos/acme/widget/tags"
    first = c.get("/repos/acme/widget/tags", params={"per_page": 1})
    assert first.headers["link"] == (
        f'<{base}?per_page=1&page=2>; rel="next", <{base}?per_page=1&page=3>; rel="last"'
    )
    middle = c.get("/repos/acme/widget/tags?per_page=1&page=2")
    assert middle.headers["link"] == (
        f'<{base}?per_page=1&page=1>; rel="prev", <{base}?per_page=1&page=3>; rel="next", '
        f'<{base}?per_page=1&page=3>; rel="last", <{base}?per_page=1&page=1>; rel="first"'
    )
    last = c.get("/repos/acme/widget/tags?per_page=1&page=3")
    assert last.headers["link"] == (
        f'<{base}?per_page=1&page=2>; rel="prev", <{base}?per_page=1&page=1>; rel="first"'
    )
    names = [p.json()[0]["name"] for p in (first, middle, last)]
    assert names == ["v2.0.0-rc1", "v1.1.0", "v1.0.0"]  # tags: newest first
    assert "link" not in c.get("/repos/acme/widget/tags").headers
    releases = [r["tag_name"] for r in c.get("/repos/acme/widget/releases").json()]
    assert sorted(releases) == ["v1.0.0", "v1.1.0", "v2.0.0-rc1"]
    assert releases == sorted(releases, key=lambda t: hashlib.sha1(t.encode()).hexdigest())


def test_etags_and_the_304_budget(gh: FakeGitHub) -> None:
    anon, auth = client(gh), client(gh, TOKEN)
    first = anon.get("/repos/acme/widget")
    etag = first.headers["etag"]
    assert etag.startswith('W/"') and first.headers["x-ratelimit-remaining"] == "59"
    again = anon.get("/repos/acme/widget", headers={"If-None-Match": etag})
    assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", etag)
    assert again.headers["x-ratelimit-remaining"] == "58"  # anonymous 304s count
    mine = auth.get("/repos/acme/widget")
    assert mine.headers["etag"] != etag  # ETags vary with the caller
    assert mine.headers["x-ratelimit-remaining"] == "4999"
    cached = auth.get("/repos/acme/widget", headers={"If-None-Match": mine.headers["etag"]})
    assert cached.status_code == 304
    assert cached.headers["x-ratelimit-remaining"] == "4999"  # authenticated 304s are free
    assert auth.get("/repos/acme/widget", headers={"If-None-Match": etag}).status_code == 200
    used = gh.points_used
    assert (used.core_anonymous, used.core_authenticated) == (2, 2)
    assert [(r.status, r.authenticated, r.conditional) for r in gh.requests] == [
        (200, False, False), (304, False, True), (200, True, False), (304, True, True),
        (200, True, True),
    ]
    assert auth.get("/rate_limit").json()["resources"]["core"]["used"] == 2
    gh.set_rate_limit(0, authenticated=False)
    limited = anon.get("/repos/acme/widget")
    assert limited.status_code == 403 and limited.headers["x-ratelimit-remaining"] == "0"
    assert limited.json()["message"].startswith("API rate limit exceeded")
    assert auth.get("/repos/acme/widget").status_code == 200  # separate budgets


def test_moved_repo_answers_301_and_the_redirect_serves_the_new_name(gh: FakeGitHub) -> None:
    c = client(gh)
    moved = c.get("/repos/OLD/Thing/releases?per_page=5")
    location = f"{gh.base_url}/repositories/12/releases?per_page=5"
    assert moved.status_code == 301 and moved.headers["location"] == location
    assert moved.json()["message"] == "Moved Permanently" and moved.json()["url"] == location
    followed = c.get("/repos/old/thing", follow_redirects=True)
    assert str(followed.url) == f"{gh.base_url}/repositories/12"
    assert followed.json()["full_name"] == "neworg/thing2"
    assert c.get("/repos/neworg/thing2").json()["id"] == 12


def test_not_found_and_empty_repository(gh: FakeGitHub) -> None:
    c = client(gh)
    missing = c.get("/repos/acme/nope")
    assert missing.status_code == 404
    assert missing.json() == {
        "message": "Not Found",
        "documentation_url": "https://docs.github.com/rest/repos/repos#get-a-repository",
        "status": "404",
    }
    for path in ("/repos/acme/empty/commits?per_page=1", "/repos/acme/empty/commits/main"):
        empty = c.get(path)
        assert empty.status_code == 409 and empty.json()["message"] == "Git Repository is empty."
    assert c.get("/repos/acme/empty/license").status_code == 404
    head = c.get("/repos/acme/widget/commits/main").json()
    assert head["sha"] == "c" * 40
    assert head["commit"]["committer"]["date"] == "2025-03-01T00:00:00Z"
    assert client(gh, "wrong").get("/repos/acme/widget").json()["message"] == "Bad credentials"


def test_license_base64_round_trip_and_git_blob_sha(gh: FakeGitHub) -> None:
    c = client(gh)
    body = c.get("/repos/acme/widget/license").json()
    lines = body["content"].split("\n")
    assert lines[-1] == "" and all(len(line) == 60 for line in lines[:-2])
    assert base64.b64decode(body["content"]).decode() == MIT
    raw = MIT.encode()
    assert body["sha"] == hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()
    assert body["license"]["spdx_id"] == "MIT" and body["size"] == len(raw)
    tree = c.get("/repos/acme/widget/git/trees/main?recursive=1").json()
    paths = {e["path"]: (e["type"], e["sha"]) for e in tree["tree"]}
    assert paths["LICENSE"] == ("blob", body["sha"])
    assert paths["src"][0] == "tree" and paths["src/widget.py"] == ("blob", "d" * 40)
    state = make_state()
    state.repos[0].license_text = MIT + "Extra terms.\n"
    state.repos[0].license_key = state.repos[0].spdx_id = state.repos[0].license_name = None
    gh.set_state(state)
    changed = c.get("/repos/acme/widget/license").json()
    assert changed["sha"] == git_blob_sha(MIT + "Extra terms.\n") != body["sha"]
    assert changed["license"]["key"] == "other" and changed["license"]["spdx_id"] == "NOASSERTION"


def test_tree_shas_are_git_tree_shas() -> None:
    # expected SHA from `git write-tree` over the same five files
    repo = FakeRepo("o", "r", 1, license_text="hello\n", head_sha="a" * 40,
                    files={"src/a/b.py": "x", "src/main.py": "y", "docs/index.md": "z",
                           "src-x": "w"})
    assert RepoView(repo, "http://x").tree_sha("") == "5129697cd55c00512d497796fb6902ba5992b15d"


def test_graphql_batch_with_an_unknown_repository(gh: FakeGitHub) -> None:
    resp = graphql(gh, CRAWLER_QUERY)
    assert resp.status_code == 200
    data, errors = resp.json()["data"], resp.json()["errors"]
    assert data["r1"] is None
    assert errors == [{
        "type": "NOT_FOUND", "path": ["r1"], "locations": [{"line": 19, "column": 3}],
        "message": "Could not resolve to a Repository with the name 'acme/missing'.",
    }]
    r0 = data["r0"]
    assert (r0["databaseId"], r0["nameWithOwner"], r0["isEmpty"]) == (11, "acme/widget", False)
    assert r0["licenseInfo"] == {"key": "mit", "spdxId": "MIT", "name": "MIT License"}
    assert r0["defaultBranchRef"]["target"]["oid"] == "c" * 40
    rels = r0["releases"]["nodes"]
    assert [(r["tagName"], r["isLatest"], r["isPrerelease"]) for r in rels] == [
        ("v2.0.0-rc1", False, True), ("v1.1.0", True, False), ("v1.0.0", False, False),
    ]
    refs = r0["refs"]["nodes"]
    assert [r["name"] for r in refs] == ["v2.0.0-rc1", "v1.1.0", "v1.0.0"]
    assert refs[1]["target"]["target"] == {"oid": "1" * 40, "committedDate": "2025-02-10T00:00:00Z"}
    assert r0["licenseBlob"] == {"oid": git_blob_sha(MIT)}
    assert data["rateLimit"]["cost"] == 1 and data["rateLimit"]["remaining"] == 4999
    assert gh.requests[-1].graphql_cost == 1 and gh.points_used.graphql == 1
    assert resp.headers["x-ratelimit-resource"] == "graphql"


def test_a_file_at_a_commit_answers_as_githubs_object_expression(gh: FakeGitHub) -> None:
    """The files query the crawler reads READMEs with (``<commit>:README.md``): a text file's
    blob with its text, no object (null, no error) for a path the commit does not hold, and a
    binary blob's ``text`` null with ``isBinary`` (GitHub's "UTF8 text data or null if the
    Blob is binary")."""
    state = make_state()
    state.repos[0].files["docs/logo.md"] = "PNG\0\x01\x02 not text"
    gh.set_state(state)
    query = files_query([
        ("acme/widget", "c" * 40, "README.md"),
        ("acme/widget", "c" * 40, "NOTES.md"),
        ("acme/widget", "c" * 40, "docs/logo.md"),
    ])  # fmt: skip
    resp = client(gh, TOKEN).post("/graphql", json={"query": query.text,
                                                   "variables": query.variables})  # fmt: skip
    assert resp.status_code == 200 and "errors" not in resp.json()
    data = resp.json()["data"]
    assert data["f0"] == {"object": {
        "oid": git_blob_sha("# widget\n"), "byteSize": 9, "isBinary": False,
        "isTruncated": False, "text": "# widget\n",
    }}  # fmt: skip
    assert data["f1"] == {"object": None}
    assert data["f2"] == {"object": {
        "oid": git_blob_sha("PNG\0\x01\x02 not text"), "byteSize": 15, "isBinary": True,
        "isTruncated": False, "text": None,
    }}  # fmt: skip


def test_graphql_limits_and_errors(gh: FakeGitHub) -> None:
    many = " ".join(f'r{i}: repository(owner: "acme", name: "widget") {{ id }}' for i in range(5))
    gh.max_graphql_aliases = 4
    timeout = graphql(gh, "{ " + many + " }")
    assert timeout.status_code == 502 and timeout.json()["data"] is None
    assert timeout.json()["errors"][0]["message"].startswith("Something went wrong while executing")
    gh.max_graphql_aliases = None
    assert graphql(gh, "{ " + many + " }").json()["data"]["r4"]["id"]
    unpaged = graphql(gh, '{ repository(owner: "a", name: "b") { releases { totalCount } } }')
    assert unpaged.json()["errors"][0]["type"] == "MISSING_PAGINATION_BOUNDARIES"
    invalid = graphql(gh, '{ repository(owner: "a", name: "b") { nope } }')
    assert invalid.status_code == 200 and "nope" in invalid.json()["errors"][0]["message"]
    assert client(gh).post("/graphql", json={"query": "{ rateLimit { cost } }"}).status_code == 401
    # 101 repositories x 2 connections = 202 requests -> cost 2
    big = " ".join(
        f'r{i}: repository(owner: "acme", name: "widget") '
        "{ releases(first: 1) { totalCount } refs(refPrefix: \"refs/tags/\", first: 1) "
        "{ totalCount } }"
        for i in range(101)
    )
    costly = graphql(gh, "{ rateLimit { cost } " + big + " }").json()
    assert costly["data"]["rateLimit"]["cost"] == 2 and gh.requests[-1].graphql_cost == 2


def _default(arg: Any) -> str | None:
    node = arg.ast_node.default_value if arg.ast_node else None
    return print_ast(node) if node else None


def _assert_subset(fake: GraphQLSchema, real: GraphQLSchema) -> None:
    """Every type, field, argument (type and default) of the fake exists identically on GitHub."""
    for name, fake_type in fake.type_map.items():
        if name.startswith("__"):
            continue
        real_type = real.type_map[name]
        assert type(real_type) is type(fake_type), name
        if isinstance(fake_type, GraphQLObjectType | GraphQLInterfaceType):
            assert isinstance(real_type, GraphQLObjectType | GraphQLInterfaceType)
            real_ifaces = {i.name for i in real_type.interfaces}
            assert {i.name for i in fake_type.interfaces} <= real_ifaces, name
            for field_name, fld in fake_type.fields.items():
                real_field = real_type.fields[field_name]
                assert str(fld.type) == str(real_field.type), f"{name}.{field_name}"
                for arg_name, real_arg in real_field.args.items():
                    required = isinstance(real_arg.type, GraphQLNonNull) and not _default(real_arg)
                    assert arg_name in fld.args or not required, f"{name}.{field_name}({arg_name})"
                for arg_name, arg in fld.args.items():
                    real_arg = real_field.args[arg_name]
                    assert str(arg.type) == str(real_arg.type), f"{name}.{field_name}({arg_name})"
                    assert _default(arg) == _default(real_arg), f"{name}.{field_name}({arg_name})"
        elif isinstance(fake_type, GraphQLEnumType):
            assert isinstance(real_type, GraphQLEnumType)
            assert set(fake_type.values) <= set(real_type.values), name
        elif isinstance(fake_type, GraphQLInputObjectType):
            assert isinstance(real_type, GraphQLInputObjectType)
            assert {k: str(v.type) for k, v in fake_type.fields.items()} == {
                k: str(v.type) for k, v in real_type.fields.items()
            }, name


def test_crawler_query_is_valid_for_the_fake_and_for_github() -> None:
    document = parse(CRAWLER_QUERY)
    assert [e.message for e in validate(SCHEMA, document)] == []
    if not REAL_SCHEMA.exists():
        pytest.skip(f"{REAL_SCHEMA} not present")
    # assume_valid: graphql-core 3.3's schema check rejects GitHub's deprecated implementations
    # of non-deprecated interface fields (Project.id, ...); query validation is unaffected.
    real = build_schema(REAL_SCHEMA.read_text(), assume_valid_sdl=True, assume_valid=True)
    assert [e.message for e in validate(real, document)] == []
    _assert_subset(SCHEMA, real)


def test_faults_are_deterministic_and_real() -> None:
    plan = FaultPlan(rules=[
        FaultRule("reset", r"/repos/acme/widget$"),
        FaultRule("truncate", "/license"),
        FaultRule("secondary_limit", "/tags", retry_after=7),
        FaultRule("html_200", "/releases"),
    ])
    with FakeGitHub(make_state(), faults=plan) as gh:
        c = client(gh)
        with pytest.raises(httpx.TransportError):
            c.get("/repos/acme/widget")
        with pytest.raises(httpx.TransportError):
            c.get("/repos/acme/widget/license")
        limited = c.get("/repos/acme/widget/tags")
        assert (limited.status_code, limited.headers["retry-after"]) == (403, "7")
        assert "secondary rate limit" in limited.json()["message"]
        html = c.get("/repos/acme/widget/releases")
        assert html.status_code == 200 and "Unicorn!" in html.text
        assert c.get("/repos/acme/widget").status_code == 200  # one-shot rules are spent
        assert [r.fault for r in gh.requests] == [
            "reset", "truncate", "secondary_limit", "html_200", None,
        ]

    def run(seed: int) -> list[int]:
        faults = FaultPlan(rates={"status_500": 0.3, "rate_429": 0.2}, seed=seed)
        with FakeGitHub(make_state(), faults=faults, unauth_limit=100) as gh:
            c = client(gh)
            return [c.get("/repos/acme/widget").status_code for _ in range(30)]

    statuses = run(3)
    assert statuses == run(3) and {200, 500, 429} == set(statuses)


def test_state_json_round_trip_and_synthetic_state() -> None:
    state = synthetic_state(50, seed=1)
    assert len(state.repos) == 50
    data = json.loads(json.dumps(state.to_dict()))
    assert GitHubState.from_dict(data) == state
    assert synthetic_state(50, seed=1) == state
    assert any(r.archived for r in state.repos)
    assert any(r.spdx_id == "NOASSERTION" for r in state.repos)
    assert any(r.tags and not r.releases for r in state.repos)
    assert any(not r.tags and r.head_sha for r in state.repos)
    assert any(any(x.prerelease for x in r.releases) for r in state.repos)
    with FakeGitHub(state) as gh:
        rate = graphql(gh, "{ rateLimit { remaining } }")
        assert rate.json()["data"]["rateLimit"]["remaining"] == 4999


def test_graphql_executed_in_worker_processes_answers_as_in_one() -> None:
    """The benchmarks' fake executes GraphQL in other processes, side by side as GitHub does:
    it answers byte for byte what the one-process fake answers (errors included), and the
    server itself still checks, costs and charges every query."""
    recipe = functools.partial(synthetic_state, 60, 3)
    repos = [f"{r.owner}/{r.name}" for r in recipe().repos[:20]] + ["acme/missing"]
    paths = [None if i % 2 else "LICENSE" for i in range(len(repos))]
    query = batch_query(repos, paths, GitHubSettings())
    payload = {"query": query.text, "variables": query.variables}
    answers = []
    for processes in (0, 2):
        faults = FaultPlan(rules=[FaultRule("graphql_partial", path="/graphql", times=1,
                                            alias="r2", message="Loading failed")])  # fmt: skip
        with FakeGitHub(
            recipe(), token=TOKEN, web_url="https://ghe.example", faults=faults
        ) as server:
            if processes:
                server.execute_graphql_in(processes, recipe)
                assert server.graphql_workers is not None
            cut = client(server, TOKEN).post("/graphql", json=payload).json()  # the fault's
            resp = client(server, TOKEN).post("/graphql", json=payload)
            invalid = client(server, TOKEN).post("/graphql", json={"query": "{ nope }"})
            doc = resp.json()
            for answer in (doc, cut):
                answer["data"]["rateLimit"].pop("resetAt")  # the hour each server started in
            answers.append((resp.status_code, doc, server.points_used.graphql, invalid.json(),
                            cut))  # fmt: skip
        assert server.graphql_workers is None  # stopped with the server
    in_one, in_workers = answers
    assert in_workers == in_one
    status, doc, points, invalid, cut = in_workers
    assert (status, points) == (200, 2)
    assert doc["data"]["rateLimit"] == {"cost": 1, "remaining": 4998, "limit": 5000, "used": 2}
    assert cut["data"]["r2"]["releases"] is None and doc["data"]["r2"]["releases"] is not None
    assert [e["path"] for e in cut["errors"]] == [["r20"], ["r2", "releases"]]
    assert doc["data"]["r0"]["nameWithOwner"] == repos[0]
    assert doc["data"]["r0"]["url"] == f"https://ghe.example/{repos[0]}"
    assert doc["data"]["r0"]["licenseBlob"]["oid"] == git_blob_sha(recipe().repos[0].license_text)
    assert [e["path"] for e in doc["errors"]] == [["r20"]]
    assert invalid["errors"][0]["message"] == "Cannot query field 'nope' on type 'Query'."


def test_graphql_cost_follows_each_requests_variables(gh: FakeGitHub) -> None:
    """The fake computes a document's cost once per value of the variables the cost reads
    (``first``/``last``/``dryRun``): one text sent with other values is costed afresh."""
    text = (
        "query Q($n: Int!, $o: String!, $dry: Boolean = false) { rateLimit(dryRun: $dry) "
        '{ cost } r: repository(owner: $o, name: "widget") { releases(first: $n) { totalCount } '
        'refs(refPrefix: "refs/tags/", first: $n) { totalCount } } }'
    )
    sent = client(gh, TOKEN)

    def ask(**variables: Any) -> dict[str, Any]:
        return dict(sent.post("/graphql", json={"query": text, "variables": variables}).json())

    assert ask(n=5, o="acme")["data"]["r"]["releases"]["totalCount"] == 3
    assert ask(n=5, o="nobody")["errors"][0]["type"] == "NOT_FOUND"
    too_many = ask(n=101, o="acme")
    assert [e["type"] for e in too_many["errors"]] == ["EXCESSIVE_PAGINATION"] * 2
    assert too_many["errors"][0]["path"] == ["r", "releases"]
    assert ask(n=101, o="acme") == too_many  # the second time from the cache: the same
    used = gh.points_used.graphql
    assert ask(n=5, o="acme", dry=True)["data"]["rateLimit"] == {"cost": 1}
    assert gh.points_used.graphql == used  # a dry run is charged nothing


def _state_slow_after_first(marker: str) -> GitHubState:
    """The first process to build it is quick; any later one takes 1.5 s (a large state)."""
    try:
        with open(marker, "x"):
            pass
    except FileExistsError:
        time.sleep(1.5)
    return synthetic_state(5, 1)


def test_graphql_workers_are_all_up_before_the_fake_is_used(tmp_path: Path) -> None:
    """A worker still building its state when the others are ready is waited for (the
    readiness calls all went to the ready one, and starting the fake failed)."""
    recipe = functools.partial(_state_slow_after_first, str(tmp_path / "first"))
    with FakeGitHub(synthetic_state(5, 1), token=TOKEN) as server:
        server.execute_graphql_in(2, recipe)
        answers = [client(server, TOKEN).post("/graphql", json={"query": "{ rateLimit { cost } }"})
                   for _ in range(4)]  # fmt: skip
        assert [a.json()["data"] for a in answers] == [{"rateLimit": {"cost": 1}}] * 4


_KILLED_WITH_WORKERS = """
import functools, time
from crawler_fakes.github import FakeGitHub, synthetic_state

fake = FakeGitHub(synthetic_state(3, 1)).start()
print(*sorted(fake.execute_graphql_in(2, functools.partial(synthetic_state, 3, 1))), flush=True)
time.sleep(120)
"""


def _running(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status  # a zombie has ended; only its exit status is left


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_graphql_workers_end_with_a_killed_server() -> None:
    """A benchmark killed outright (no chance to stop its fake) takes its GraphQL workers
    with it: they held a copy of every repository and ran on, orphaned."""
    server = subprocess.Popen([sys.executable, "-c", _KILLED_WITH_WORKERS],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert server.stdout is not None
        workers = [int(pid) for pid in server.stdout.readline().split()]
        assert len(workers) == 2 and all(_running(pid) for pid in workers)
    finally:
        server.kill()
        server.wait(10)
    for _ in range(100):
        if not any(_running(pid) for pid in workers):
            break
        time.sleep(0.1)
    assert [pid for pid in workers if _running(pid)] == []


def test_the_synthetic_catalog_stays_mostly_lively_as_the_calendar_moves() -> None:
    """The benchmark catalog's dates follow the day it is built for (issue 32, defect 7): with
    fixed 2024-2025 dates every repository had turned dormant by 2026, so every night read
    every README (one request a project, the unchanged night's CPU tripled). Dormant by the
    audit's own rule: an eighth, besides the archived fifth; nothing dated after the day."""
    from datetime import UTC, datetime, timedelta

    from crawler.diff.health import dormancy
    from crawler.model import Commit, ProjectSnapshot, Release

    for today in ("2026-12-05", "2031-06-30"):
        state = synthetic_state(1000, 0, today)
        now = datetime.fromisoformat(today).replace(tzinfo=UTC)
        snapshots = [
            ProjectSnapshot(r.name, head=Commit(r.head_sha, r.head_date, ""),
                            releases=tuple(Release(x.tag, x.name, x.published_at, False, False,
                                                   "") for x in r.releases))
            for r in state.repos
        ]  # fmt: skip
        dormant = sum(dormancy(s, now, timedelta(days=365)) is not None for s in snapshots)
        assert (dormant, sum(r.archived for r in state.repos)) == (135, 200)
        latest = max(max([r.head_date, *(x.published_at for x in r.releases)]) for r in state.repos)
        assert latest < today
    assert synthetic_state(50, 1, "2026-12-05") == synthetic_state(50, 1, "2026-12-05")
