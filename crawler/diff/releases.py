"""Release, tag and commit facets: what is new on the forge, and the no-tagged-release flag.
Pure; the rules come from the Tracking stored with the current snapshot."""

from __future__ import annotations

from crawler.diff.source_labels import Names
from crawler.model import Change, ChangeKind, Flag, FlagKind, ProjectSnapshot
from crawler.versions import (
    current_version,
    is_prerelease,
    latest_release,
    observed_at,
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
    previous: list[str | None] = []  # what the row showed, worked out at a new release only
    for release in reversed(new):
        if release.tag in old_tags:
            continue
        if not previous:  # the row's release, not the last published
            shown = latest_release(tracking, before.releases, observed_at(before))
            previous.append(shown.tag if shown is not None else None)
        pre = is_prerelease(release)
        changes.append(
            Change(
                project=name,
                kind=ChangeKind.NEW_PRERELEASE if pre else ChangeKind.NEW_RELEASE,
                before=previous[0],
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
                        before=previous[0].name if previous else None,
                        after=tag.name,
                        evidence_url=tag.url,
                        details={"sha": tag.sha, "date": tag.date},
                    )
                )
    if source == "commit" and before.head and after.head and before.head.sha != after.head.sha:
        changes.append(
            Change(
                project=name,
                kind=ChangeKind.NEW_COMMIT,
                before=before.head.sha,
                after=after.head.sha,
                evidence_url=after.head.url or None,
                details={"date": after.head.date},
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
    was = current_version(name, before, None).version_source if before else None
    return Flag(
        project=name,
        kind=FlagKind.NO_TAGGED_RELEASE,
        new=before is None or was == "release",
        evidence_url=version.url,
        details={
            "tracked_by": version.version_source,
            "ref": version.version,
            "date": version.published_at,  # REST tags: undated
            "forge": after.repo.forge,
            # releases never asked for (track: tags or commits) were not seen to be absent
            "releases_checked": after.releases is not None,
            "track": after.tracking.track,
        },
    )
