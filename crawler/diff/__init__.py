"""Baseline + current states → changes, flags and the catalog rows. Pure functions, no I/O.

Only projects observed in this audit can produce changes: a project whose fetch failed keeps
its last good state, so an outage never reads as a removal or a license change. One module
per facet: releases, licenses, repository, packages, pages.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from crawler.diff.health import dormant_change, superseded_change
from crawler.diff.licenses import license_changes, noassertion_flag
from crawler.diff.packages import channel_flags, package_changes
from crawler.diff.pages import diff_page
from crawler.diff.releases import no_release_flag, version_changes
from crawler.diff.repository import repo_changes
from crawler.diff.source_labels import Names, SourceNames
from crawler.model import Change, ChangeKind, CurrentVersion, FetchError, Flag, ProjectSnapshot
from crawler.versions import current_version, forget_rows

log = logging.getLogger(__name__)

__all__ = [
    "DiffRules",
    "Findings",
    "Names",
    "SourceNames",
    "Tracked",
    "diff_audit",
    "forget_memos",
    "removed_projects",
]


def forget_memos() -> None:
    """The diff and the report work out each snapshot's catalog row once per audit (memoised by
    identity): let go of them when the audit is over, so that a long-running scheduler does not
    keep one night's snapshots until the next. (A license analysis needs no memo: it is decoded
    once, with its snapshot.)"""
    forget_rows()


@dataclass(frozen=True)
class Findings:
    changes: tuple[Change, ...]
    flags: tuple[Flag, ...]
    projects: tuple[CurrentVersion, ...]
    problems: tuple[FetchError, ...] = ()  # projects the diff itself could not compare


@dataclass(frozen=True)
class Tracked:
    """A project as the audit was told to track it."""

    name: str
    location: str | None = None  # the repository path it is fetched by, or its homepage
    line: int = 0  # the sources.yaml line of the key naming that repository (0: unknown)


@dataclass(frozen=True)
class DiffRules:
    now: datetime  # the audit's time: a grace period is measured from it
    names: Names  # how prose names each source
    channel_grace: timedelta = timedelta(days=7)
    dormant_after: timedelta = timedelta(days=365)
    baseline_at: datetime | None = None  # when the previous states were observed (dormancy)


def project_changes(
    tracked: Tracked,
    before: ProjectSnapshot | None,
    after: ProjectSnapshot,
    rules: DiffRules,
) -> list[Change]:
    name = tracked.name
    changes = repo_changes(name, tracked.location, before, after, tracked.line)
    dormant = dormant_change(
        name, before, after, rules.now, rules.baseline_at if before else None, rules.dormant_after
    )
    changes += [dormant] if dormant is not None else []
    superseded = superseded_change(name, before, after)
    changes += [superseded] if superseded is not None else []
    if before is None:
        return changes
    changes += version_changes(name, before, after)
    changes += license_changes(name, before, after, rules.names)
    changes += package_changes(name, before, after, rules.names)
    old_pages = {p.name: p for p in before.pages}
    for page in after.pages:
        if page.name in old_pages:
            changes += diff_page(name, old_pages[page.name], page)
    return changes


def project_flags(
    name: str, before: ProjectSnapshot | None, after: ProjectSnapshot, rules: DiffRules
) -> list[Flag]:
    flags = [
        flag
        for flag in (
            noassertion_flag(name, before, after, rules.names),
            no_release_flag(name, before, after, rules.names),
        )
        if flag is not None
    ]
    current = channel_flags(name, after, rules.names, now=rules.now, grace=rules.channel_grace)
    if current and before is not None:
        earlier = channel_flags(name, before, rules.names, now=rules.now, grace=rules.channel_grace)
        seen = {(f.details["package"], f.details["problem"]) for f in earlier}
        current = [
            replace(f, new=(f.details["package"], f.details["problem"]) not in seen)
            for f in current
        ]
    return flags + current


def diff_audit(
    tracked: Sequence[Tracked],
    listed: Sequence[str],
    baseline: Mapping[str, ProjectSnapshot],
    baseline_projects: Sequence[str] | None,
    current: Mapping[str, ProjectSnapshot],
    observed: set[str],
    rules: DiffRules,
    *,
    removals: bool = True,
) -> Findings:
    """Compare this audit with the last good state of every project.

    ``tracked`` are the projects this audit reports on, ``listed`` every project the
    configuration lists (only those missing from it are removed); ``current`` holds each
    project's state after this audit (observed, or carried forward); ``observed`` names the
    projects actually checked this time: only they can change. A project the diff cannot
    compare is a problem for that project; the others are still reported. An audit that
    compares its projects a batch at a time asks for the removals once (``removals``,
    ``removed_projects``)."""
    changes: list[Change] = []
    flags: list[Flag] = []
    rows: list[CurrentVersion] = []
    problems: list[FetchError] = []
    known = set(baseline_projects or ())
    for project in tracked:
        name = project.name
        before = baseline.get(name)
        after = current.get(name)
        try:
            found, raised = _compare(project, before, after, name in observed, rules)
            rows.append(current_version(name, after, None))
        except Exception as exc:  # one project's surprise must not end the audit
            log.warning("diff of %s failed", name, exc_info=True)
            problems.append(FetchError(name, "diff", "", f"could not compare: {exc!r}"[:300]))
            rows.append(current_version(name, None, None))
            continue
        # added when first read, not when first tried: an unreached project is not news
        if name in observed and after is not None and (name not in known or before is None):
            changes.append(
                Change(
                    name,
                    ChangeKind.PROJECT_ADDED,
                    after=project.location,
                    evidence_url=after.repo.url if after and after.repo else None,
                )
            )
        changes += found
        flags += raised
    if removals:
        changes += removed_projects(listed, baseline_projects)
    return Findings(tuple(changes), tuple(flags), tuple(rows), tuple(problems))


def removed_projects(
    listed: Sequence[str], baseline_projects: Sequence[str] | None
) -> list[Change]:
    """The projects the last audit tracked that the configuration no longer lists."""
    gone = set(baseline_projects or ()) - set(listed)
    return [Change(name, ChangeKind.PROJECT_REMOVED, before=name) for name in sorted(gone)]


def _compare(
    project: Tracked,
    before: ProjectSnapshot | None,
    after: ProjectSnapshot | None,
    observed: bool,
    rules: DiffRules,
) -> tuple[list[Change], list[Flag]]:
    if after is None:
        return [], []
    changes = project_changes(project, before, after, rules) if observed else []
    return changes, project_flags(project.name, before, after, rules)
