"""Every GraphQL document the crawler sends must be valid for GitHub itself, not just the fake."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from graphql import GraphQLSchema, build_schema, get_operation_ast, parse, validate
from graphql.execution.values import get_variable_values

from crawler.config import ProjectSpec
from crawler.upstream.sources.github import GitHubSettings
from crawler.upstream.sources.github.fetch import graphql_batch_query
from crawler.upstream.sources.github.queries import Query, files_query, lookup_query
from crawler_fakes.github_graphql import SCHEMA as FAKE_SCHEMA
from tests.conftest import SHARED


@cache
def _github_schema() -> GraphQLSchema:
    path = SHARED / "github" / "schema.graphql"
    if not path.exists():
        pytest.skip("../shared/github/schema.graphql is absent")
    return build_schema(path.read_text(encoding="utf-8"), assume_valid_sdl=True, assume_valid=True)


SPECS = [
    ProjectSpec(name="llama.cpp", repo="ggml-org/llama.cpp"),
    ProjectSpec(name="Mooncake", repo="kvcache-ai/Mooncake"),
    ProjectSpec(name="odd", repo="a-b/c_d.e"),
]
PATHS: list[str | None] = ["LICENSE", None, 'weird "quoted" \\ path.md']  # None: root entries


def _check(schema: GraphQLSchema, query: Query) -> None:
    """The document is valid for ``schema`` and its variables coerce to what it declares."""
    document = parse(query.text)
    assert [e.message for e in validate(schema, document)] == []
    operation = get_operation_ast(document)
    assert operation is not None
    coerced = get_variable_values(schema, operation.variable_definitions or [], query.variables)
    assert not isinstance(coerced, list), [e.message for e in coerced]
    assert coerced.coerced == query.variables


@pytest.mark.parametrize("schema_name", ["github", "fake"])
def test_batch_query_validates(schema_name: str) -> None:
    schema = _github_schema() if schema_name == "github" else FAKE_SCHEMA
    settings = GitHubSettings(releases_per_repo=10, tags_per_repo=5)
    query = graphql_batch_query(SPECS, PATHS, settings)
    _check(schema, query)
    assert query.variables == {
        "o0": "ggml-org", "n0": "llama.cpp", "p0": "HEAD:LICENSE", "k0": True,
        "o1": "kvcache-ai", "n1": "Mooncake", "p1": "HEAD:", "k1": False,
        "o2": "a-b", "n2": "c_d.e", "p2": 'HEAD:weird "quoted" \\ path.md', "k2": True,
    }  # fmt: skip
    assert (
        "r1: repository(owner: $o1, name: $n1) { ...RepoFacts licenseBlob: object(expression: "
        '$p1) @include(if: $k1) { ... on Blob { oid } } rootEntries: object(expression: "HEAD:")'
        " @skip(if: $k1) { ... on Tree { entries { name type oid } } } }"
    ) in query.text
    # names and paths never enter the document: any three repositories send the same text
    assert "Mooncake" not in query.text and "quoted" not in query.text
    others = [ProjectSpec(name=f"p{i}", repo=f"o/p{i}") for i in range(3)]
    assert graphql_batch_query(others, [None, None, None], settings).text == query.text


@pytest.mark.parametrize("schema_name", ["github", "fake"])
def test_files_query_validates(schema_name: str) -> None:
    """The follow-up query: root entries, a license text or a README, at a commit, per
    repository."""
    schema = _github_schema() if schema_name == "github" else FAKE_SCHEMA
    query = files_query([
        ("ggml-org/llama.cpp", "a" * 40, None),
        ("kvcache-ai/Mooncake", "b" * 40, "LICENSE-APACHE"),
        ("a-b/c_d.e", "c" * 40, 'weird "quoted" path'),
        ("HabanaAI/vllm-fork", "d" * 40, "README.md"),  # a README, read for a successor
    ])  # fmt: skip
    _check(schema, query)
    assert query.variables == {
        "o0": "ggml-org", "n0": "llama.cpp", "e0": "a" * 40 + ":",
        "o1": "kvcache-ai", "n1": "Mooncake", "e1": "b" * 40 + ":LICENSE-APACHE",
        "o2": "a-b", "n2": "c_d.e", "e2": "c" * 40 + ':weird "quoted" path',
        "o3": "HabanaAI", "n3": "vllm-fork", "e3": "d" * 40 + ":README.md",
    }  # fmt: skip
    assert (
        "f1: repository(owner: $o1, name: $n1) { object(expression: $e1) { ... on Blob { oid "
        "byteSize isBinary isTruncated text } ... on Tree { entries { name type oid } } } }"
    ) in query.text


@pytest.mark.parametrize("schema_name", ["github", "fake"])
def test_the_link_lookup_query_validates(schema_name: str) -> None:
    """The query that answers repository links of untracked items (crawler.link_audit): one
    alias per repository, names only as variables."""
    schema = _github_schema() if schema_name == "github" else FAKE_SCHEMA
    query = lookup_query(["google/jax", "a-b/c_d.e"])
    _check(schema, query)
    assert query.variables == {"o0": "google", "n0": "jax", "o1": "a-b", "n1": "c_d.e"}
    assert (
        "l1: repository(owner: $o1, name: $n1) { databaseId nameWithOwner url isArchived "
        "description defaultBranchRef { name } }"
    ) in query.text
    assert "jax" not in query.text


def test_connection_sizes_stay_within_github_limits() -> None:
    # GitHub requires first/last between 1 and 100 on every connection
    settings = GitHubSettings(releases_per_repo=100, tags_per_repo=100, graphql_batch=100)
    query = graphql_batch_query(SPECS * 33, PATHS * 33, settings)
    assert query.text.count("repository(") == 99
    assert "releases(first: 100," in query.text
    assert 'refs(refPrefix: "refs/tags/", first: 100,' in query.text
    _check(FAKE_SCHEMA, query)


@pytest.mark.parametrize(
    ("api_url", "graphql_url"),
    [
        ("https://api.github.com", "https://api.github.com/graphql"),
        ("https://api.github.com/", "https://api.github.com/graphql"),
        ("https://ghe.example/api/v3", "https://ghe.example/api/graphql"),
        ("https://ghe.example/api/v3/", "https://ghe.example/api/graphql"),
        ("http://127.0.0.1:8080/prefix", "http://127.0.0.1:8080/prefix/graphql"),
    ],
)
def test_the_graphql_endpoint_is_where_pygithub_would_send_it(
    api_url: str, graphql_url: str
) -> None:
    """GraphQL goes out without PyGithub (an unchanged night does not load it), to the URL
    PyGithub's own requester derives from the same GITHUB_API_URL."""
    from github.Requester import Requester

    from crawler.upstream.http import MemoryCache
    from crawler.upstream.sources.github.api import GitHubApi

    api = GitHubApi(api_url, "ghp_x", MemoryCache(), GitHubSettings())
    assert api.graphql_url == graphql_url
    assert Requester(
        auth=None, base_url=api_url.rstrip("/"), timeout=5, user_agent="t", per_page=30,
        verify=True, retry=None, pool_size=None,
    ).graphql_url == graphql_url  # fmt: skip


