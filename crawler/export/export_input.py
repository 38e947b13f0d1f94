"""What the export needs, as plain typed records. Nothing here reads the store or the network.

The caller (``crawler export``) fills these from the stored audit; the builders in this package
read nothing else. Dates are ``datetime.date`` (the catalog is dated by day); every string that
came from upstream (names, tags, cells, license text) is untrusted and escaped where rendered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from crawler.analysis.licenses import LicenseAnalysis
from crawler.config import PageIntegration, TableIntegrations, TableSpec
from crawler.model import LicenseVerdict

RefKind = Literal["release", "tag", "commit", "none"]
# what the upstream's health suggests for the curated maturity (never written into it)
MaturitySuggestion = Literal["archived", "superseded", "dormant"]
NOASSERTION = "NOASSERTION"
_VERDICTS: dict[str, LicenseVerdict] = {
    "exact": "exact",
    "match_with_extra_text": "match_with_extra_text",
    "modified": "modified",
    "unknown": "unknown",
}


@dataclass(frozen=True)
class TrackedRef:
    """What the catalog row shows: the newest usable release, else a tag, else a commit.

    ``kind="none"``: the forge was read and has none of them. ``name`` is the tag, or the commit
    SHA (full or short); ``prerelease`` is the forge's flag or the version string's own marker."""

    kind: RefKind
    name: str | None = None
    date: date | None = None
    prerelease: bool = False
    url: str | None = None


@dataclass(frozen=True)
class ExtraText:
    """The first line of the text that differs from the license template, where it is."""

    path: str
    line: int  # 1-based
    text: str
    url: str | None = None
    altered: bool = False  # True: template wording changed; False: text added


@dataclass(frozen=True)
class LicenseFileEntry:
    """A license file: the root one, or one found elsewhere in the tree inventory."""

    path: str
    url: str | None = None
    spdx_ids: tuple[str, ...] = ()  # detected in its text; empty when not read or not known


@dataclass(frozen=True)
class LicenseFacts:
    """The forge's verdict beside our own reading of the root license file.

    ``detected_spdx_ids``: licenses whose text was found in the root file (file order);
    ``referenced_spdx_ids``: licenses only named there (e.g. "this part is under MIT").
    ``bundled``: separately licensed files in the tree (not the root file)."""

    forge_verdict: str | None  # SPDX id, NOASSERTION, or None when the forge gave none
    detected_spdx_ids: tuple[str, ...] = ()
    referenced_spdx_ids: tuple[str, ...] = ()
    expression: str | None = None
    verdict: LicenseVerdict | None = None  # None: no root license file was read
    root_file: LicenseFileEntry | None = None
    extra_text: ExtraText | None = None
    bundled: tuple[LicenseFileEntry, ...] = ()


@dataclass(frozen=True)
class TableMapping:
    """How a watched table's rows become integration records (from its ``TableSpec``)."""

    integrations: TableIntegrations
    status_map: Mapping[str, str | None] = field(default_factory=dict)  # None: no record
    platform_map: Mapping[str, str | None] = field(default_factory=dict)
    combine: str = "refuse"  # TableSpec.combine

    @staticmethod
    def from_spec(spec: TableSpec) -> TableMapping | None:
        if spec.integrations is None:
            return None
        return TableMapping(
            spec.integrations, dict(spec.status_map), dict(spec.platform_map), spec.combine
        )


@dataclass(frozen=True)
class WatchedTable:
    """One extracted support table: columns, rows (cells normalised), identity columns."""

    name: str
    columns: tuple[str, ...]
    key_columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    mapping: TableMapping | None = None


@dataclass(frozen=True)
class Pin:
    name: str
    value: str | None  # None: the pattern matched nothing on the page


@dataclass(frozen=True)
class WatchedPage:
    """A page a project watches, as last observed (``observed_on``)."""

    name: str
    url: str
    observed_on: date
    tables: tuple[WatchedTable, ...] = ()
    pins: tuple[Pin, ...] = ()
    integration: PageIntegration | None = None
    stale: bool = False  # the exported audit could not read it: its facts are of observed_on


