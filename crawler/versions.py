"""Which release, tag or commit a project's catalog row shows. Pure functions, no I/O.

A release candidate is never passed off as a final release: GitHub's prerelease flag and the
version string itself (PEP 440 / semver pre-release markers) both count, and a row showing one
says so ("v0.33.0rc3 (release candidate)"). Which release the row shows is the project's
``Tracking.release_shown`` (``settings.release_shown``):

* ``highest_version`` (the default, the catalog page's convention): the highest usable release
  in version order, pre-releases included when the project includes them. A final published
  after a pre-release of its own version (v1.40 after v1.40a4) wins, being the higher version.
* ``newest_final``: the one the forge itself marks latest, else the highest final release in
  version order; the newest pre-release above it is kept as its own fact.

Publication time never decides (a pre-release or a backport published after a release does not
hide it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from packaging.version import InvalidVersion, Version

from crawler.model import CurrentVersion, ProjectSnapshot, Release, Tag, Tracking
from crawler.patterns import search

_PRERELEASE_WORD = re.compile(r"(?i)(?:^|[-._+\d])(rc|alpha|beta|dev|pre|preview|nightly)\d*")


@lru_cache(maxsize=65536)  # parsing a version is the cost; a catalog repeats its tags nightly
def looks_like_prerelease(tag: str) -> bool:
    """True for ``v0.33.0rc3``, ``1.0.0-beta.1``, ``v2.0.0.dev4``; False for ``v0.27.0.post1``."""
    candidate = tag.strip()
    for prefix in ("v", "V", "release-", "release/"):
        candidate = candidate.removeprefix(prefix)
    try:
        return Version(candidate).is_prerelease
    except InvalidVersion:
        return bool(_PRERELEASE_WORD.search(candidate))


# "rc" as its own token of a version: v0.33.0rc3, 1.4.0-rc3, 2.0.0.RC1 (not "source", "arc")
_RC_RE = re.compile(r"(?i)(?<![a-z])rc(?:[.\-_]?\d+)?(?![a-z])")


def is_release_candidate(name: str) -> bool:
    """A release candidate (``v0.33.0rc3``, ``1.4.0-rc3``) rather than another pre-release
    (``v1.40a4``, ``2.0.0.dev4``): its row reads "(release candidate)", theirs "(pre-release)"."""
    return _RC_RE.search(name) is not None


def is_prerelease(release: Release) -> bool:
    return release.prerelease or looks_like_prerelease(release.tag)


def _matches(tracking: Tracking, name: str) -> bool:
    pattern = tracking.tag_pattern
    return pattern is None or bool(search(pattern, name, subject=f"tag {name!r}"))


def usable_releases(tracking: Tracking, releases: Iterable[Release]) -> list[Release]:
    """Published releases that pass the project's filters, newest first."""
    kept = [
        r
        for r in releases
        if not r.draft
        and _matches(tracking, r.tag)
        and (tracking.prereleases == "include" or not is_prerelease(r))
    ]
    return sorted(kept, key=lambda r: (r.published_at or "", r.tag), reverse=True)


@lru_cache(maxsize=65536)
def _version_key(name: str) -> tuple[int, Version | str]:
    candidate = name.strip().removeprefix("v").removeprefix("V")
    try:
        return (1, Version(candidate))
    except InvalidVersion:
        return (0, name)


@lru_cache(maxsize=65536)  # a night reads each tag's version several times (immutable)
def _release_version(tag: str) -> Version | None:
    candidate = tag.strip()
    for prefix in ("v", "V", "release-", "release/"):
        candidate = candidate.removeprefix(prefix)
    try:
        return Version(candidate)
    except InvalidVersion:
        return None


_NO_VERSION = Version("0")


def by_version(releases: Iterable[Release]) -> list[Release]:
    """Highest version first; tags that are no version come after every versioned one, and only
    among themselves by publication time (the one order such tags have)."""

    return sorted(releases, key=_version_order, reverse=True)


