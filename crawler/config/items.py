"""How each catalog item is followed, across the whole file: tracked by a source, riding on
the item it ships with (``part_of``), or not trackable (with its reason). The rules that span
items (``item_problems``), the counts ``crawler check`` and the README give (``coverage``), and
the warnings of ``crawler check`` (``item_warnings``). Pure: configuration in, facts out."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from crawler.config.problems import Problem, suggestion
from crawler.config.projects import ProjectSpec

Standing = Literal["tracked", "riding", "not trackable", "no source"]


def standing(spec: ProjectSpec) -> Standing:
    """``tracked``: a source reads it; ``riding``: it shows the facts of the item it ships with;
    ``not trackable``: it says why not; ``no source``: a homepage and nothing else (no reason)."""
    if spec.part_of is not None:
        return "riding"
    if spec.not_trackable is not None:
        return "not trackable"
    return "tracked" if spec.fetched else "no source"


def item_problems(projects: Sequence[ProjectSpec], unread: Collection[str] = ()) -> list[Problem]:
    """The problems of ``part_of`` across items; a name in ``unread`` (an entry that has a
    problem of its own) is neither known nor unknown: nothing is said of a reference to it."""
    by_name = {p.name: p for p in projects}
    problems = []
    for spec in projects:
        if spec.part_of is None or spec.part_of in unread:
            continue
        where = f"project {spec.name!r}: part_of {spec.part_of!r}"
        line = spec.line_of("part_of")
        host = by_name.get(spec.part_of)
        if host is None:
            hint = suggestion(spec.part_of, list(by_name))
            if not hint.startswith(" (did"):
                hint = ": add that item or fix the name"
            problems.append(Problem(line, f"{where} names no item of this file{hint}"))
        elif host.part_of is not None:
            problems.append(Problem(line,
                f"{where} is itself part of {host.part_of!r} (line {host.line}): name "
                f"{host.part_of!r} directly; an item rides on a tracked item, not on a chain"
            ))  # fmt: skip
        elif not host.fetched:
            problems.append(Problem(line,
                f"{where} (line {host.line}) is followed by no source, so there are no facts "
                "to show: say 'not_trackable: <why>' instead"
            ))  # fmt: skip
    return problems


@dataclass(frozen=True)
class Coverage:
    """What a catalog covers: items by standing, evidence pages, platforms the mappings name."""

    tracked: int
    riding: int
    not_trackable: int
    no_source: int
    evidence_pages: int  # pages with at least one integration mapping
    watched_pages: int  # every page watched (for records, or for its changes alone)
    platforms: tuple[str, ...]  # catalog platform names the mappings give records for
    snapshot_rows: int

    @property
    def items(self) -> int:
        return self.tracked + self.riding + self.not_trackable + self.no_source


def _mapped_platforms(spec: ProjectSpec) -> set[str]:
    """Platforms the page mappings name: platform_map values, literal platforms and a page's
    own record (a platform read from a column without a map is known only once read)."""
    found: set[str] = set()
    for page in spec.pages:
        for table in page.tables:
            mapping = table.integrations
            if mapping is None:
                continue
            found |= {name for name in table.platform_map.values() if name is not None}
            if mapping.platform is not None and mapping.platform.value is not None:
                found.add(mapping.platform.value)
        if page.integration is not None:
            found.add(page.integration.platform)
    return found


def coverage(projects: Sequence[ProjectSpec]) -> Coverage:
    counts = {"tracked": 0, "riding": 0, "not trackable": 0, "no source": 0}
    platforms: set[str] = set()
    evidence = watched = 0
    for spec in projects:
        counts[standing(spec)] += 1
        platforms |= _mapped_platforms(spec)
        watched += len(spec.pages)
        for page in spec.pages:
            mapped = sum(t.integrations is not None for t in page.tables)
            evidence += mapped > 0 or page.integration is not None
    return Coverage(
        tracked=counts["tracked"],
        riding=counts["riding"],
        not_trackable=counts["not trackable"],
        no_source=counts["no source"],
        evidence_pages=evidence,
        watched_pages=watched,
        platforms=tuple(sorted(platforms, key=str.casefold)),
        snapshot_rows=sum(spec.snapshot for spec in projects),
    )


def item_warnings(projects: Sequence[ProjectSpec], path: str) -> list[str]:
    """What ``crawler check`` warns about (the file is still valid): an item with neither a
    source nor a reason, and an evidence page (or one of its tables) that gives no record
    without saying why (``no_records: WHY`` on the page or the table)."""
    warnings = []
    for spec in projects:
        where = f"{path}:{spec.line}: project {spec.name!r}"
        if standing(spec) == "no source":
            warnings.append(
                f"{where}: no source and no reason: add 'not_trackable: <why no source can "
                "follow it>', or a source ('repo', 'pypi', a page…)"
            )
        for page in spec.pages:
            if page.no_records is not None:
                continue
            unmapped = [
                t.name for t in page.tables if t.integrations is None and t.no_records is None
            ]
            mapped = [t for t in page.tables if t.integrations is not None]
            if page.integration is None and not mapped:
                if unmapped or not page.tables:
                    warnings.append(
                        f"{where}: page {page.name!r} has no mappings: its facts become no "
                        "integration record; add 'integrations' (with status_map/platform_map) "
                        "to a table, or 'integration:' to the page, or say why it is watched "
                        "for its changes alone ('no_records: <why>')"
                    )
                continue
            for table in unmapped:
                warnings.append(
                    f"{where}: page {page.name!r}, table {table!r} has no 'integrations' "
                    "mapping: its rows become no integration record (or say why: "
                    "'no_records: <why>' on the table)"
                )
    return warnings
