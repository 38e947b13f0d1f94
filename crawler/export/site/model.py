"""The catalog document → what the Explorer page shows: the platform × project matrix and the
project cards (``cards``). Pure.

Every string taken from the catalog or the history is untrusted: it is made one safe line
(control, bidi and zero-width characters removed, capped) here and HTML-escaped by the template;
a URL becomes a link only when it is http(s).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crawler.config import SUPPORT_STATUSES
from crawler.export.site.cards import (
    Card,
    CardGroup,
    ChangeView,
    Counts,
    by_layer,
    card,
    is_stale,
    layers_in_order,
    ref_view,
)
from crawler.export.site.site_input import HistoryPoint, SiteChange
from crawler.export.site.text import text, url
from crawler.report import words

MAX_SUMMARY = 400
@dataclass(frozen=True)
class Evidence:
    href: str | None
    date: str
    title: str
    stale: bool = False  # the exported audit could not read the page: as of ``date``


@dataclass(frozen=True)
class Entry:
    """One integration record in a matrix cell."""

    status: str
    layer: str
    version_range: str
    pins: tuple[str, ...]
    via: str
    evidence: tuple[Evidence, ...]
    changed: bool

    @property
    def stale(self) -> str:
        """The date of its facts when the exported audit could not read them, else ""."""
        return next((e.date for e in self.evidence if e.stale), "")


@dataclass(frozen=True)
class Row:
    ident: str
    name: str
    ref: str
    changed: bool
    cells: tuple[tuple[Entry, ...], ...]  # one per platform column
    stale: str = ""  # the project's facts are of this date: its last audit could not read it


@dataclass(frozen=True)
class Platform:
    ident: str
    name: str


@dataclass(frozen=True)
class Page:
    audit_id: str
    platforms: tuple[Platform, ...]
    layers: tuple[str, ...]
    statuses: tuple[str, ...]
    rows: tuple[Row, ...]
    cards: tuple[Card, ...]
    changes: tuple[ChangeView, ...]
    integration_count: int
    groups: tuple[CardGroup, ...]
    counts: Counts
    errors: tuple[str, ...] = ()  # the audit's errors, one line per cause


def _records(catalog: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = catalog.get(key)
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _evidence(items: Any, fallback_date: str) -> tuple[Evidence, ...]:
    result = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        wording = text(item.get("wording"))
        title = f"the page says “{wording}”" if wording else ""
        result.append(
            Evidence(
                url(item.get("url")),
                text(item.get("date")) or fallback_date,
                title,
                item.get("stale") is True,
            )
        )
    return tuple(result)


def _pins(items: Any) -> tuple[str, ...]:
    pins = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and text(item.get("name")):
            value = text(item.get("value"))
            pins.append(
                f"{text(item.get('name'))} {value}"
                if value
                else f"{text(item.get('name'))}: not found on the page"
            )
    return tuple(pins)


def _changes(changes: Sequence[SiteChange], ids: Mapping[str, str]) -> tuple[ChangeView, ...]:
    return tuple(
        ChangeView(
            project=text(change.project),
            ident=ids.get(change.project),
            kind=words.kind_name(text(change.kind)),
            summary=text(change.summary, MAX_SUMMARY),
            href=url(change.evidence_url),
        )
        for change in changes
    )


def build_page(
    catalog: Mapping[str, Any],
    history: Mapping[str, Sequence[HistoryPoint]],
    changes: Sequence[SiteChange],
    errors: Sequence[tuple[str, str, str]] = (),
) -> Page:
    projects = _records(catalog, "projects")
    names = {text(p.get("id")): text(p.get("name")) or text(p.get("id")) for p in projects}
    ids_by_name = {text(p.get("name")): text(p.get("id")) for p in projects}
    platforms = [
        Platform(text(p.get("id")), text(p.get("name")) or text(p.get("id")))
        for p in _records(catalog, "platforms")
    ]
    column = {p.ident: i for i, p in enumerate(platforms)}
    changed = {text(c.project) for c in changes}
    integrations = _records(catalog, "integrations")
    audit = catalog.get("audit") if isinstance(catalog.get("audit"), Mapping) else {}
    audit_date = text(audit.get("date")) if isinstance(audit, Mapping) else ""

    cells: dict[str, list[list[Entry]]] = {}
    for record in integrations:
        project, platform = text(record.get("project")), text(record.get("platform"))
        if platform not in column:
            continue  # a validated catalog has none; a broken reference has nowhere to go
        via_id = text(record.get("via"))
        via = names.get(via_id, via_id)
        status = text(record.get("status"))
        evidence = _evidence(record.get("evidence"), audit_date)
        entry = Entry(
            status=status,
            layer=text(record.get("layer")),
            version_range=text(record.get("version_range")),
            pins=_pins(record.get("pins")),
            via=via,
            evidence=evidence,
            changed=bool(via) and via in changed,
        )
        row = cells.setdefault(project, [[] for _ in platforms])
        row[column[platform]].append(entry)

    project_by_id = {text(p.get("id")): p for p in projects}
    row_ids = [text(p.get("id")) for p in projects if text(p.get("id")) in cells]
    row_ids += [ident for ident in cells if ident not in project_by_id]  # unknown, kept last
    rows = []
    for ident in row_ids:
        record = project_by_id.get(ident, {})
        name = names.get(ident, ident)
        ref = ref_view(record.get("tracked_ref") if isinstance(record, Mapping) else None)
        entries = cells[ident]
        rows.append(
            Row(
                ident=ident,
                name=name,
                ref=ref.label if ref else "",
                changed=name in changed or any(e.changed for cell in entries for e in cell),
                cells=tuple(tuple(cell) for cell in entries),
                stale=text(record.get("last_checked")) if is_stale(record, audit_date) else "",
            )
        )

    all_changes = _changes(changes, ids_by_name)
    groups = words.error_groups(
        (text(project), text(where), text(message, MAX_SUMMARY))
        for project, where, message in errors
    )
    states = words.read_state(groups)
    cards = [card(record, history, all_changes, audit_date, names, states) for record in projects]
    record_layers = [text(r.get("layer")) for r in integrations]
    statuses = list(SUPPORT_STATUSES) + sorted(
        {text(r.get("status")) for r in integrations} - set(SUPPORT_STATUSES) - {""}
    )
    return Page(
        audit_id=text(audit.get("id")) if isinstance(audit, Mapping) else "",
        platforms=tuple(platforms),
        layers=layers_in_order(record_layers + [c.layer for c in cards]),
        statuses=tuple(statuses),
        rows=tuple(rows),
        cards=tuple(cards),
        changes=all_changes,
        integration_count=sum(len(c) for row in cells.values() for c in row),
        groups=by_layer(cards),
        errors=tuple(words.error_group_line(g, words.NAMED_IN_A_LINE) for g in groups),
        counts=Counts(
            items=len(cards),
            riding=sum(c.part_of is not None for c in cards),
            not_trackable=sum(bool(c.not_trackable) for c in cards),
        ),
    )