def _version_order(release: Release) -> tuple[int, Version, str]:
    version = _release_version(release.tag)
    if version is None:
        return (0, _NO_VERSION, release.published_at or "")
    return (1, version, "")


def _highest(releases: Iterable[Release]) -> Release | None:
    """``by_version(releases)[0]`` (the first of equals, as the stable sort has it), without
    sorting them all."""
    return max(releases, key=_version_order, default=None)


def observed_at(snapshot: ProjectSnapshot | None) -> str | None:
    """When the snapshot's facts were fetched (its newest provenance time), if it says."""
    stamps = (
        [(when, p.fetched_at) for _f, p in snapshot.provenance if (when := instant(p.fetched_at))]
        if snapshot
        else []
    )
    return max(stamps)[1] if stamps else None


def _upcoming(release: Release, seen: datetime | None) -> bool:
    """Dated after the snapshot was fetched (``seen``): announced, not out yet (GitLab's
    ``upcoming_release``)."""
    if seen is None or not release.published_at:
        return False
    published = instant(release.published_at)
    return published is not None and published > seen


def latest_release(
    tracking: Tracking, releases: Iterable[Release], observed: str | None = None
) -> Release | None:
    """The release a catalog row shows. By default the highest usable release in version
    order (a pre-release when the project includes them and one is highest; not one dated
    after ``observed``, when the snapshot was fetched: an upcoming release is not out). With
    ``release_shown: newest_final``: the one the forge marks latest (GitHub's ``isLatest``,
    ``/releases/latest``), else the highest final release in version order, else (a project
    with only pre-releases, when they are included) the highest pre-release."""
    return _shown(tracking, usable_releases(tracking, releases), observed)


def _shown(tracking: Tracking, usable: list[Release], observed: str | None) -> Release | None:
    """``latest_release`` among releases already filtered and ordered by ``usable_releases``."""
    if tracking.release_shown == "highest_version":
        seen = instant(observed) if observed is not None else None
        return _highest(r for r in usable if not _upcoming(r, seen))
    finals = [r for r in usable if not is_prerelease(r)]
    marked = [r for r in finals if r.is_latest]
    if marked:
        return marked[0]
    return _highest(finals) or _highest(usable)


def newest_final_release(tracking: Tracking, releases: Iterable[Release]) -> Release | None:
    """The newest final release whatever the row shows (the ``newest_final`` reading): what a
    package channel is compared with. None when the project has no final release."""
    final = latest_release(replace(tracking, release_shown="newest_final"), releases)
    return final if final is not None and not is_prerelease(final) else None


def newest_prerelease(
    tracking: Tracking, releases: Iterable[Release], observed: str | None = None
) -> Release | None:
    """The highest usable pre-release above the release the row shows (None when there is none,
    or when the row already shows a pre-release)."""
    usable = usable_releases(tracking, releases)
    return _prerelease_above(usable, _shown(tracking, usable, observed))


def _prerelease_above(usable: list[Release], shown: Release | None) -> Release | None:
    """``newest_prerelease`` among the usable releases, ``shown`` being the one the row shows."""
    if shown is None or is_prerelease(shown):
        return None
    pre = _highest(r for r in usable if is_prerelease(r))
    if pre is None:
        return None
    shown_version, pre_version = _release_version(shown.tag), _release_version(pre.tag)
    if shown_version is not None and pre_version is not None and pre_version < shown_version:
        return None
    return pre


