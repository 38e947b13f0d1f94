"""The catalog's project records → the Explorer's project cards, grouped by layer. Pure.

A card shows an item's latest ref, the forge's license verdict beside the crawler's reading,
the cautions, a release timeline, the last audit's changes and the evidence; a riding item's
card shows its host's facts and links to the host's card; a not-trackable one says why.
Every string is made one safe line here (``text``) and HTML-escaped by the template.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crawler.config import LAYERS
from crawler.export.site.cautions import cautions
from crawler.export.site.site_input import HistoryPoint
from crawler.export.site.text import Part, text, url
from crawler.export.site.timeline import Timeline, build_timeline
from crawler.report import words


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
    layer: str = ""  # where the catalog page lists it
    part_of: Part | None = None  # riding: the item whose facts it shows (a link to its card)
    not_trackable: str = ""  # why no source follows it
    homepage: Part | None = None
    not_read: str = ""  # its last audit did not read it: tried and failed, or not attempted


@dataclass(frozen=True)
class CardGroup:
    """The cards of one layer, in catalog order (``layer`` "": items placed in no layer)."""

    layer: str
    cards: tuple[Card, ...]


@dataclass(frozen=True)
class Counts:
    """How the catalog's items are followed, for the page's opening lines."""

    items: int
    riding: int
    not_trackable: int

    @property
    def tracked(self) -> int:
        return self.items - self.riding - self.not_trackable


def ref_view(ref: Mapping[str, Any] | None) -> RefView | None:
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
        verdict=words.verdict_words(None if verdict is None else str(verdict)),
    )


def is_stale(record: Mapping[str, Any], audit_date: str = "") -> bool:
    """The catalog's marker: the project's facts are older than the export allows
    (``catalog_stale_after_days``). Facts merely older than the audit are not stale: an
    ``audit --only`` checks a few projects, and the others' facts are still current."""
    return record.get("stale") is True


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


def card(
    record: Mapping[str, Any],
    history: Mapping[str, Sequence[HistoryPoint]],
    changes: Sequence[ChangeView],
    audit_date: str,
    names: Mapping[str, str],
    read_state: Mapping[str, str] | None = None,
) -> Card:
    name = text(record.get("name")) or text(record.get("id"))
    repo = record.get("repository") if isinstance(record.get("repository"), Mapping) else None
    forge = (text(repo.get("forge")) if repo else "") or "The forge"
    repo_url = repo.get("url") if repo else None
    lic = record.get("license") if isinstance(record.get("license"), Mapping) else None
    ref = record.get("tracked_ref") if isinstance(record.get("tracked_ref"), Mapping) else None
    latest = ref_view(ref)
    shown = {url(repo_url), latest.href if latest else None}  # linked there already
    broken = _broken_links(record.get("links"))
    evidence = []
    for item in record.get("evidence") or []:
        href = url(item.get("url")) if isinstance(item, Mapping) else None
        if href is not None and href not in shown:
            about = text(item.get("about")) or "source"
            evidence.append(Part(about, href, broken.get(href, "")))
            shown.add(href)
    # absent: checked by the catalog's own audit (a record carries the day only when older)
    last_checked = text(record.get("last_checked")) if "last_checked" in record else audit_date
    host = text(record.get("part_of"))
    homepage = url(record.get("homepage"))
    return Card(
        ident=text(record.get("id")),
        name=name,
        repository=Part(_short_url(text(repo_url)), url(repo_url)) if repo_url else None,
        ref=latest,
        license=_license_view(lic, forge),
        cautions=cautions(lic, forge),
        last_checked=last_checked,
        current=not is_stale(record, audit_date),
        evidence=tuple(evidence),
        timeline=build_timeline(history.get(str(record.get("name")), ())),
        changes=tuple(c for c in changes if c.project == name),
        notes=text(record.get("notes"), 600),
        layer=text(record.get("layer")),
        part_of=Part(names.get(host, host), f"#p-{host}") if host else None,
        not_trackable=text(record.get("not_trackable"), 300),
        homepage=Part(_short_url(homepage), homepage) if homepage else None,
        not_read=words.not_read_mark((read_state or {}).get(str(record.get("name")), "")),
    )
def layers_in_order(found: Sequence[str]) -> tuple[str, ...]:
    """The layers named, in the catalog's order (the page's sections), then any other."""
    named = set(found) - {""}
    return tuple(layer for layer in LAYERS if layer in named) + tuple(
        sorted(named - set(LAYERS))
    )


def by_layer(cards: Sequence[Card]) -> tuple[CardGroup, ...]:
    """The cards by layer, layers in the catalog's order, items of no layer last."""
    order = (*layers_in_order([c.layer for c in cards]), "")
    grouped = {layer: tuple(c for c in cards if c.layer == layer) for layer in order}
    return tuple(CardGroup(layer, found) for layer, found in grouped.items() if found)
