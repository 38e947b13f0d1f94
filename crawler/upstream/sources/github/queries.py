"""The GraphQL documents the GitHub source sends. Each is validated against GitHub's published
schema in the tests (tests/integration/test_github_queries.py), so a query the fake accepts,
GitHub does."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from crawler.upstream.sources.github import GitHubSettings


@dataclass(frozen=True)
class Query:
    """A GraphQL document and its variables. Repositories, paths and commits travel as
    variables, so the text depends only on how many repositories a query asks about: every
    full batch sends the same document (a server parses and validates it once), and no name
    from sources.yaml or an answer is ever spliced into GraphQL syntax."""

    text: str
    variables: dict[str, Any]


def _owner_name(path: str) -> tuple[str, str]:
    owner, name = path.split("/", 1)
    return owner, name


@functools.lru_cache(maxsize=32)
def _batch_text(size: int, releases: int, tags: int) -> str:
    declared = ", ".join(f"$o{i}: String!, $n{i}: String!, $p{i}: String!, $k{i}: Boolean!"
                         for i in range(size))  # fmt: skip
    parts = [f"query CrawlerBatch({declared}) {{",
             "  rateLimit { cost remaining limit resetAt used }"]  # fmt: skip
    for i in range(size):
        # the license file's blob id at its known path ($k true), else the root entries: enough
        # to pick the root license file by name (no text: asked only when the blob id is new)
        parts.append(
            f"  r{i}: repository(owner: $o{i}, name: $n{i}) {{ ...RepoFacts "
            f"licenseBlob: object(expression: $p{i}) @include(if: $k{i}) "
            "{ ... on Blob { oid } } "
            f'rootEntries: object(expression: "HEAD:") @skip(if: $k{i}) '
            "{ ... on Tree { entries { name type oid } } } }"
        )
    parts.append("}")
    parts.append(
        "fragment RepoFacts on Repository {\n"
        "  databaseId nameWithOwner url isArchived isEmpty description\n"
        "  licenseInfo { key spdxId name }\n"
        "  defaultBranchRef { name target { ... on Commit { oid committedDate url } } }\n"
        f"  releases(first: {releases}, orderBy: {{field: CREATED_AT, direction: DESC}}) {{\n"
        "    totalCount\n"
        "    nodes { tagName name publishedAt createdAt isPrerelease isDraft isLatest url }\n"
        "  }\n"
        f'  refs(refPrefix: "refs/tags/", first: {tags}, '
        "orderBy: {field: TAG_COMMIT_DATE, direction: DESC}) {\n"
        "    totalCount\n"
        "    nodes { name target { oid ... on Commit { committedDate } "
        "... on Tag { target { oid ... on Commit { committedDate } } } } }\n"
        "  }\n"
        "}"
    )
    return "\n".join(parts)


def batch_query(
    repos: Sequence[str], license_paths: Sequence[str | None], settings: GitHubSettings
) -> Query:
    """One query, one alias per repository: releases, tags, head, license verdict, and the
    license file's blob id — at its known path, or the root entries when none is known yet."""
    variables: dict[str, Any] = {}
    for i, (repo, path) in enumerate(zip(repos, license_paths, strict=True)):
        variables[f"o{i}"], variables[f"n{i}"] = _owner_name(repo)
        variables[f"p{i}"] = "HEAD:" + (path or "")
        variables[f"k{i}"] = path is not None
    text = _batch_text(len(repos), settings.releases_per_repo, settings.tags_per_repo)
    return Query(text, variables)


@functools.lru_cache(maxsize=32)
def _files_text(size: int) -> str:
    declared = ", ".join(f"$o{i}: String!, $n{i}: String!, $e{i}: String!" for i in range(size))
    parts = [f"query CrawlerFiles({declared}) {{",
             "  rateLimit { cost remaining limit resetAt used }"]  # fmt: skip
    for i in range(size):
        parts.append(
            f"  f{i}: repository(owner: $o{i}, name: $n{i}) {{ object(expression: $e{i}) "
            "{ ... on Blob { oid byteSize isBinary isTruncated text } "
            "... on Tree { entries { name type oid } } } }"
        )
    parts.append("}")
    return "\n".join(parts)


def files_query(requests: Sequence[tuple[str, str, str | None]]) -> Query:
    """The root entries or one file's text, at a given commit, for several repositories at once:
    ``(repository, commit oid, path)``; a path of None asks for the root entries."""
    variables: dict[str, Any] = {}
    for i, (repo, commit, path) in enumerate(requests):
        variables[f"o{i}"], variables[f"n{i}"] = _owner_name(repo)
        variables[f"e{i}"] = f"{commit}:{path or ''}"
    return Query(_files_text(len(requests)), variables)


@functools.lru_cache(maxsize=32)
def _lookup_text(size: int) -> str:
    declared = ", ".join(f"$o{i}: String!, $n{i}: String!" for i in range(size))
    parts = [f"query CrawlerLinks({declared}) {{",
             "  rateLimit { cost remaining limit resetAt used }"]  # fmt: skip
    for i in range(size):
        parts.append(
            f"  l{i}: repository(owner: $o{i}, name: $n{i}) "
            "{ databaseId nameWithOwner url isArchived description "
            "defaultBranchRef { name } }"
        )
    parts.append("}")
    return "\n".join(parts)


def lookup_query(repos: Sequence[str]) -> Query:
    """What a repository link needs of each repository: its current name and page (a rename
    is a move), whether it is archived, its description. One alias per repository."""
    variables: dict[str, Any] = {}
    for i, repo in enumerate(repos):
        variables[f"o{i}"], variables[f"n{i}"] = _owner_name(repo)
    return Query(_lookup_text(len(repos)), variables)


def is_timeout(status: int, doc: dict[str, Any] | None) -> bool:
    """GitHub's ways of saying a query took too long: 502/504, or an error saying so."""
    if status in (502, 504):
        return True
    for error in (doc or {}).get("errors") or []:
        text = f"{error.get('type', '')} {error.get('message', '')}".lower()
        if "timeout" in text or "resource_limits" in text or "something went wrong" in text:
            return True
    return False
