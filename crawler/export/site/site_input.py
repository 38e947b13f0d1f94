"""What the Compatibility Explorer is built from, as plain typed records.

The caller (``crawler export --site``) fills these from the store: the catalog document that
``build_catalog`` made, each project's dated release history and the last audit's changes.
Every string in them that came from upstream is untrusted; the site escapes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

HistoryKind = Literal["release", "tag", "commit"]


@dataclass(frozen=True)
class HistoryPoint:
    """One version a project published, as the store saw it (a release, a tag or a commit)."""

    date: date
    kind: HistoryKind
    name: str
    prerelease: bool = False


@dataclass(frozen=True)
class SiteChange:
    """One change the last audit found (``kind`` as in the report: ``new_release``, ...)."""

    project: str  # the project's name, as in the catalog
    kind: str
    summary: str
    evidence_url: str | None = None


@dataclass(frozen=True)
class ChangesSince:
    """What the changes are counted from: the audit the previous export showed (``exported``),
    or, on a first export, the audit before the exported one."""

    audit_id: int
    day: date
    exported: bool = True


@dataclass(frozen=True)
class SiteInput:
    """The catalog (a validated ``catalog.json`` document), per project name its history
    (oldest first), the changes since the previous export (``since``), and when the data was
    checked.

    The page shows a banner when the data is older than ``stale_after_days``: computed by the
    browser at view time, and also written into the HTML when already stale at build time."""

    catalog: Mapping[str, Any]
    checked_on: date
    history: Mapping[str, Sequence[HistoryPoint]] = field(default_factory=dict)
    changes: Sequence[SiteChange] = ()
    stale_after_days: int = 14
    since: ChangesSince | None = None  # None: the changes of the exported audit, undated
    errors: Sequence[tuple[str, str, str]] = ()  # the exported audit's: (project, url, message)
