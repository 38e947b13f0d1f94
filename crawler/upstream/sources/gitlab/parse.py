"""GitLab REST v4 JSON → plain snapshot facts. Pure; raises ShapeError on a bad answer.

Field names follow GitLab's API documentation (doc/api/projects.md, releases/_index.md,
tags.md, branches.md, repository_files.md). Upstream strings are attacker-controlled: they
are capped here and escaped by the renderers. Timestamps are normalised to UTC ``…Z`` so that
they sort and compare like the other sources' (GitLab sends offsets and milliseconds).
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from functools import cache
from typing import Any
from urllib.parse import quote, unquote

from crawler.model import Commit, ForgeLicense, LicenseFile, Release, RepoInfo, Tag
from crawler.upstream.answers import ShapeError as ShapeError  # raised to callers
from crawler.upstream.answers import cap, description, field

MAX_FILE_TEXT = 1024 * 1024  # a README or license file; larger ones are cut
NOASSERTION = "NOASSERTION"


def _req(obj: Any, *keys: str) -> Any:
    return field(obj, *keys, service="GitLab")


def _web_url(value: Any, what: str) -> str:
    url = _http(value)
    if url is None:
        raise ShapeError(f"GitLab answer has no usable web URL for {what}")
    return url.rstrip("/")


def _http(value: Any) -> str | None:
    """A link from the answer when it is one (an http(s) URL of sane length), else None."""
    ok = isinstance(value, str) and value.startswith(("https://", "http://")) and len(value) < 2048
    return str(value) if ok else None


def utc(value: Any) -> str | None:
    """``2019-01-03T01:56:19.539Z`` or ``2012-05-28T04:42:42-07:00`` → ``…T…Z`` in UTC."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@cache
def spdx_for_key(key: str) -> str | None:
    """GitLab names a license by its licensee key (choosealicense.com's file name) and gives
    no SPDX id: take the id from choosealicense's own metadata. Licensee's ``other`` (a
    license file it could not match) is what GitHub reports as NOASSERTION."""
    if key == "other":
        return NOASSERTION
    from pychoosealicense import get_license

    try:
        return str(get_license(key).spdx_id)
    except (ValueError, KeyError, TypeError):
        return None


def forge_license(data: Any) -> ForgeLicense:
    if not isinstance(data, dict) or not data.get("key"):
        return ForgeLicense(None, None, None)
    key = str(data["key"])
    return ForgeLicense(key=cap(key), spdx_id=spdx_for_key(key), name=cap(data.get("name")))


def project(data: Any) -> tuple[RepoInfo, ForgeLicense, str | None]:
    """The repository facts, GitLab's license verdict and its ``license_url`` (the web page of
    the license file it detected)."""
    if not isinstance(data, dict):
        raise ShapeError("project answer is not an object")
    try:
        number = int(_req(data, "id"))
    except (TypeError, ValueError):
        raise ShapeError("project id is not a number") from None
    repo = RepoInfo(
        id=number,
        full_name=str(cap(_req(data, "path_with_namespace"), 1000)),
        default_branch=str(cap(data.get("default_branch")) or ""),
        archived=bool(data.get("archived", False)),
        url=_web_url(data.get("web_url"), "the project"),
        forge="gitlab",
        description=description(data.get("description")),
    )
    return repo, forge_license(data.get("license")), _http(data.get("license_url"))


def release_url(repo_url: str, tag: str) -> str:
    return f"{repo_url}/-/releases/{quote(tag, safe='')}"


def releases(items: list[Any], repo_url: str) -> tuple[Release, ...]:
    """GitLab has no drafts; a release dated in the future is an ``upcoming_release``: the
    pre-release of the catalog. A release whose tag is hidden (no code access) is skipped."""
    found = []
    for item in items:
        if not isinstance(item, dict):
            raise ShapeError("release entry is not an object")
        tag = cap(item.get("tag_name"))
        if not tag:
            continue
        links = item.get("_links")
        own = links.get("self") if isinstance(links, dict) else None
        found.append(
            Release(
                tag=tag,
                name=cap(item.get("name")),
                published_at=utc(item.get("released_at")) or utc(item.get("created_at")),
                prerelease=bool(item.get("upcoming_release", False)),
                draft=False,
                url=_http(own) or release_url(repo_url, tag),
            )
        )
    return tuple(found)


def tag_url(repo_url: str, name: str) -> str:
    """A tag's page on the instance the project answer came from."""
    return f"{repo_url}/-/tags/{quote(name, safe='/')}"


def tags(items: list[Any], repo_url: str) -> tuple[Tag, ...]:
    found = []
    for item in items:
        name = cap(_req(item, "name"))
        assert name is not None
        commit = item.get("commit") if isinstance(item.get("commit"), dict) else {}
        sha = str(commit.get("id") or _req(item, "target"))
        found.append(
            Tag(
                name=name,
                sha=sha,
                date=utc(commit.get("committed_date")),
                url=tag_url(repo_url, name),
            )
        )
    return tuple(found)


def branch_head(data: Any, repo_url: str) -> Commit:
    sha = str(_req(data, "commit", "id"))
    commit = data["commit"]
    return Commit(
        sha=sha,
        date=utc(commit.get("committed_date")) or utc(commit.get("created_at")),
        url=_http(commit.get("web_url")) or f"{repo_url}/-/commit/{sha}",
    )


def license_path(license_url: str | None, repo: RepoInfo) -> str | None:
    """The license file's path, read off the ``license_url`` GitLab gives: the project's web
    URL, ``/-/blob/`` (or the older ``/blob/``), the default branch, then the path."""
    if not license_url or not repo.default_branch:
        return None
    for prefix in (f"{repo.url}/-/blob/", f"{repo.url}/blob/"):
        branch_forms = {repo.default_branch, quote(repo.default_branch, safe="/")}
        for branch in branch_forms | {quote(repo.default_branch, safe="")}:
            start = f"{prefix}{branch}/"
            if license_url.startswith(start):
                path = unquote(license_url[len(start) :].split("?", 1)[0].split("#", 1)[0])
                return path or None
    return None


def file_page(repo: RepoInfo, path: str) -> str:
    """A file's web page at the default branch (the form of GitLab's ``license_url``)."""
    branch = quote(repo.default_branch or "HEAD", safe="/")
    return f"{repo.url}/-/blob/{branch}/{quote(path, safe='/')}"


def root_files(data: Any) -> dict[str, str]:
    """A ``/repository/tree`` page → its files (path → blob id)."""
    entries = data if isinstance(data, list) else []
    return {
        str(e["path"]): str(e["id"])
        for e in entries
        if isinstance(e, dict) and e.get("type") == "blob" and e.get("path") and e.get("id")
    }


def file_text(data: Any) -> tuple[str, str, str]:
    """A repository file answer → (path, blob id, text), the text cut at MAX_FILE_TEXT."""
    path = str(_req(data, "file_path"))
    blob = str(_req(data, "blob_id"))
    content = data.get("content") or ""
    if data.get("encoding", "base64") == "base64":
        try:
            raw = base64.b64decode(content, validate=False)
        except (binascii.Error, ValueError):
            raise ShapeError(f"file {path!r}: content is not valid base64") from None
        text = raw[:MAX_FILE_TEXT].decode("utf-8", errors="replace")
    else:
        text = str(content)[:MAX_FILE_TEXT]
    return path, blob, text


def license_file(data: Any, url: str) -> LicenseFile:
    path, blob, text = file_text(data)
    return LicenseFile(path=cap(path, 1000) or path, blob_sha=blob, url=url, text=text)
