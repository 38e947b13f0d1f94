"""The catalog document → what the Explorer page shows: matrix rows, project cards. Pure.

Every string taken from the catalog or the history is untrusted: it is made one safe line
(control, bidi and zero-width characters removed, capped) here and HTML-escaped by the template;
a URL becomes a link only when it is http(s).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crawler.config import SUPPORT_STATUSES
from crawler.export.site.cautions import cautions
from crawler.export.site.site_input import HistoryPoint, SiteChange
from crawler.export.site.text import Part, text, url
from crawler.export.site.timeline import Timeline, build_timeline
from crawler.report import words

MAX_SUMMARY = 400
VERDICT_TEXT = {
    "exact": "the exact license text",
    "match_with_extra_text": "the license text with extra text",
    "modified": "the license text with altered wording",
    "unknown": "a text it does not recognise",
}


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
class RefView:
    kind: str  # release, pre-release, release candidate, tag, commit, none
    css: str
    label: str
    href: str | None
    date: str


@dataclass(frozen=True)
class LicenseView:
    forge: str
    forge_verdict: str
    reading: str
    verdict: str


@dataclass(frozen=True)
class ChangeView:
    project: str
    ident: str | None
    kind: str
    summary: str
    href: str | None


@dataclass(frozen=True)
class Card:
    """Per project: latest ref, license verdicts, cautions, timeline, changes, evidence."""

    ident: str
    name: str
    repository: Part | None
    ref: RefView | None
    license: LicenseView | None
    cautions: tuple[tuple[Part, ...], ...]
    last_checked: str
    current: bool  # checked in this audit
    evidence: tuple[Part, ...]
    timeline: Timeline | None
    changes: tuple[ChangeView, ...]
    notes: str


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


def _records(catalog: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = catalog.get(key)
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _ref_view(ref: Mapping[str, Any] | None) -> RefView | None:
    if not ref:
        return None
    kind = str(ref.get("kind") or "none")
    label = text(ref.get("label") or ref.get("name")) or "none found"
    shown = {"release": "release", "tag": "tag", "commit": "commit"}.get(kind, "none")
    if kind == "release" and ref.get("prerelease"):
        shown = "release candidate" if "release candidate" in label else "pre-release"
    day = text(ref.get("date"))
    return RefView(
        kind=shown,
        css="k-" + shown.replace(" ", "-"),
        label=label,
        href=url(ref.get("url")),
        date="" if day in label else day,  # a commit's label carries its date already
    )


def _license_view(lic: Mapping[str, Any] | None, forge: str) -> LicenseView | None:
    if not lic:
        return None
    verdict = lic.get("verdict")
    reading = text(lic.get("label")) or text(lic.get("expression")) or "no license file read"
    return LicenseView(
        forge=forge,
        forge_verdict=words.forge_verdict(forge, text(lic.get("forge_verdict")) or None),
        reading=reading,
        verdict=VERDICT_TEXT.get(str(verdict), "no root license file was read")
        if verdict is not None
        else "no root license file was read",
    )


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
        ref = _ref_view(record.get("tracked_ref") if isinstance(record, Mapping) else None)
        entries = cells[ident]
        rows.append(
            Row(
                ident=ident,
                name=name,
                ref=ref.label if ref else "",
                changed=name in changed or any(e.changed for cell in entries for e in cell),
                cells=tuple(tuple(cell) for cell in entries),
                stale=text(record.get("last_checked")) if _stale(record, audit_date) else "",
            )
        )

    all_changes = _changes(changes, ids_by_name)
    cards = [_card(record, history, all_changes, audit_date) for record in projects]
    layers = {text(r.get("layer")) for r in integrations} - {""}
    statuses = list(SUPPORT_STATUSES) + sorted(
        {text(r.get("status")) for r in integrations} - set(SUPPORT_STATUSES) - {""}
    )
    return Page(
        audit_id=text(audit.get("id")) if isinstance(audit, Mapping) else "",
        platforms=tuple(platforms),
        layers=tuple(sorted(layers)),
        statuses=tuple(statuses),
        rows=tuple(rows),
        cards=tuple(cards),
        changes=all_changes,
        integration_count=sum(len(c) for row in cells.values() for c in row),
    )


def _stale(record: Mapping[str, Any], audit_date: str = "") -> bool:
    """The project's last audit could not read it (the catalog's marker), or (a catalog
    without the marker) its facts are older than the audit."""
    if record.get("stale") is True:
        return True
    last_checked = text(record.get("last_checked"))
    return bool(last_checked and audit_date and last_checked < audit_date)


def _short_url(value: str) -> str:
    """``https://github.com/o/r`` → ``github.com/o/r``: the link text, not the target."""
    for scheme in ("https://", "http://"):
        if value.lower().startswith(scheme):
            return value[len(scheme) :]
    return value


def _broken_links(links: Any) -> dict[str, str]:
    """href → ``broken link, last seen working 2026-11-02`` for the record's links the link
    checks found broken or unreachable (the catalog's ``links`` block)."""
    marks = {}
    for item in links if isinstance(links, list) else ():
        if not isinstance(item, Mapping) or item.get("status") not in ("broken", "unreachable"):
            continue
        href = url(item.get("url"))
        if href is not None:
            seen = text(item.get("last_ok"))
            when = f"last seen working {seen}" if seen else "never seen working"
            marks[href] = f"{text(item.get('status'))} link, {when}"
    return marks


def _card(
    record: Mapping[str, Any],
    history: Mapping[str, Sequence[HistoryPoint]],
    changes: Sequence[ChangeView],
    audit_date: str,
) -> Card:
    name = text(record.get("name")) or text(record.get("id"))
    repo = record.get("repository") if isinstance(record.get("repository"), Mapping) else None
    forge = (text(repo.get("forge")) if repo else "") or "The forge"
    repo_url = repo.get("url") if repo else None
    lic = record.get("license") if isinstance(record.get("license"), Mapping) else None
    ref = record.get("tracked_ref") if isinstance(record.get("tracked_ref"), Mapping) else None
    ref_view = _ref_view(ref)
    shown = {url(repo_url), ref_view.href if ref_view else None}  # linked there already
    broken = _broken_links(record.get("links"))
    evidence = []
    for item in record.get("evidence") or []:
        href = url(item.get("url")) if isinstance(item, Mapping) else None
        if href is not None and href not in shown:
            about = text(item.get("about")) or "source"
            evidence.append(Part(about, href, broken.get(href, "")))
            shown.add(href)
    last_checked = text(record.get("last_checked"))
    return Card(
        ident=text(record.get("id")),
        name=name,
        repository=Part(_short_url(text(repo_url)), url(repo_url)) if repo_url else None,
        ref=ref_view,
        license=_license_view(lic, forge),
        cautions=cautions(lic, forge),
        last_checked=last_checked,
        current=not _stale(record, audit_date),
        evidence=tuple(evidence),
        timeline=build_timeline(history.get(str(record.get("name")), ())),
        changes=tuple(c for c in changes if c.project == name),
        notes=text(record.get("notes"), 600),
    )
