"""GitHub JSON (REST and GraphQL) → plain snapshot facts. Pure; raises ShapeError on bad input.

Upstream strings are attacker-controlled: they are capped here and escaped by the renderers.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from crawler.analysis.licenses import is_license_file
from crawler.model import (
    Commit,
    ForgeLicense,
    InventoryEntry,
    LicenseFile,
    Release,
    RepoInfo,
    Tag,
)
from crawler.upstream.answers import ShapeError as ShapeError  # raised to callers
from crawler.upstream.answers import cap, field, optional

MAX_LICENSE_TEXT = 256 * 1024
MAX_INVENTORY = 2000


def _req(obj: Any, *keys: str) -> Any:
    return field(obj, *keys, service="GitHub")


def forge_license(data: Any) -> ForgeLicense:
    if not isinstance(data, dict):
        return ForgeLicense(None, None, None)
    return ForgeLicense(
        key=cap(data.get("key")),
        spdx_id=cap(data.get("spdx_id", data.get("spdxId"))),
        name=cap(data.get("name")),
    )


def repo_from_rest(data: dict[str, Any]) -> tuple[RepoInfo, ForgeLicense]:
    repo = RepoInfo(
        id=int(_req(data, "id")),
        full_name=str(_req(data, "full_name")),
        default_branch=str(data.get("default_branch") or ""),
        archived=bool(data.get("archived", False)),
        url=str(_req(data, "html_url")),
        forge="github",
    )
    return repo, forge_license(data.get("license"))


def releases_from_rest(data: list[Any]) -> tuple[Release, ...]:
    releases = []
    for item in data:
        if not isinstance(item, dict):
            raise ShapeError("release entry is not an object")
        tag = cap(_req(item, "tag_name"))
        assert tag is not None
        releases.append(
            Release(
                tag=tag,
                name=cap(item.get("name")),
                published_at=item.get("published_at"),
                prerelease=bool(item.get("prerelease", False)),
                draft=bool(item.get("draft", False)),
                url=str(item.get("html_url") or ""),
            )
        )
    return tuple(releases)


def mark_latest(releases: tuple[Release, ...], latest: Any) -> tuple[Release, ...]:
    """The release list with GitHub's ``/releases/latest`` answer marked ``is_latest``."""
    tag = cap(latest.get("tag_name")) if isinstance(latest, dict) else None
    return tuple(replace(r, is_latest=r.tag == tag) for r in releases)


def tag_url(repo_url: str, name: str) -> str:
    """A tag's page on the forge the repository answer came from (github.com or Enterprise)."""
    return f"{repo_url.rstrip('/')}/releases/tag/{quote(name, safe='/')}"


def tags_from_rest(data: list[Any], repo_url: str) -> tuple[Tag, ...]:
    tags = []
    for item in data:
        name = cap(_req(item, "name"))
        assert name is not None
        sha = str(_req(item, "commit", "sha"))
        tags.append(Tag(name=name, sha=sha, url=tag_url(repo_url, name)))
    return tuple(tags)


def commit_from_rest(data: Any) -> Commit:
    item = data[0] if isinstance(data, list) and data else data
    if not isinstance(item, dict):
        raise ShapeError("commit list is empty")
    return Commit(
        sha=str(_req(item, "sha")),
        date=optional(item, "commit", "committer", "date")
        or optional(item, "commit", "author", "date"),
        url=str(item.get("html_url") or ""),
    )


def license_text(text: str) -> str:
    """A license file's text as analysed: capped, without a byte-order mark."""
    return text[:MAX_LICENSE_TEXT].removeprefix("\ufeff")


def license_file_from_rest(data: dict[str, Any]) -> tuple[LicenseFile, ForgeLicense]:
    content = data.get("content") or ""
    try:
        raw = base64.b64decode(content, validate=False)[:MAX_LICENSE_TEXT]
    except (binascii.Error, ValueError):
        raise ShapeError("license content is not valid base64") from None
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    license_file = LicenseFile(
        path=str(_req(data, "path")),
        blob_sha=str(_req(data, "sha")),
        url=str(data.get("html_url") or ""),
        text=text,
    )
    return license_file, forge_license(data.get("license"))


def file_url(repo_url: str, ref: str, path: str) -> str:
    """A file's page on the forge the repository answer came from (github.com or Enterprise)."""
    return f"{repo_url.rstrip('/')}/blob/{quote(ref, safe='/')}/{quote(path, safe='/')}"


def inventory_from_tree(
    data: dict[str, Any], repo_url: str | None = None, ref: str | None = None
) -> tuple[InventoryEntry, ...]:
    """License-ish files of a recursive tree; with the repository's web URL and a ref, each
    entry links to its page."""
    entries = _req(data, "tree")
    if not isinstance(entries, list):
        raise ShapeError("tree is not a list")
    found = [
        InventoryEntry(
            path=str(e["path"]),
            blob_sha=str(e.get("sha", "")),
            url=file_url(repo_url, ref, str(e["path"])) if repo_url and ref else None,
        )
        for e in entries
        if isinstance(e, dict) and e.get("type") == "blob" and is_license_file(str(e.get("path")))
    ]
    return tuple(sorted(found, key=lambda e: e.path)[:MAX_INVENTORY])


# -- GraphQL ---------------------------------------------------------------------------------


def repo_from_graphql(node: dict[str, Any]) -> tuple[RepoInfo, ForgeLicense]:
    branch = node.get("defaultBranchRef") or {}
    repo = RepoInfo(
        id=int(_req(node, "databaseId")),
        full_name=str(_req(node, "nameWithOwner")),
        default_branch=str(branch.get("name") or ""),
        archived=bool(node.get("isArchived", False)),
        url=str(_req(node, "url")),
        forge="github",
    )
    return repo, forge_license(node.get("licenseInfo"))


def releases_from_graphql(node: dict[str, Any]) -> tuple[Release, ...]:
    nodes = optional(node, "releases", "nodes") or []
    releases = []
    for item in nodes:
        if not isinstance(item, dict):
            continue
        tag = cap(_req(item, "tagName"))
        assert tag is not None
        releases.append(
            Release(
                tag=tag,
                name=cap(item.get("name")),
                published_at=item.get("publishedAt"),
                prerelease=bool(item.get("isPrerelease", False)),
                draft=bool(item.get("isDraft", False)),
                url=str(item.get("url") or ""),
                is_latest=bool(item.get("isLatest", False)),
            )
        )
    return tuple(releases)


def tags_from_graphql(node: dict[str, Any], repo_url: str) -> tuple[Tag, ...]:
    tags = []
    for item in optional(node, "refs", "nodes") or []:
        target = item.get("target") or {}
        inner = target.get("target")
        peeled: dict[str, Any] = inner if isinstance(inner, dict) else target
        name = cap(_req(item, "name"))
        assert name is not None
        tags.append(
            Tag(
                name=name,
                sha=str(peeled.get("oid", "")),
                date=peeled.get("committedDate"),
                url=tag_url(repo_url, name),
            )
        )
    return tuple(tags)


def head_from_graphql(node: dict[str, Any]) -> Commit | None:
    target = optional(node, "defaultBranchRef", "target")
    if not isinstance(target, dict) or "oid" not in target:
        return None
    return Commit(
        sha=str(target["oid"]), date=target.get("committedDate"), url=str(target.get("url") or "")
    )
