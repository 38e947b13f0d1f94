"""Gitee Open API v5 JSON → plain snapshot facts. Pure; raises ShapeError on bad input.

Gitee's shapes differ from GitHub's where it matters here: a repository's ``html_url`` ends in
``.git`` (the web page is without it), ``license`` is a plain name, the archived state is
``status`` 关闭 (closed), releases carry no web link (their page is
``<repo>/releases/tag/<tag>``), tags carry their commit's date, and timestamps are written with
a ``+08:00`` offset (normalised here to UTC). Upstream strings are capped here and escaped by
the renderers.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from crawler.model import Commit, ForgeLicense, LicenseFile, Release, RepoInfo, Tag
from crawler.upstream.answers import ShapeError as ShapeError  # raised to callers
from crawler.upstream.answers import cap, description, field, optional

FORGE = "gitee"
CLOSED = "关闭"  # Gitee's "closed" repository status: read-only, what GitHub calls archived
NOASSERTION = "NOASSERTION"
MAX_TEXT = 256 * 1024


def _req(obj: Any, key: str) -> Any:
    return field(obj, key, service="Gitee")


def utc(stamp: Any) -> str | None:
    """``2026-10-01T10:00:00+08:00`` → ``2026-10-01T02:00:00Z``; None when absent or unreadable."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None  # a time without its zone cannot be placed
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def web_url(html_url: str) -> str:
    """A repository's web page from its ``html_url`` (``https://gitee.com/o/r.git``)."""
    return html_url.rstrip("/").removesuffix(".git")


def forge_license(value: Any) -> ForgeLicense:
    """Gitee's license reading is a bare name. A known SPDX id or a name SPDX/ScanCode list
    for one license is kept (as its SPDX id); any other name is NOASSERTION, as GitHub says
    for a license file it cannot name."""
    if not isinstance(value, str) or not value.strip():
        return ForgeLicense(None, None, None)
    name = value.strip()
    from crawler.analysis.license_names import read_declared

    spdx = read_declared(name).spdx  # free text never raises
    return ForgeLicense(key=cap(name.lower()), spdx_id=cap(spdx or NOASSERTION), name=cap(name))


def repo_info(data: dict[str, Any]) -> tuple[RepoInfo, ForgeLicense]:
    full_name = data.get("full_name")
    if not isinstance(full_name, str) or "/" not in full_name:
        owner, path = optional(data, "namespace", "path"), data.get("path")
        if not (isinstance(owner, str) and isinstance(path, str)):
            raise ShapeError("missing field 'full_name' in Gitee answer")
        full_name = f"{owner}/{path}"
    try:
        repo_id = int(_req(data, "id"))
    except (TypeError, ValueError):
        raise ShapeError("repository id is not a number") from None
    repo = RepoInfo(
        id=repo_id,
        full_name=full_name,
        default_branch=str(data.get("default_branch") or ""),
        archived=data.get("status") == CLOSED,
        url=web_url(str(_req(data, "html_url"))),
        forge=FORGE,
        description=description(data.get("description")),
    )
    return repo, forge_license(data.get("license"))


def _items(data: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise ShapeError(f"{what} is not a list of objects")
    return data


def releases(data: Any, repo_url: str) -> tuple[Release, ...]:
    found = []
    for item in _items(data, "release list"):
        tag = cap(_req(item, "tag_name"))
        assert tag is not None
        found.append(
            Release(
                tag=tag,
                name=cap(item.get("name")),
                published_at=utc(item.get("created_at")),
                prerelease=bool(item.get("prerelease", False)),
                draft=False,  # Gitee lists published releases only
                url=f"{repo_url}/releases/tag/{quote(tag, safe='')}",
            )
        )
    return tuple(found)


def tags(data: Any, repo_url: str) -> tuple[Tag, ...]:
    found = []
    for item in _items(data, "tag list"):
        name = cap(_req(item, "name"))
        assert name is not None
        found.append(
            Tag(
                name=name,
                sha=str(_req(_req(item, "commit"), "sha")),
                date=utc(optional(item, "commit", "date")),
                url=f"{repo_url}/tree/{quote(name, safe='')}",
            )
        )
    return tuple(found)


def commit(data: Any, repo_url: str) -> Commit:
    sha = str(_req(data, "sha"))
    date = utc(optional(data, "commit", "committer", "date")) or utc(
        optional(data, "commit", "author", "date")
    )
    return Commit(sha=sha, date=date, url=str(data.get("html_url") or f"{repo_url}/commit/{sha}"))


def root_blobs(data: Any) -> dict[str, str]:
    """The files at the root of a (non-recursive) tree: path → blob SHA."""
    entries = _req(data, "tree")
    if not isinstance(entries, list):
        raise ShapeError("tree is not a list")
    return {
        str(e["path"]): str(e.get("sha", ""))
        for e in entries
        if isinstance(e, dict) and e.get("type") == "blob" and "/" not in str(e.get("path", "/"))
    }


def file_text(data: Any) -> str:
    content = optional(data, "content") or ""
    if optional(data, "encoding") not in (None, "base64"):
        raise ShapeError(f"unexpected content encoding {data.get('encoding')!r}")
    try:
        raw = base64.b64decode(content, validate=False)[:MAX_TEXT]
    except (binascii.Error, ValueError):
        raise ShapeError("file content is not valid base64") from None
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff")


def license_file(data: Any) -> LicenseFile:
    return LicenseFile(
        path=str(_req(data, "path")),
        blob_sha=str(_req(data, "sha")),
        url=str(data.get("html_url") or ""),
        text=file_text(data),
    )
