"""Release, tag and commit facets: what is new on the forge, and the no-tagged-release flag.
Pure; the rules come from the Tracking stored with the current snapshot."""

from __future__ import annotations

from crawler.diff.names import Names, label_of
from crawler.model import Change, ChangeKind, Flag, FlagKind, ProjectSnapshot
from crawler.versions import (
    current_version,
    is_prerelease,
    latest_release,
    usable_releases,
    usable_tags,
)


def _release_changes(name: str, before: ProjectSnapshot, after: ProjectSnapshot) -> list[Change]:
    if before.releases is None or after.releases is None:
        return []
    tracking = after.tracking
    changes = []
    old = usable_releases(tracking, before.releases)
    new = usable_releases(tracking, after.releases)
    old_tags = {r.tag for r in old}
    shown = latest_release(tracking, before.releases)  # what the row showed, not the last published
    previous = shown.tag if shown is not None else None
    for release in reversed(new):
        if release.tag in old_tags:
            continue
        pre = is_prerelease(release)
        label = " (pre-release)" if pre else ""
        changes.append(
            Change(
                project=name,
                kind=ChangeKind.NEW_PRERELEASE if pre else ChangeKind.NEW_RELEASE,
                summary=f"{release.tag}{label} published {release.published_at or 'undated'}",
                before=previous,
                after=release.tag,
                evidence_url=release.url or None,
                details={"name": release.name, "published_at": release.published_at},
            )
        )
    # Only releases inside the window we fetched can be called removed: an old release that
    # merely fell off the first page has not gone anywhere.
    listed = {r.tag for r in after.releases}
    dates = [r.published_at for r in after.releases if r.published_at]
    oldest_seen = min(dates) if dates else None
    for release in old:
        if release.tag in listed:
            continue
        if oldest_seen is not None and (release.published_at or "") < oldest_seen:
            continue
        changes.append(
            Change(
                project=name,
                kind=ChangeKind.RELEASE_REMOVED,
                summary=f"{release.tag} is no longer listed as a release",
                before=release.tag,
                after=None,
                evidence_url=release.url or (after.repo.url if after.repo else None),
            )
        )
    return changes


def version_changes(name: str, before: ProjectSnapshot, after: ProjectSnapshot) -> list[Change]:
    changes = _release_changes(name, before, after)
    tracking = after.tracking
    source = current_version(name, after, None).version_source
    if source == "tag" and before.tags is not None and after.tags is not None:
        known = {t.name for t in before.tags}
        previous = usable_tags(tracking, before.tags)
        for tag in reversed(usable_tags(tracking, after.tags)):
            if tag.name not in known:
                changes.append(
                    Change(
                        project=name,
                        kind=ChangeKind.NEW_TAG,
                        summary=f"tag {tag.name} ({tag.sha[:12]}) {tag.date or ''}".strip(),
                        before=previous[0].name if previous else None,
                        after=tag.name,
                        evidence_url=tag.url,
                    )
                )
    if source == "commit" and before.head and after.head and before.head.sha != after.head.sha:
        changes.append(
            Change(
                project=name,
                kind=ChangeKind.NEW_COMMIT,
                summary=f"default branch moved to {after.head.sha[:12]}"
                + (f" ({after.head.date})" if after.head.date else ""),
                before=before.head.sha,
                after=after.head.sha,
                evidence_url=after.head.url or None,
            )
        )
    return changes


def no_release_flag(
    name: str, before: ProjectSnapshot | None, after: ProjectSnapshot, names: Names
) -> Flag | None:
    """A repository followed by tag or commit: say so, never invent a version."""
    if after.repo is None or after.tracking.track == "releases":
        return None
    version = current_version(name, after, None)
    if version.version_source == "release":
        return None
    forge = label_of(names, after.repo.forge)
    when = f" ({version.published_at})" if version.published_at else ""  # REST tags: undated
    # releases never asked for (track: tags or commits) were not seen to be absent
    asked = after.releases is not None
    configured = f" (track: {after.tracking.track}; releases not checked)"
    if version.version_source == "tag":
        detail = f"tracked by tag {version.version}{when}{configured}"
        if asked:
            detail = f"no {forge} release; tracked by tag {version.version}{when}"
    elif version.version_source == "commit":
        detail = f"tracked by commit {version.version}{when}{configured}"
        if asked:
            detail = f"no {forge} release or tag; tracked by commit {version.version}{when}"
    else:
        detail = f"no {forge} release, tag or commit found"
    was = current_version(name, before, None).version_source if before else None
    return Flag(
        project=name,
        kind=FlagKind.NO_TAGGED_RELEASE,
        detail=detail,
        new=before is None or was == "release",
        evidence_url=version.url,
        details={"tracked_by": version.version_source, "ref": version.version},
    )
