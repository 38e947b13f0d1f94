"""Baseline + current states → changes, flags and the catalog rows. Pure functions, no I/O.

Only projects fetched successfully in this audit can produce changes: a project whose fetch
failed keeps its last good state, so an outage never reads as a removal or a license change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crawler.analysis.licenses import LicenseAnalysis, noassertion_explanation, word_diff
from crawler.config import ProjectSpec
from crawler.model import (
    Change,
    ChangeKind,
    CurrentVersion,
    Flag,
    FlagKind,
    ProjectSnapshot,
)
from crawler.page_diff import diff_page
from crawler.versions import current_version, is_prerelease, usable_releases, usable_tags

NOASSERTION = "NOASSERTION"


@dataclass(frozen=True)
class Findings:
    changes: tuple[Change, ...]
    flags: tuple[Flag, ...]
    projects: tuple[CurrentVersion, ...]


def _analysis(snapshot: ProjectSnapshot | None) -> LicenseAnalysis | None:
    if snapshot is None or snapshot.license_file is None or not snapshot.license_file.analysis:
        return None
    return LicenseAnalysis.from_dict(snapshot.license_file.analysis)


def github_spdx(snapshot: ProjectSnapshot | None) -> str | None:
    if snapshot is None or snapshot.github_license is None:
        return None
    return snapshot.github_license.spdx_id


def detected_license(snapshot: ProjectSnapshot | None) -> str | None:
    """Our own reading of the root license text: an expression, else the ids found."""
    analysis = _analysis(snapshot)
    if analysis is None:
        return None
    if analysis.expression:
        return analysis.expression
    return " AND ".join(analysis.spdx_ids) or None


def license_reading(snapshot: ProjectSnapshot | None) -> dict[str, Any] | None:
    """Our reading of the root license file, for the report: ids, verdict, the text that
    differs from the template (verbatim, with lines) and why GitHub may disagree."""
    analysis = _analysis(snapshot)
    if snapshot is None or snapshot.license_file is None or analysis is None:
        return None
    github = github_spdx(snapshot)
    ours = detected_license(snapshot)
    differs = (github or NOASSERTION) != (ours or NOASSERTION) or analysis.verdict != "exact"
    why = None
    if differs:
        why = noassertion_explanation(analysis)
        if github not in (None, NOASSERTION) and analysis.verdict in (
            "match_with_extra_text",
            "modified",
        ):
            why = f"GitHub reads {github} and ignores the rest: {why}"
    return {
        "path": snapshot.license_file.path,
        "url": snapshot.license_file.url or None,
        "blob_sha": snapshot.license_file.blob_sha,
        "spdx_ids": list(analysis.spdx_ids),
        "expression": analysis.expression,
        "verdict": analysis.verdict,
        "coverage": round(analysis.coverage, 3),
        "copyright_holders": list(analysis.copyright_holders[:20]),
        "extra_text": [span.__dict__ for span in analysis.extra_text[:10]],
        "altered_text": [span.__dict__ for span in analysis.altered_text[:10]],
        "notes": list(analysis.notes[:10]),
        "differs_from_github": differs,
        "why": why,
    }


def license_label(snapshot: ProjectSnapshot | None) -> str | None:
    """The catalog's license column: GitHub's verdict, corrected by our reading when needed."""
    if snapshot is None:
        return None
    github = github_spdx(snapshot)
    ours = detected_license(snapshot)
    analysis = _analysis(snapshot)
    extra = analysis is not None and analysis.verdict in ("match_with_extra_text", "modified")
    if github and github != NOASSERTION:
        return f"{github} (file has extra text)" if extra else github
    if ours:
        suffix = " + extra text" if extra else ""
        return f"NOASSERTION per GitHub; text reads {ours}{suffix}"
    if github == NOASSERTION:
        return NOASSERTION
    if snapshot.license_file is None and snapshot.github_license is not None:
        return "none found"
    return None


def _version_text(spec: ProjectSpec, snapshot: ProjectSnapshot | None) -> str | None:
    version = current_version(spec, snapshot, None)
    if version.version is None:
        return None
    return f"{version.version} ({version.version_source})"


def _release_changes(
    spec: ProjectSpec, before: ProjectSnapshot, after: ProjectSnapshot
) -> list[Change]:
    if before.releases is None or after.releases is None:
        return []
    changes = []
    old = usable_releases(spec, before.releases)
    new = usable_releases(spec, after.releases)
    old_tags = {r.tag for r in old}
    new_tags = {r.tag for r in new}
    previous = old[0].tag if old else None
    for release in reversed(new):
        if release.tag in old_tags:
            continue
        pre = is_prerelease(release)
        label = " (pre-release)" if pre else ""
        changes.append(
            Change(
                project=spec.name,
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
    dates = [r.published_at for r in after.releases if r.published_at]
    oldest_seen = min(dates) if dates else None
    for release in old:
        if release.tag in new_tags or any(r.tag == release.tag for r in after.releases):
            continue
        if oldest_seen is not None and (release.published_at or "") < oldest_seen:
            continue
        changes.append(
            Change(
                project=spec.name,
                kind=ChangeKind.RELEASE_REMOVED,
                summary=f"{release.tag} is no longer listed as a release",
                before=release.tag,
                after=None,
                evidence_url=f"{after.repo.url}/releases" if after.repo else release.url,
            )
        )
    return changes


def _version_changes(
    spec: ProjectSpec, before: ProjectSnapshot, after: ProjectSnapshot
) -> list[Change]:
    changes = _release_changes(spec, before, after)
    source = current_version(spec, after, None).version_source
    if source == "tag" and before.tags is not None and after.tags is not None:
        known = {t.name for t in before.tags}
        previous = usable_tags(spec, before.tags)
        for tag in reversed(usable_tags(spec, after.tags)):
            if tag.name not in known:
                changes.append(
                    Change(
                        project=spec.name,
                        kind=ChangeKind.NEW_TAG,
                        summary=f"tag {tag.name} ({tag.sha[:12]}) {tag.date or ''}".strip(),
                        before=previous[0].name if previous else None,
                        after=tag.name,
                        evidence_url=(
                            f"{after.repo.url}/releases/tag/{tag.name}" if after.repo else None
                        ),
                    )
                )
    if source == "commit" and before.head and after.head and before.head.sha != after.head.sha:
        changes.append(
            Change(
                project=spec.name,
                kind=ChangeKind.NEW_COMMIT,
                summary=f"default branch moved to {after.head.sha[:12]} ({after.head.date})",
                before=before.head.sha,
                after=after.head.sha,
                evidence_url=after.head.url or None,
            )
        )
    return changes


def _license_changes(name: str, before: ProjectSnapshot, after: ProjectSnapshot) -> list[Change]:
    changes = []
    evidence = (
        after.license_file.url if after.license_file else (after.repo.url if after.repo else None)
    )
    if before.github_license is not None and after.github_license is not None:
        old_ids = (github_spdx(before), detected_license(before))
        new_ids = (github_spdx(after), detected_license(after))
        if old_ids != new_ids:
            changes.append(
                Change(
                    project=name,
                    kind=ChangeKind.LICENSE_CHANGED,
                    summary=f"license {license_label(before)} → {license_label(after)}",
                    before={"github": old_ids[0], "detected": old_ids[1]},
                    after={"github": new_ids[0], "detected": new_ids[1]},
                    evidence_url=evidence,
                )
            )
        elif (
            before.license_file is not None
            and after.license_file is not None
            and before.license_file.blob_sha != after.license_file.blob_sha
        ):
            diff = word_diff(before.license_file.text or "", after.license_file.text or "")
            changes.append(
                Change(
                    project=name,
                    kind=ChangeKind.LICENSE_TEXT_CHANGED,
                    summary=(
                        f"{after.license_file.path} text changed; license still "
                        f"{license_label(after)}"
                    ),
                    before=before.license_file.blob_sha,
                    after=after.license_file.blob_sha,
                    evidence_url=evidence,
                    details={"path": after.license_file.path, "word_diff": diff},
                )
            )
    if before.license_inventory is not None and after.license_inventory is not None:
        old = {e.path: e.blob_sha for e in before.license_inventory}
        new = {e.path: e.blob_sha for e in after.license_inventory}
        added = sorted(set(new) - set(old))
        removed = sorted(set(old) - set(new))
        root = after.license_file.path if after.license_file else None
        # the root file's own edits are license_text_changed / license_changed
        changed = sorted(p for p in set(old) & set(new) if old[p] != new[p] and p != root)
        if added or removed or changed:
            parts = [
                f"{label} {', '.join(paths)}"
                for label, paths in (("added", added), ("removed", removed), ("changed", changed))
                if paths
            ]
            changes.append(
                Change(
                    project=name,
                    kind=ChangeKind.LICENSE_FILES_CHANGED,
                    summary="license files " + "; ".join(parts),
                    before=sorted(old),
                    after=sorted(new),
                    evidence_url=after.repo.url if after.repo else None,
                    details={"added": added, "removed": removed, "changed": changed},
                )
            )
    return changes


def _repo_changes(
    spec: ProjectSpec, before: ProjectSnapshot | None, after: ProjectSnapshot
) -> list[Change]:
    if after.repo is None:
        return []
    changes = []
    old_name = before.repo.full_name if before and before.repo else spec.repo
    moved = old_name is not None and old_name.lower() != after.repo.full_name.lower()
    replaced = before is not None and before.repo is not None and before.repo.id != after.repo.id
    if moved or replaced:
        what = f"{old_name} → {after.repo.full_name}" if moved else after.repo.full_name
        note = " (a different repository id: deleted and re-created?)" if replaced else ""
        changes.append(
            Change(
                project=spec.name,
                kind=ChangeKind.REPO_MOVED,
                summary=f"repository moved {what}{note}; update 'repo' in sources.yaml",
                before=old_name,
                after=after.repo.full_name,
                evidence_url=after.repo.url,
                details={
                    "before_id": before.repo.id if before and before.repo else None,
                    "after_id": after.repo.id,
                },
            )
        )
    if after.repo.archived and not (before and before.repo and before.repo.archived):
        changes.append(
            Change(
                project=spec.name,
                kind=ChangeKind.REPO_ARCHIVED,
                summary=f"{after.repo.full_name} is archived (read-only upstream)",
                before=False,
                after=True,
                evidence_url=after.repo.url,
            )
        )
    return changes


def project_changes(
    spec: ProjectSpec, before: ProjectSnapshot | None, after: ProjectSnapshot
) -> list[Change]:
    changes = _repo_changes(spec, before, after)
    if before is None:
        return changes
    changes += _version_changes(spec, before, after)
    changes += _license_changes(spec.name, before, after)
    old_pages = {p.name: p for p in before.pages}
    for page in after.pages:
        if page.name in old_pages:
            changes += diff_page(spec.name, old_pages[page.name], page)
    return changes


def project_flags(
    spec: ProjectSpec, before: ProjectSnapshot | None, after: ProjectSnapshot
) -> list[Flag]:
    flags = []
    if github_spdx(after) == NOASSERTION:
        analysis = _analysis(after)
        detail = "GitHub reports NOASSERTION"
        if analysis is not None:
            detail += f"; {noassertion_explanation(analysis)}"
        details: dict[str, Any] = {
            "github": after.github_license.__dict__ if after.github_license else None
        }
        if analysis is not None:
            details["analysis"] = {
                "spdx_ids": list(analysis.spdx_ids),
                "verdict": analysis.verdict,
                "extra_text": [s.__dict__ for s in analysis.extra_text],
            }
        flags.append(
            Flag(
                project=spec.name,
                kind=FlagKind.LICENSE_NOASSERTION,
                detail=detail,
                new=github_spdx(before) != NOASSERTION,
                evidence_url=after.license_file.url if after.license_file else None,
                details=details,
            )
        )
    version = current_version(spec, after, None)
    on_github = spec.repo is not None
    if on_github and version.version_source != "release" and spec.track != "releases":
        if version.version_source == "tag":
            detail = f"no GitHub release; tracked by tag {version.version} ({version.published_at})"
        elif version.version_source == "commit":
            detail = (
                f"no GitHub release or tag; tracked by commit {version.version} "
                f"({version.published_at})"
            )
        else:
            detail = "no GitHub release, tag or commit found"
        was = current_version(spec, before, None).version_source if before else None
        flags.append(
            Flag(
                project=spec.name,
                kind=FlagKind.NO_TAGGED_RELEASE,
                detail=detail,
                new=before is None or was == "release",
                evidence_url=version.url,
            )
        )
    return flags


def diff_audit(
    specs: Sequence[ProjectSpec],
    baseline: Mapping[str, ProjectSnapshot],
    baseline_projects: Sequence[str] | None,
    current: Mapping[str, ProjectSnapshot],
    fetched: set[str],
) -> Findings:
    """Compare this audit with the last good state of every project.

    ``current`` holds each project's state after this audit (fetched, or carried forward);
    ``fetched`` names the projects actually observed this time: only they can change."""
    changes: list[Change] = []
    flags: list[Flag] = []
    rows: list[CurrentVersion] = []
    known = set(baseline_projects or ())
    for spec in specs:
        before = baseline.get(spec.name)
        after = current.get(spec.name)
        if spec.name not in known:
            changes.append(
                Change(
                    spec.name,
                    ChangeKind.PROJECT_ADDED,
                    f"now tracking {spec.repo or spec.homepage}",
                    after=spec.repo or spec.homepage,
                    evidence_url=_repo_url(spec),
                )
            )
        if after is not None and spec.name in fetched:
            changes += project_changes(spec, before, after)
        if after is not None:
            flags += project_flags(spec, before, after)
        rows.append(current_version(spec, after, license_label(after)))
    names = {s.name for s in specs}
    for name in sorted(known - names):
        changes.append(
            Change(
                name, ChangeKind.PROJECT_REMOVED, "no longer listed in sources.yaml", before=name
            )
        )
    return Findings(tuple(changes), tuple(flags), tuple(rows))


def _repo_url(spec: ProjectSpec) -> str | None:
    return f"https://github.com/{spec.repo}" if spec.repo else spec.homepage
