"""Changes pending until the catalog takes them. Pure: changes in, pending items out.

A nightly baseline moves every night, so a change is in one report only; a maintainer who reads
on Thursday would miss Monday's release. The changes a catalog is refreshed from (a release, a
license reading, a support table or pin) therefore stay *pending* from the audit that first saw
them until the curated catalog holds them (``merged``) or a person acknowledges them
(``crawler ack``, like nvchecker's ``nvtake``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from crawler.model import Change, ChangeKind

RELEASE_KINDS = frozenset({ChangeKind.NEW_RELEASE, ChangeKind.NEW_PRERELEASE, ChangeKind.NEW_TAG})
LICENSE_KINDS = frozenset(
    {
        ChangeKind.LICENSE_CHANGED,
        ChangeKind.LICENSE_TEXT_CHANGED,
        ChangeKind.LICENSE_FILES_CHANGED,
    }
)
SUPPORT_KINDS = frozenset({ChangeKind.TABLE_CHANGED, ChangeKind.PIN_CHANGED})
# until the link answers where it is cited (fixed), or a person acknowledges it
LINK_KINDS = frozenset({ChangeKind.LINK_MOVED, ChangeKind.LINK_BROKEN})
# until the catalog's maturity says it (dormant, archived, superseded…), or a person
# acknowledges it; a successor no longer named by the upstream closes too (fixed)
HEALTH_KINDS = frozenset({ChangeKind.UPSTREAM_DORMANT, ChangeKind.UPSTREAM_SUPERSEDED})
# a commit-tracked project moves every night: its head is shown, never pending
PENDING_KINDS = RELEASE_KINDS | LICENSE_KINDS | SUPPORT_KINDS | LINK_KINDS | HEALTH_KINDS
SETTLED_MATURITY = frozenset({"dormant", "archived", "superseded", "deprecated"})
MAX_VALUE = 500


@dataclass(frozen=True, slots=True)  # slots: one a project after a first audit
class PendingItem:
    """One change the catalog has not taken: what, where it shows, and since when."""

    id: int
    project: str
    kind: str
    value: str
    summary: str
    evidence_url: str | None
    first_audit_id: int
    first_seen_at: datetime
    before: str | None = None  # what it replaced (pending_before), when known


def pending_before(change: Change) -> str | None:
    """What the change replaced, as one string: the release or tag the row showed, the SPDX
    id before, a pin's value before; None when there is none (a first release, an edited
    text or table, a link: its value says it all)."""
    if change.kind in LINK_KINDS or not isinstance(change.before, str) or not change.before:
        return None
    return change.before[:MAX_VALUE]


def pending_value(change: Change, summary: str) -> str:
    """What the crawl says, as one comparable string: the new tag, the new SPDX id, or (for an
    edited text or table) the change's ``summary`` (as crawler.report.words says it)."""
    if change.kind in LINK_KINDS:  # one item per link (and, when moved, per new place)
        moved = f" → {change.after}" if change.kind is ChangeKind.LINK_MOVED else ""
        return f"{change.evidence_url}{moved}"[:MAX_VALUE]
    value = change.after if isinstance(change.after, str) and change.after else summary
    return value[:MAX_VALUE]


def pending_changes(changes: Iterable[Change]) -> list[Change]:
    return [c for c in changes if c.kind in PENDING_KINDS]


def newest_first(items: Sequence[PendingItem]) -> list[PendingItem]:
    return sorted(items, key=lambda i: (i.first_audit_id, i.id), reverse=True)


def _curated_projects(curated: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    projects = curated.get("projects")
    if not isinstance(projects, list):
        return {}
    return {
        str(p["name"]): p
        for p in projects
        if isinstance(p, Mapping) and isinstance(p.get("name"), str)
    }


def _curated_audit(curated: Mapping[str, Any]) -> int:
    audit = curated.get("audit")
    number = audit.get("id") if isinstance(audit, Mapping) else None
    return number if isinstance(number, int) else 0


def _ref_name(record: Mapping[str, Any] | None) -> str | None:
    ref = record.get("tracked_ref") if record else None
    name = ref.get("name") if isinstance(ref, Mapping) else None
    return name if isinstance(name, str) else None


def _license_ids(record: Mapping[str, Any] | None) -> set[str]:
    facts = record.get("license") if record else None
    if not isinstance(facts, Mapping):
        return set()
    ids = {str(i) for i in facts.get("detected_spdx_ids") or () if isinstance(i, str)}
    for key in ("expression", "forge_verdict"):
        if isinstance(facts.get(key), str):
            ids.add(facts[key])
    return ids


def taken_by_catalog(items: Sequence[PendingItem], curated: Mapping[str, Any]) -> list[int]:
    """The ids of the items the curated catalog already holds.

    A release is taken when the catalog's tracked ref is that release or one first seen after
    it; a new SPDX id when the catalog's license names it; an edited license text or file list
    and a support table or pin when the catalog was refreshed from that audit or a later one
    (``crawler export --into`` writes the audit it merged)."""
    projects = _curated_projects(curated)
    refreshed_from = _curated_audit(curated)
    taken: list[int] = []
    releases: dict[str, list[PendingItem]] = {}
    for item in items:
        if item.kind in RELEASE_KINDS:
            releases.setdefault(item.project, []).append(item)
    for project, seen in releases.items():
        ref = _ref_name(projects.get(project))
        ordered = sorted(seen, key=lambda i: (i.first_audit_id, i.id))
        index = next((n for n, i in enumerate(ordered) if ref is not None and i.value == ref), None)
        if index is not None:
            taken += [i.id for i in ordered[: index + 1]]
    for item in items:
        record = projects.get(item.project)
        if item.kind in HEALTH_KINDS:
            if record is not None and record.get("maturity") in SETTLED_MATURITY:
                taken.append(item.id)
            continue
        if item.kind == ChangeKind.LICENSE_CHANGED:
            held = item.value in _license_ids(record)
        else:  # an edited text, file list, table or pin: held once merged from that audit on
            held = record is not None and refreshed_from >= item.first_audit_id
        if held and item.kind in LICENSE_KINDS | SUPPORT_KINDS:
            taken.append(item.id)
    return sorted(set(taken))


def successors_withdrawn(items: Sequence[PendingItem], unsaid: Set[str]) -> list[int]:
    """The ids of the open ``upstream_superseded`` items of projects checked tonight whose
    repository no longer names a successor (sources.yaml follows the successor now, or the
    upstream took the words back)."""
    return [
        item.id
        for item in items
        if item.kind == ChangeKind.UPSTREAM_SUPERSEDED and item.project in unsaid
    ]


def fixed_links(items: Sequence[PendingItem], bad_links: set[str]) -> list[int]:
    """The ids of the open link findings whose link now answers where it is cited, or is no
    longer cited at all (sources.yaml or the catalog was corrected)."""
    return [
        item.id
        for item in items
        if item.kind in LINK_KINDS and (item.evidence_url or "") not in bad_links
    ]