def test_every_query_an_audit_sends_validates_against_githubs_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only the documents built here: every query a whole audit sends (first night: root
    entries, license texts and an archived repository's README; second night: known paths),
    through the fake, checked against GitHub's published schema."""
    import json

    from crawler.audit import run_audit
    from crawler.config import parse_config
    from crawler.store import Store
    from crawler_fakes import github_graphql
    from crawler_fakes.github import FakeGitHub, FakeTag
    from tests.support.ops import upstream

    schema = _github_schema()
    sent: list[Query] = []
    real = github_graphql.handle

    def handle(fake: Any, raw: bytes) -> tuple[int, dict[str, Any] | bytes, int]:
        body = json.loads(raw)
        sent.append(Query(body["query"], body["variables"]))
        return real(fake, raw)

    monkeypatch.setattr(github_graphql, "handle", handle)
    state = upstream("v1.0")
    state.repos[1].tags.append(FakeTag("v0.1", "e" * 40, "2026-09-01T00:00:00Z"))
    state.repos[1].archived = True  # its README is read, with the batch
    config = parse_config(
        "projects:\n  - name: Alpha\n    repo: org/alpha\n  - name: Beta\n    repo: org/beta\n"
        "    track: tags\n  - name: Catalog\n    repo: org/catalog\n"
    )
    token = "ghp_schema_check_token_0123456789"
    with FakeGitHub(state, token=token) as server:
        store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
        try:
            for _night in range(2):
                run_audit(config, store, tmp_path / "reports", env=server.env(token),
                          sleep=lambda _s: None)  # fmt: skip
        finally:
            store.close()
    kinds = {query.text.split("(", 1)[0] for query in sent}
    assert kinds == {"query CrawlerBatch", "query CrawlerFiles"}
    readmes = [
        (query.variables[f"n{key[1:]}"], value)
        for query in sent
        for key, value in query.variables.items()
        if str(value).endswith(":README.md")
    ]
    assert readmes == [("beta", "2" * 40 + ":README.md")]  # the first night only
    for query in sent:
        _check(schema, query)
