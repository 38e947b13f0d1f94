"""Which release, tag or commit a project's catalog row shows. Pure functions, no I/O.

A release candidate is never reported as a release: GitHub's prerelease flag and the version
string itself (PEP 440 / semver pre-release markers) both count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

from crawler.config import ProjectSpec
from crawler.model import CurrentVersion, ProjectSnapshot, Release, Tag
from crawler.patterns import search

_PRERELEASE_WORD = re.compile(r"(?i)(?:^|[-._+\d])(rc|alpha|beta|dev|pre|preview|nightly)\d*")


def looks_like_prerelease(tag: str) -> bool:
    """True for ``v0.33.0rc3``, ``1.0.0-beta.1``, ``v2.0.0.dev4``; False for ``v0.27.0.post1``."""
    candidate = tag.strip()
    for prefix in ("v", "V", "release-", "release/"):
        candidate = candidate.removeprefix(prefix)
    try:
        return Version(candidate).is_prerelease
    except InvalidVersion:
        return bool(_PRERELEASE_WORD.search(candidate))


def is_prerelease(release: Release) -> bool:
    return release.prerelease or looks_like_prerelease(release.tag)


def _matches(spec: ProjectSpec, name: str) -> bool:
    return spec.tag_pattern is None or bool(search(spec.tag_pattern, name, subject=f"tag {name!r}"))


def usable_releases(spec: ProjectSpec, releases: Iterable[Release]) -> list[Release]:
    """Published releases that pass the project's filters, newest first."""
    kept = [
        r
        for r in releases
        if not r.draft
        and _matches(spec, r.tag)
        and (spec.prereleases == "include" or not is_prerelease(r))
    ]
    return sorted(kept, key=lambda r: (r.published_at or "", r.tag), reverse=True)


def _version_key(name: str) -> tuple[int, Version | str]:
    candidate = name.strip().removeprefix("v").removeprefix("V")
    try:
        return (1, Version(candidate))
    except InvalidVersion:
        return (0, name)


def usable_tags(spec: ProjectSpec, tags: Iterable[Tag]) -> list[Tag]:
    """Tags that pass the filters, newest first: by commit date when every tag has one (GraphQL),
    else by version order (REST lists tags by name and without dates)."""
    kept = [
        t
        for t in tags
        if _matches(spec, t.name)
        and (spec.prereleases == "include" or not looks_like_prerelease(t.name))
    ]
    if all(t.date for t in kept):
        return sorted(kept, key=lambda t: (t.date or "", t.name), reverse=True)
    versioned = sorted(
        (t for t in kept if _version_key(t.name)[0]),
        key=lambda t: _version_key(t.name)[1],
        reverse=True,
    )
    others = sorted(
        (t for t in kept if not _version_key(t.name)[0]), key=lambda t: t.name, reverse=True
    )
    return versioned + others


def current_version(
    spec: ProjectSpec, snapshot: ProjectSnapshot | None, license_label: str | None
) -> CurrentVersion:
    """The catalog row: newest usable release, else newest tag, else head commit; never invented."""
    repo = snapshot.repo.full_name if snapshot and snapshot.repo else spec.repo
    empty = CurrentVersion(spec.name, repo, None, None, None, False, license_label, None)
    if snapshot is None:
        return empty
    releases = usable_releases(spec, snapshot.releases or ())
    if spec.track in ("auto", "releases") and releases:
        newest = releases[0]
        return CurrentVersion(
            spec.name, repo, "release", newest.tag, newest.published_at,
            is_prerelease(newest), license_label, newest.url,
        )  # fmt: skip
    tags = usable_tags(spec, snapshot.tags or ())
    if spec.track in ("auto", "tags") and tags:
        tag = tags[0]
        url = f"https://github.com/{repo}/releases/tag/{tag.name}" if repo else None
        return CurrentVersion(
            spec.name, repo, "tag", tag.name, tag.date,
            looks_like_prerelease(tag.name), license_label, url,
        )  # fmt: skip
    if spec.track in ("auto", "commits") and snapshot.head is not None:
        head = snapshot.head
        return CurrentVersion(
            spec.name, repo, "commit", head.sha[:12], head.date, False, license_label, head.url
        )
    return empty
