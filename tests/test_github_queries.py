"""Every GraphQL document the crawler sends must be valid for GitHub itself, not just the fake."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from graphql import GraphQLSchema, build_schema, parse, validate

from crawler.config import ProjectSpec
from crawler.fakes.github_graphql import SCHEMA as FAKE_SCHEMA
from crawler.upstream.sources.github import GitHubSettings
from crawler.upstream.sources.github.fetch import graphql_batch_query
from crawler.upstream.sources.github.queries import files_query
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


@pytest.mark.parametrize("schema_name", ["github", "fake"])
def test_batch_query_validates(schema_name: str) -> None:
    schema = _github_schema() if schema_name == "github" else FAKE_SCHEMA
    query = graphql_batch_query(SPECS, PATHS, GitHubSettings(releases_per_repo=10, tags_per_repo=5))
    document = parse(query)
    assert [e.message for e in validate(schema, document)] == []
    assert 'r2: repository(owner: "a-b", name: "c_d.e")' in query
    assert 'object(expression: "HEAD:weird \\"quoted\\" \\\\ path.md")' in query
    assert (
        'r1: repository(owner: "kvcache-ai", name: "Mooncake") { ...RepoFacts rootEntries: '
        in query
    )


@pytest.mark.parametrize("schema_name", ["github", "fake"])
def test_files_query_validates(schema_name: str) -> None:
    """The follow-up query: root entries or a license text, at a commit, per repository."""
    schema = _github_schema() if schema_name == "github" else FAKE_SCHEMA
    query = files_query([
        ("ggml-org/llama.cpp", "a" * 40, None),
        ("kvcache-ai/Mooncake", "b" * 40, "LICENSE-APACHE"),
        ("a-b/c_d.e", "c" * 40, 'weird "quoted" path'),
    ])  # fmt: skip
    assert [e.message for e in validate(schema, parse(query))] == []
    mooncake = (
        'f1: repository(owner: "kvcache-ai", name: "Mooncake") { object(expression: '
        f'"{"b" * 40}:LICENSE-APACHE") {{ ... on Blob {{ oid byteSize isBinary isTruncated text }}'
    )
    assert mooncake in query
    assert (
        f'object(expression: "{"a" * 40}:") {{ ... on Tree {{ entries {{ name type oid }} }} }}'
        in query
    )


def test_connection_sizes_stay_within_github_limits() -> None:
    # GitHub requires first/last between 1 and 100 on every connection
    settings = GitHubSettings(releases_per_repo=100, tags_per_repo=100, graphql_batch=100)
    query = graphql_batch_query(SPECS * 33, PATHS * 33, settings)
    assert query.count("repository(") == 99
    assert "releases(first: 100," in query and 'refs(refPrefix: "refs/tags/", first: 100,' in query
    assert [e.message for e in validate(FAKE_SCHEMA, parse(query))] == []


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
    entries and license texts; second night: known paths), through the fake, checked against
    GitHub's published schema."""
    import json

    from crawler.audit import run_audit
    from crawler.config import parse_config
    from crawler.fakes import github_graphql
    from crawler.fakes.github import FakeGitHub, FakeTag
    from crawler.store import Store
    from tests.ops_support import upstream

    schema = _github_schema()
    sent: list[str] = []
    real = github_graphql.handle

    def handle(fake: Any, raw: bytes) -> tuple[int, dict[str, Any], int]:
        sent.append(json.loads(raw)["query"])
        return real(fake, raw)

    monkeypatch.setattr(github_graphql, "handle", handle)
    state = upstream("v1.0")
    state.repos[1].tags.append(FakeTag("v0.1", "e" * 40, "2026-09-01T00:00:00Z"))
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
    kinds = {query.split("{", 1)[0].strip() for query in sent}
    assert kinds == {"query CrawlerBatch", "query CrawlerFiles"}
    for query in sent:
        assert [e.message for e in validate(schema, parse(query))] == [], query
