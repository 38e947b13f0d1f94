"""The GraphQL documents the GitHub source sends. Each is validated against GitHub's published
schema in the tests (tests/test_github_queries.py), so a query the fake accepts, GitHub does."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from crawler.upstream.sources.github import GitHubSettings

# Enough to pick the root license file by name and read its blob id (no text: the text is
# only asked for when the blob id is new).
ROOT_ENTRIES = (
    'rootEntries: object(expression: "HEAD:") { ... on Tree { entries { name type oid } } }'
)


def _q(value: str) -> str:
    """A GraphQL string literal (JSON string syntax is valid GraphQL string syntax)."""
    return json.dumps(value)


def _owner_name(path: str) -> tuple[str, str]:
    owner, name = path.split("/", 1)
    return owner, name


def batch_query(
    repos: Sequence[str], license_paths: Sequence[str | None], settings: GitHubSettings
) -> str:
    """One query, one alias per repository: releases, tags, head, license verdict, and the
    license file's blob id — at its known path, or the root entries when none is known yet."""
    parts = ["query CrawlerBatch {", "  rateLimit { cost remaining limit resetAt used }"]
    for index, (repo, path) in enumerate(zip(repos, license_paths, strict=True)):
        owner, name = _owner_name(repo)
        if path is None:
            license_part = ROOT_ENTRIES
        else:
            expression = _q("HEAD:" + path)
            license_part = (
                f"licenseBlob: object(expression: {expression}) {{ ... on Blob {{ oid }} }}"
            )
        parts.append(
            f"  r{index}: repository(owner: {_q(owner)}, name: {_q(name)}) {{ ...RepoFacts "
            f"{license_part} }}"
        )
    parts.append("}")
    parts.append(
        "fragment RepoFacts on Repository {\n"
        "  databaseId nameWithOwner url isArchived isEmpty\n"
        "  licenseInfo { key spdxId name }\n"
        "  defaultBranchRef { name target { ... on Commit { oid committedDate url } } }\n"
        f"  releases(first: {settings.releases_per_repo}, "
        "orderBy: {field: CREATED_AT, direction: DESC}) {\n"
        "    totalCount\n"
        "    nodes { tagName name publishedAt createdAt isPrerelease isDraft isLatest url }\n"
        "  }\n"
        f'  refs(refPrefix: "refs/tags/", first: {settings.tags_per_repo}, '
        "orderBy: {field: TAG_COMMIT_DATE, direction: DESC}) {\n"
        "    totalCount\n"
        "    nodes { name target { oid ... on Commit { committedDate } "
        "... on Tag { target { oid ... on Commit { committedDate } } } } }\n"
        "  }\n"
        "}"
    )
    return "\n".join(parts)


def files_query(requests: Sequence[tuple[str, str, str | None]]) -> str:
    """The root entries or one file's text, at a given commit, for several repositories at once:
    ``(repository, commit oid, path)``; a path of None asks for the root entries."""
    parts = ["query CrawlerFiles {", "  rateLimit { cost remaining limit resetAt used }"]
    for index, (repo, commit, path) in enumerate(requests):
        owner, name = _owner_name(repo)
        if path is None:
            wanted = (
                f"object(expression: {_q(commit + ':')}) "
                "{ ... on Tree { entries { name type oid } } }"
            )
        else:
            wanted = (
                f"object(expression: {_q(commit + ':' + path)}) "
                "{ ... on Blob { oid byteSize isBinary isTruncated text } }"
            )
        parts.append(f"  f{index}: repository(owner: {_q(owner)}, name: {_q(name)}) {{ {wanted} }}")
    parts.append("}")
    return "\n".join(parts)


def is_timeout(status: int, doc: dict[str, Any] | None) -> bool:
    """GitHub's ways of saying a query took too long: 502/504, or an error saying so."""
    if status in (502, 504):
        return True
    for error in (doc or {}).get("errors") or []:
        text = f"{error.get('type', '')} {error.get('message', '')}".lower()
        if "timeout" in text or "resource_limits" in text or "something went wrong" in text:
            return True
    return False
