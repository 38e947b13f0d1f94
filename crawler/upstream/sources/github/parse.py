"""GitHub JSON (REST and GraphQL) → plain snapshot facts. Pure; raises ShapeError on bad input.

Upstream strings are attacker-controlled: they are capped here and escaped by the renderers.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import replace
from typing import Any
from urllib.parse import quote

import msgspec

from crawler.analysis.license_paths import is_license_file
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
from crawler.upstream.answers import cap, description, field, optional
from crawler.upstream.sources.github import graphql_shapes as shapes

MAX_LICENSE_TEXT = 256 * 1024
MAX_INVENTORY = 2000


def _req(obj: Any, *keys: str) -> Any:
    return field(obj, *keys, service="GitHub")


NOASSERTION = "NOASSERTION"


def _verdict(key: Any, spdx_id: Any, name: Any) -> ForgeLicense:
    """GitHub's license verdict. Its ``other`` (a license file licensee could not name) is
    NOASSERTION whether GitHub says so or, in its older shape, sends ``spdx_id: null`` (the
    schema's ``License.spdxId`` is nullable): as the GitLab reader maps licensee's ``other``."""
    spdx = cap(spdx_id)
    if not spdx and isinstance(key, str) and key.strip().lower() == "other":
        spdx = NOASSERTION
    return ForgeLicense(key=cap(key), spdx_id=spdx, name=cap(name))


def forge_license(data: Any) -> ForgeLicense:
    if not isinstance(data, dict):
        return ForgeLicense(None, None, None)
    return _verdict(data.get("key"), data.get("spdx_id", data.get("spdxId")), data.get("name"))


def repo_from_rest(data: dict[str, Any]) -> tuple[RepoInfo, ForgeLicense]:
    repo = RepoInfo(
        id=int(_req(data, "id")),
        full_name=str(_req(data, "full_name")),
        default_branch=str(data.get("default_branch") or ""),
        archived=bool(data.get("archived", False)),
        url=str(_req(data, "html_url")),
        forge="github",
        description=description(data.get("description")),
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


def root_files_from_rest(data: list[Any]) -> dict[str, str]:
    """A directory listing of the contents API → its files (path → blob SHA)."""
    return {
        str(e["path"]): str(e["sha"])
        for e in data
        if isinstance(e, dict) and e.get("type") == "file" and e.get("path") and e.get("sha")
    }


def file_url(repo_url: str, ref: str, path: str) -> str:
    """A file's page on the forge the repository answer came from (github.com or Enterprise)."""
    return f"{repo_url.rstrip('/')}/blob/{quote(ref, safe='/')}/{quote(path, safe='/')}"


class TreeEntry(msgspec.Struct):
    """The fields of a tree entry the inventory reads (decode_tree)."""

    path: str = ""
    type: str = ""
    sha: str = ""


class _Tree(msgspec.Struct):
    tree: list[TreeEntry]


def decode_tree(body: str) -> Any:
    """A recursive tree's answer as ``{"tree": [TreeEntry, ...]}``: only the three fields the
    inventory reads are kept (a real repository's tree has tens of thousands of entries:
    json.loads's dictionaries took three times the CPU and most of the memory). An answer of
    another shape, or not JSON, is read by json.loads as before, for inventory_from_tree to
    judge (or for ValueError: not JSON)."""
    try:
        return {"tree": msgspec.json.decode(body, type=_Tree).tree}
    except msgspec.MsgspecError:
        return json.loads(body)


def _blobs(entries: list[Any]) -> list[tuple[str, str]]:
    """(path, blob SHA) of a tree's license-ish files, its entries decoded or plain JSON."""
    found = []
    for e in entries:
        if isinstance(e, TreeEntry):
            if e.type == "blob" and is_license_file(e.path):
                found.append((e.path, e.sha))
        elif (
            isinstance(e, dict) and e.get("type") == "blob" and is_license_file(str(e.get("path")))
        ):
            found.append((str(e["path"]), str(e.get("sha", ""))))
    return found


def inventory_from_tree(
    data: dict[str, Any], repo_url: str | None = None, ref: str | None = None
) -> tuple[InventoryEntry, ...]:
    """License-ish files of a recursive tree (JSON, or decode_tree's); with the repository's
    web URL and a ref, each entry links to its page."""
    entries = _req(data, "tree")
    if not isinstance(entries, list):
        raise ShapeError("tree is not a list")
    found = [
        InventoryEntry(
            path=path,
            blob_sha=sha,
            url=file_url(repo_url, ref, path) if repo_url and ref else None,
        )
        for path, sha in _blobs(entries)
    ]
    return tuple(sorted(found, key=lambda e: e.path)[:MAX_INVENTORY])


# -- GraphQL ---------------------------------------------------------------------------------


def repo_from_graphql(node: shapes.RepositoryNode) -> tuple[RepoInfo, ForgeLicense]:
    branch = node.defaultBranchRef
    repo = RepoInfo(
        id=node.databaseId,
        full_name=node.nameWithOwner,
        default_branch=(branch.name if branch else None) or "",
        archived=node.isArchived,
        url=node.url,
        forge="github",
        description=description(node.description),
    )
    verdict = node.licenseInfo
    if verdict is None:
        return repo, ForgeLicense(None, None, None)
    return repo, _verdict(verdict.key, verdict.spdxId, verdict.name)


def repo_from_lookup(node: shapes.LinkedRepository) -> RepoInfo:
    branch = node.defaultBranchRef
    return RepoInfo(
        id=node.databaseId,
        full_name=node.nameWithOwner,
        default_branch=(branch.name if branch else None) or "",
        archived=node.isArchived,
        url=node.url,
        forge="github",
        description=description(node.description),
    )


def releases_from_graphql(node: shapes.RepositoryNode) -> tuple[Release, ...]:
    return tuple(
        Release(
            tag=cap(item.tagName) or "",
            name=cap(item.name),
            published_at=item.publishedAt,
            prerelease=item.isPrerelease,
            draft=item.isDraft,
            url=item.url or "",
            is_latest=item.isLatest,
        )
        for item in node.releases.nodes
    )


def tags_from_graphql(refs: shapes.Refs, repo_url: str) -> tuple[Tag, ...]:
    tags = []
    for item in refs.nodes:
        target = item.target
        peeled = target.target if target and target.target else target
        name = cap(item.name) or ""
        tags.append(
            Tag(
                name=name,
                sha=(peeled.oid if peeled else None) or "",
                date=peeled.committedDate if peeled else None,
                url=tag_url(repo_url, name),
            )
        )
    return tuple(tags)


def head_from_graphql(node: shapes.RepositoryNode) -> Commit | None:
    target = node.defaultBranchRef.target if node.defaultBranchRef else None
    if target is None or target.oid is None:
        return None
    return Commit(sha=target.oid, date=target.committedDate, url=target.url or "")
