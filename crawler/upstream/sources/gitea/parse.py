"""Gitea / Forgejo API v1 JSON → plain snapshot facts. Pure; raises ShapeError on bad input.

Shapes (Gitea's ``modules/structs``): a repository carries ``id``, ``full_name``, ``html_url``,
``default_branch``, ``archived`` and, from Gitea 1.23, ``licenses`` (the SPDX ids Gitea found;
Forgejo leaves it out); a release ``tag_name``, ``name``, ``draft``, ``prerelease``,
``published_at``, ``html_url``; a tag ``name`` and ``commit.{sha,created}``; a commit ``sha``,
``created``, ``html_url``; contents ``type``, ``path``, ``sha``, ``html_url`` and, for one
file, base64 ``content``. Timestamps are RFC 3339 with the server's offset (normalised here to
UTC). Upstream strings are capped here and escaped by the renderers.
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

FORGE = "gitea"
MAX_TEXT = 256 * 1024


def _req(obj: Any, key: str) -> Any:
    return field(obj, key, service="Gitea")


def instant(stamp: Any) -> str | None:
    """An RFC 3339 time with its offset, as UTC ``…Z``; None when absent, zoneless or bad."""
    try:
        moment = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")) if stamp else None
    except ValueError:
        return None
    if moment is None or moment.tzinfo is None or moment.year < 1971:
        return None  # Gitea writes the zero time (0001-01-01) for "never"
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def forge_license(value: Any) -> ForgeLicense:
    """Gitea's reading: one SPDX id is that license; several or an unknown one is NOASSERTION,
    as GitHub says for a license file it cannot name; none (or Forgejo) says nothing."""
    listed = value if isinstance(value, list) else []
    names = [v.strip() for v in listed if isinstance(v, str) and v.strip()]
    if not names:
        return ForgeLicense(None, None, None)
    from license_expression import get_spdx_licensing

    shown = " AND ".join(names)
    info = get_spdx_licensing().validate(names[0])
    spdx = info.normalized_expression if len(names) == 1 and not info.errors else None
    return ForgeLicense(key=cap(shown.lower()), spdx_id=cap(spdx or "NOASSERTION"), name=cap(shown))


def repo_info(data: dict[str, Any]) -> tuple[RepoInfo, ForgeLicense]:
    full_name = _req(data, "full_name")
    if not isinstance(full_name, str) or "/" not in full_name:
        raise ShapeError("repository full_name is not 'owner/name' in Gitea answer")
    repo_id = _req(data, "id")
    if not isinstance(repo_id, int) or isinstance(repo_id, bool):
        raise ShapeError("repository id is not a number in Gitea answer")
    repo = RepoInfo(
        id=repo_id,
        full_name=full_name,
        default_branch="" if data.get("empty") else str(data.get("default_branch") or ""),
        archived=data.get("archived") is True,
        url=str(_req(data, "html_url")).rstrip("/"),
        forge=FORGE,
        description=description(data.get("description")),
    )
    return repo, forge_license(data.get("licenses"))


def _items(data: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise ShapeError(f"{what} is not a list of objects")
    return data


def releases(data: Any, repo_url: str) -> tuple[Release, ...]:
    found = []
    for item in _items(data, "release list"):
        tag = cap(_req(item, "tag_name"))
        assert tag is not None
        url = item.get("html_url")
        found.append(
            Release(
                tag=tag,
                name=cap(item.get("name")),
                published_at=instant(item.get("published_at")) or instant(item.get("created_at")),
                prerelease=item.get("prerelease") is True,
                draft=item.get("draft") is True,
                url=str(url) if url else f"{repo_url}/releases/tag/{quote(tag, safe='')}",
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
                date=instant(optional(item, "commit", "created")),
                url=f"{repo_url}/src/tag/{quote(name, safe='')}",
            )
        )
    return tuple(found)


def commit(data: Any, repo_url: str) -> Commit:
    sha = str(_req(data, "sha"))
    date = instant(data.get("created")) or instant(optional(data, "commit", "committer", "date"))
    return Commit(sha=sha, date=date, url=str(data.get("html_url") or f"{repo_url}/commit/{sha}"))


def root_files(data: Any) -> dict[str, str]:
    """The files of a directory listing (``/contents``): path → blob SHA."""
    return {
        str(entry["path"]): str(entry.get("sha") or "")
        for entry in _items(data, "directory listing")
        if entry.get("type") == "file" and "/" not in str(entry.get("path", "/"))
    }


def file_text(data: Any) -> str:
    if not isinstance(data, dict) or data.get("type") != "file":
        raise ShapeError("not a file in Gitea answer")
    if data.get("encoding") not in (None, "base64"):
        raise ShapeError(f"unexpected content encoding {cap(data.get('encoding'), 40)!r}")
    try:
        raw = base64.b64decode(str(data.get("content") or ""), validate=False)[:MAX_TEXT]
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