def usable_tags(tracking: Tracking, tags: Iterable[Tag]) -> list[Tag]:
    """Tags that pass the filters, newest first: by commit date when every tag has one (GraphQL),
    else by version order (REST lists tags by name and without dates)."""
    kept = [
        t
        for t in tags
        if _matches(tracking, t.name)
        and (tracking.prereleases == "include" or not looks_like_prerelease(t.name))
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


# The diff and the report ask for one snapshot's row four times: it is worked out once (keyed
# by the snapshot's identity, the snapshot kept beside it so that its id is not reused).
_ROWS: dict[tuple[str, int, str | None], tuple[Any, CurrentVersion]] = {}
_ROWS_MAX = 8192


def current_version(
    project: str, snapshot: ProjectSnapshot | None, license_label: str | None
) -> CurrentVersion:
    """The catalog row: newest usable release, else newest tag, else head commit; never invented.
    Follows the rules stored with the snapshot (its Tracking), not today's sources.yaml."""
    key = (project, id(snapshot), license_label)
    known = _ROWS.get(key)
    if known is not None and known[0] is snapshot:
        return known[1]
    row = _current_version(project, snapshot, license_label)
    if len(_ROWS) >= _ROWS_MAX:
        _ROWS.clear()
    _ROWS[key] = (snapshot, row)
    return row


def forget_rows() -> None:
    """Let go of the rows worked out during an audit (and of the snapshots they hold)."""
    _ROWS.clear()


def _current_version(
    project: str, snapshot: ProjectSnapshot | None, license_label: str | None
) -> CurrentVersion:
    repo = snapshot.repo.full_name if snapshot and snapshot.repo else None
    empty = CurrentVersion(project, repo, None, None, None, False, license_label, None)
    if snapshot is None:
        return empty
    tracking = snapshot.tracking
    observed = observed_at(snapshot) if tracking.release_shown == "highest_version" else None
    usable = usable_releases(tracking, snapshot.releases or ())  # filtered once, for both
    newest = _shown(tracking, usable, observed)
    if tracking.track in ("auto", "releases") and newest is not None:
        pre = _prerelease_above(usable, newest)
        return CurrentVersion(
            project, repo, "release", newest.tag, newest.published_at,
            is_prerelease(newest), license_label, newest.url or None,
            pre.tag if pre is not None else None,
        )  # fmt: skip
    tags = usable_tags(tracking, snapshot.tags or ())
    if tracking.track in ("auto", "tags") and tags:
        tag = tags[0]
        return CurrentVersion(
            project, repo, "tag", tag.name, tag.date,
            looks_like_prerelease(tag.name), license_label, tag.url,
        )  # fmt: skip
    if tracking.track in ("auto", "commits") and snapshot.head is not None:
        head = snapshot.head
        return CurrentVersion(
            project, repo, "commit", head.sha[:12], head.date, False, license_label,
            head.url or None,
        )  # fmt: skip
    return empty


# -- dormancy: which dates say a project is still alive ---------------------------------------


@lru_cache(maxsize=4096)  # a night reads one project's dates a few dozen times (immutable)
def instant(stamp: str | None) -> datetime | None:
    """A stored ISO timestamp as an aware datetime; None when absent or unreadable."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def newest_release_date(snapshot: ProjectSnapshot) -> str | None:
    """The newest date among the snapshot's published releases and dated tags."""
    stamps = [r.published_at for r in snapshot.releases or () if not r.draft and r.published_at]
    stamps += [t.date for t in snapshot.tags or () if t.date]
    dated = [(when, stamp) for stamp in stamps if (when := instant(stamp)) is not None]
    return max(dated)[1] if dated else None


def head_decides_dormancy(snapshot: ProjectSnapshot, now: str, after_days: float) -> bool:
    """True when only the default branch's head can say whether the project is dormant: no
    dated head in hand, and no release or tag newer than ``after_days`` as of ``now``. A
    project that released within the period is lively whatever its commits say, so a source
    asks for the head's date only for the others (one request, conditional, for a project
    with releases; none for a lively one)."""
    if snapshot.head is not None and snapshot.head.date:
        return False
    released, moment = instant(newest_release_date(snapshot)), instant(now)
    if released is None or moment is None:
        return True
    return moment - released >= timedelta(days=after_days)
