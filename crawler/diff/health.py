"""Upstream health: a repository nobody commits to or releases from any more, or whose own
description says it moved or was superseded. Pure.

Judged from the snapshot's own dates: the default branch's head commit and the newest release
or tag. Every forge source reads the head's date whenever the releases alone cannot say the
project is lively (``crawler.versions.head_decides_dormancy``); a snapshot without a dated
head commit is not judged: its releases alone cannot say that nobody commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from crawler.analysis.successor import Successor, successor_in
from crawler.model import Change, ChangeKind, ProjectSnapshot
from crawler.untrusted import visible
from crawler.versions import instant as _when
from crawler.versions import newest_release_date as newest_release_date  # re-exported

MAX_QUOTED = 300  # characters of a description a finding quotes


@dataclass(frozen=True)
class Dormancy:
    last_commit: str  # ISO timestamp of the default branch's head commit
    last_release: str | None  # the newest release's or tag's date, None when it has none
    days: int  # since the later of the two

    def details(self) -> dict[str, str | int | None]:
        return {"last_commit": self.last_commit, "last_release": self.last_release,
                "days": self.days}  # fmt: skip


def dormancy(
    snapshot: ProjectSnapshot | None, now: datetime | None, after: timedelta
) -> Dormancy | None:
    """The snapshot's dormancy as of ``now``, or None (lively, or not judged)."""
    if snapshot is None or now is None or snapshot.head is None:
        return None
    commit = _when(snapshot.head.date)
    if commit is None or now - commit < after:
        return None
    release = newest_release_date(snapshot)
    released = _when(release)
    if released is not None and now - released < after:
        return None
    latest = max(commit, released) if released is not None else commit
    return Dormancy(snapshot.head.date or "", release, (now - latest).days)


def dormant_change(
    name: str,
    before: ProjectSnapshot | None,
    after: ProjectSnapshot,
    now: datetime,
    baseline_at: datetime | None,
    after_days: timedelta,
) -> Change | None:
    """``upstream_dormant`` the night a project becomes dormant: dormant now, and not dormant in
    its previous state as of the previous audit (then it was reported already; a previous state
    of unknown date is judged as of tonight)."""
    found = dormancy(after, now, after_days)
    if found is None or dormancy(before, baseline_at or now, after_days) is not None:
        return None
    return Change(
        project=name,
        kind=ChangeKind.UPSTREAM_DORMANT,
        after=found.last_commit,
        evidence_url=after.repo.url if after.repo else after.head.url if after.head else None,
        details={**found.details(), "repo": after.repo.full_name if after.repo else None},
    )


def successor_of(snapshot: ProjectSnapshot | None) -> Successor | None:
    """The successor the repository's own description names, else the one the top of its
    README names (read only for an archived or dormant repository: ``wants_readme``)."""
    return said_by(snapshot)[0]


def said_by(snapshot: ProjectSnapshot | None) -> tuple[Successor | None, str]:
    """(the successor, where it was said: ``description`` or ``readme``)."""
    repo = snapshot.repo if snapshot is not None else None
    if snapshot is None or repo is None:
        return None, ""
    found = successor_in(repo.description, repo.url, repo.full_name, repo.forge)
    if found is not None:
        return found, "description"
    if snapshot.readme is not None and snapshot.readme.text:
        found = successor_in(
            snapshot.readme.text, repo.url, repo.full_name, repo.forge, repository_only=True
        )
        if found is not None:
            return found, "readme"
    return None, ""


def _line_saying(text: str, found: Successor) -> str:
    """The block of the README's top that names the successor (what a finding quotes)."""
    return next(
        (line for line in text.splitlines() if found.target in line and found.phrase in
         " ".join(line.lower().split())),
        text,
    )  # fmt: skip


def wants_readme(snapshot: ProjectSnapshot, now: datetime, after: timedelta) -> bool:
    """Whether the fetch stage reads the repository's README for a successor: the repository
    is archived or dormant (a notice is likely, and such repositories are few) and its
    description names none (the description is read first, at no cost). Asked of every
    project every night (twice with a token: the GraphQL rounds, the reader): the dates are
    compared before the description is searched (most projects are lively)."""
    repo = snapshot.repo
    if repo is None or not (repo.archived or dormancy(snapshot, now, after) is not None):
        return False
    return successor_in(repo.description, repo.url, repo.full_name, repo.forge) is None


def superseded_change(
    name: str, before: ProjectSnapshot | None, after: ProjectSnapshot
) -> Change | None:
    """``upstream_superseded`` the night the repository's description, or the top of its
    README, first names a successor (or names another one): "moved to X", "superseded by X"…
    (crawler.analysis.successor)."""
    found, where = said_by(after)
    if found is None or after.repo is None:
        return None
    earlier = successor_of(before)
    if earlier is not None and (earlier.kind, earlier.target) == (found.kind, found.target):
        return None  # reported already: pending until settled
    repo = after.repo
    details: dict[str, str | bool | None] = {
        "repo": repo.full_name,
        "phrase": found.phrase,
        "successor": found.target,
        "successor_url": found.url,
        "stopped": found.stopped,
        "description": " ".join(visible(repo.description or "").split())[:MAX_QUOTED],
    }
    if where == "readme" and after.readme is not None:
        details["said_in"] = "readme"
        details["readme_url"] = after.readme.url
        details["readme"] = _line_saying(after.readme.text, found)[:MAX_QUOTED]
    return Change(
        project=name,
        kind=ChangeKind.UPSTREAM_SUPERSEDED,
        before=repo.full_name,
        after=found.target,
        evidence_url=after.readme.url if where == "readme" and after.readme else repo.url,
        details=details,
    )
