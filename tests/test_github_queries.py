"""Every GraphQL document the crawler sends must be valid for GitHub itself, not just the fake."""

from __future__ import annotations

from functools import cache

import pytest
from graphql import GraphQLSchema, build_schema, parse, validate

from crawler.config import ProjectSpec
from crawler.fakes.github_graphql import SCHEMA as FAKE_SCHEMA
from crawler.upstream.sources.github import GitHubSettings
from crawler.upstream.sources.github.fetch import graphql_batch_query
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
PATHS = ["LICENSE", "LICENSE-APACHE", 'weird "quoted" \\ path.md']


@pytest.mark.parametrize("schema_name", ["github", "fake"])
def test_batch_query_validates(schema_name: str) -> None:
    schema = _github_schema() if schema_name == "github" else FAKE_SCHEMA
    query = graphql_batch_query(SPECS, PATHS, GitHubSettings(releases_per_repo=10, tags_per_repo=5))
    document = parse(query)
    assert [e.message for e in validate(schema, document)] == []
    assert 'r2: repository(owner: "a-b", name: "c_d.e")' in query
    assert 'object(expression: "HEAD:weird \\"quoted\\" \\\\ path.md")' in query


def test_connection_sizes_stay_within_github_limits() -> None:
    # GitHub requires first/last between 1 and 100 on every connection
    settings = GitHubSettings(releases_per_repo=100, tags_per_repo=100, graphql_batch=100)
    query = graphql_batch_query(SPECS * 33, PATHS * 33, settings)
    assert query.count("repository(") == 99
    assert "releases(first: 100," in query and 'refs(refPrefix: "refs/tags/", first: 100,' in query
    assert [e.message for e in validate(FAKE_SCHEMA, parse(query))] == []