@dataclass(frozen=True)
class EvidenceLink:
    """A URL backing a project fact: ``about`` says which (release, license file, ...)."""

    about: str
    url: str


@dataclass(frozen=True)
class LinkStatus:
    """A record's link as the link checks last saw it (crawler.diff.links outcomes)."""

    url: str
    status: str  # ok | moved | broken | unreachable | failing | error
    moved_to: str | None
    last_ok: date | None  # the last day it was seen working
    checked: date | None


@dataclass(frozen=True)
class ProjectInput:
    """One catalog item: its last good state, and whether this audit checked it.

    A project not checked in the audit (error, deferred) carries its last good values and
    ``last_checked`` is the date they were observed; one never observed has ``ref=None``. A
    riding item (``part_of``) carries the facts of the item it ships with, as of that item's
    state; a not-trackable one has none, and says why."""

    name: str
    order: int  # position in sources.yaml: rows are printed in this order
    repository_url: str | None
    forge: str | None  # "GitHub", "Gitee", "GitLab", ...: the label in "no GitHub release"
    ref: TrackedRef | None
    license: LicenseFacts | None
    last_checked: date | None
    checked_in_audit: bool
    evidence: tuple[EvidenceLink, ...] = ()
    pages: tuple[WatchedPage, ...] = ()
    links: tuple[LinkStatus, ...] = ()  # empty when its links were never checked
    maturity_suggestion: MaturitySuggestion | None = None
    layer: str | None = None  # where the catalog page lists it (sources.yaml's layer)
    snapshot: bool = False  # a row of the page's release and license snapshot table
    part_of: str | None = None  # riding: the name of the item whose facts it shows
    not_trackable: str | None = None  # why no source follows it (then it has no facts)
    homepage: str | None = None
    # its facts (its latest successful check, ``last_checked``) are older than the setting
    # allows (``catalog_stale_after_days``); not checked by the exported audit alone is not stale
    stale: bool = False


@dataclass(frozen=True)
class ExportInput:
    """One audit, ready to export."""

    audit_id: int
    audit_date: date
    projects: tuple[ProjectInput, ...]


def stale_on(audit_date: date, last_checked: date | None, after_days: float) -> bool:
    """Facts of ``last_checked`` are stale on ``audit_date`` when older than ``after_days``."""
    return last_checked is not None and (audit_date - last_checked).days > after_days


def license_facts_from_analysis(
    analysis: LicenseAnalysis | None,
    *,
    forge_verdict: str | None,
    root_path: str | None,
    root_url: str | None,
    bundled: tuple[LicenseFileEntry, ...] = (),
) -> LicenseFacts:
    """``LicenseFacts`` from our analysis of the root license file (None: no file read).

    Only full license texts count as detected; a license merely named (a "reference" match,
    e.g. NIXL's note that one directory is MIT) is kept apart, so the base is not misread."""
    if analysis is None or root_path is None:
        return LicenseFacts(forge_verdict=forge_verdict, bundled=bundled)
    texts = tuple(dict.fromkeys(m.spdx_id for m in analysis.matches if m.verdict != "reference"))
    named = tuple(dict.fromkeys(m.spdx_id for m in analysis.matches if m.spdx_id not in texts))
    if not analysis.matches:  # an older analysis without match details: trust its ids
        texts = analysis.spdx_ids
    spans = [(s, False) for s in analysis.extra_text] + [(s, True) for s in analysis.altered_text]
    extra = None
    if spans:
        span, altered = min(spans, key=lambda item: item[0].start_line)
        lines = [line.strip() for line in span.text.splitlines()]
        offset, first = next(((i, t) for i, t in enumerate(lines) if t), (0, ""))
        extra = ExtraText(root_path, span.start_line + offset, first, root_url, altered)
    verdict = _VERDICTS.get(analysis.verdict, "unknown")
    return LicenseFacts(
        forge_verdict=forge_verdict,
        detected_spdx_ids=texts,
        referenced_spdx_ids=named,
        expression=analysis.expression,
        verdict=verdict,
        root_file=LicenseFileEntry(root_path, root_url, texts),
        extra_text=extra,
        bundled=bundled,
    )
