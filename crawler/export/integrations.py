"""Support-table rows and page pins → integration and platform records. Pure.

A row becomes one record through its table's mapping (``TableSpec.integrations``). Every value
a map does not cover is collected as a problem naming the project, page, table, row and value;
the export stops on any of them rather than guess a status.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from crawler.analysis.placeholders import is_placeholder
from crawler.config import SUPPORT_STATUSES, FieldSource, TableIntegrations
from crawler.config.common import catalog_id
from crawler.export.export_input import ProjectInput, TableMapping, WatchedPage, WatchedTable
from crawler.untrusted import shown_url

MAX_VALUE = 200  # a version cell or wording kept in the catalog
MAX_KEY_ID = 80  # a row's part of an integration id
_NO_VALUE = {"", "-", "–", "—", "n/a", "none"}
_HTTP_RE = re.compile(r"^https?://[^\s/?#]+", re.IGNORECASE)
CellReader = Callable[[FieldSource], "str | None"]


class ExportError(Exception):
    """The audit cannot be exported as configured; ``problems`` says what to fix, one each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


slug = catalog_id  # a stable id fragment (the configuration compares names by it too)


def is_http_url(url: str | None) -> bool:
    return bool(url) and _HTTP_RE.match(url or "") is not None


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _lookup(mapping: Mapping[str, str], value: str) -> str | None:
    if value in mapping:
        return mapping[value]
    folded = {_fold(k): v for k, v in mapping.items()}
    return folded.get(_fold(value))


# a link inside a cell renders as "text <href>": a map names the text a reader sees
_LINK_TARGET_RE = re.compile(r"\s*<[^\s<>]+>")


def _lookup_map(mapping: Mapping[str, str | None], value: str) -> tuple[bool, str | None]:
    """(whether the map names ``value``, what it maps it to: None when the wording gives no
    record), comparing case and spacing aside, then by the visible text alone (link targets
    aside: a row's own link, such as DeepSparkInference's ✅ to its model folder)."""
    folded = {_fold(k): v for k, v in mapping.items()}
    for candidate in dict.fromkeys((value, _LINK_TARGET_RE.sub("", value).strip())):
        if candidate in mapping:
            return True, mapping[candidate]
        if _fold(candidate) in folded:
            return True, folded[_fold(candidate)]
    return False, None


def _readings(
    spec: TableIntegrations, cell: CellReader, row: tuple[str, ...], columns: Mapping[str, int]
) -> list[tuple[str, str | None, str | None, str | None]]:
    """What one row says: (platform wording, status wording or None, literal status or None,
    the platform column read or None): one reading, or one per platform column."""
    if spec.platform_columns:
        return [(name, row[columns[_fold(name)]], None, name) for name in spec.platform_columns]
    assert spec.platform is not None and spec.status is not None
    wording = cell(spec.status) or "" if spec.status.column is not None else None
    return [(cell(spec.platform) or "", wording, spec.status.value, None)]


def _short(key_id: str) -> str:
    """A row's part of a record id, at most ``MAX_KEY_ID`` characters: a key cell can be a
    sentence (a list item), and an id is at most 200 (the schema); a longer one keeps its start
    and a digest of the whole, so it stays unique and stable."""
    if len(key_id) <= MAX_KEY_ID:
        return key_id
    digest = hashlib.sha256(key_id.encode()).hexdigest()[:10]
    return f"{key_id[: MAX_KEY_ID - 11].rstrip('-')}-{digest}"


def _cap(value: str | None) -> str | None:
    if value is None:
        return None
    value = " ".join(value.split())
    return value if len(value) <= MAX_VALUE else value[: MAX_VALUE - 1] + "…"


@dataclass
class IntegrationBuilder:
    """Collects integration and platform records, and every problem, across all projects."""

    project_ids: Mapping[str, str]  # project name → id
    # the catalog's date: an entry's own date is written only when older (it says something)
    audit_date: date | None = None
    integrations: dict[str, dict[str, Any]] = field(default_factory=dict)
    platforms: dict[str, str] = field(default_factory=dict)  # id → name
    problems: list[str] = field(default_factory=list)

    def _project_id(self, name: str, where: str) -> str | None:
        found = _lookup(self.project_ids, name)
        if found is None:
            self.problems.append(
                f"{where}: project {name!r} is not in the catalog: add it to sources.yaml or "
                "fix the integration's 'project'"
            )
        return found

    def _platform_id(self, name: str, where: str) -> str | None:
        if not name.strip():
            self.problems.append(f"{where}: empty platform: fix the table's integration mapping")
            return None
        ident = slug(name)
        known = self.platforms.setdefault(ident, name)
        if known != name:
            self.problems.append(
                f"{where}: platform {name!r} and {known!r} share the id {ident!r}: "
                "spell them the same in platform_map"
            )
        return ident

    def _add(self, record: dict[str, Any], where: str) -> None:
        if record["id"] in self.integrations:
            self.problems.append(
                f"{where}: two rows give the integration id {record['id']!r}: make the "
                "table's key columns identify a row"
            )
            return
        self.integrations[record["id"]] = record

    def add_project(self, project: ProjectInput) -> None:
        owner = self.project_ids[project.name]
        for page in project.pages:
            where = f"project {project.name!r}, page {page.name!r}"
            if not is_http_url(page.url):
                self.problems.append(f"{where}: page URL {shown_url(page.url)!r} is not http(s)")
                continue
            for table in page.tables:
                if table.mapping is not None:
                    self._add_table(project, owner, page, table)
            if page.integration is not None:
                self._add_page(project, owner, page, where)

    def _evidence(
        self, page: WatchedPage, table: str | None, row: dict[str, str] | None,
        wording: str | None, status: str,
    ) -> dict[str, Any]:  # fmt: skip
        # Quiet nights: nothing here changes unless the page does. The entry is marked as the
        # crawler's (``crawled``: replaced on merge); it is dated only when its facts are
        # older than the catalog's own date, or stale (a page not read): an unchanged night
        # changes the catalog's date alone, not every record's.
        older = self.audit_date is None or page.observed_on < self.audit_date or page.stale
        entry: dict[str, Any] = {
            "url": shown_url(page.url),  # as the catalog may publish it, whatever was stored
            "crawled": True,
            "page": page.name,
            "table": table,
            "row": row,
            "wording": _cap(wording),
            "status": status,
        }
        if older:
            entry["date"] = page.observed_on.isoformat()
        if page.stale:
            entry["stale"] = True
        return entry

    def _add_page(self, project: ProjectInput, owner: str, page: WatchedPage, where: str) -> None:
        spec = page.integration
        assert spec is not None
        pins = {pin.name: pin.value for pin in page.pins}
        target = self._project_id(spec.project, where) if spec.project else owner
        platform = self._platform_id(spec.platform, where)
        if target is None or platform is None:
            return
        version = pins.get(spec.version) if spec.version else None
        if version is not None and is_placeholder(version):
            version = None  # a template placeholder is no version
        self._add(
            {
                "id": f"{owner}/{slug(page.name)}",
                "project": target,
                "platform": platform,
                "layer": spec.layer,
                "status": spec.status,
                "version_range": _cap(version),
                "pins": [{"name": n, "value": _cap(pins.get(n))} for n in spec.pins],
                "via": owner if target != owner else None,
                "evidence": [self._evidence(page, None, None, None, spec.status)],
            },
            where,
        )

    def _add_table(
        self, project: ProjectInput, owner: str, page: WatchedPage, table: WatchedTable
    ) -> None:
        mapping = table.mapping
        assert mapping is not None
        spec = mapping.integrations
        where = f"project {project.name!r}, page {page.name!r}, table {table.name!r}"
        columns = {_fold(c): i for i, c in enumerate(table.columns)}
        sources = [s for s in (spec.project, spec.platform, spec.status, spec.version) if s]
        named = [s.column for s in sources if s.column] + list(spec.platform_columns)
        missing = [c for c in named if _fold(c) not in columns]
        if missing:
            self.problems.append(
                f"{where}: no column {', '.join(map(repr, missing))} in the table (columns: "
                f"{', '.join(table.columns)}): fix 'integrations' in sources.yaml"
            )
            return
        pins = {pin.name: pin.value for pin in page.pins}
        keys = [columns[_fold(c)] for c in table.key_columns if _fold(c) in columns]
        records: list[tuple[dict[str, Any], str]] = []
        for row in table.rows:
            key_values = [row[i] for i in keys] or list(row[:1])
            row_where = f"{where}, row {' / '.join(key_values)!r}"

            def cell(source: FieldSource, row: tuple[str, ...] = row) -> str | None:
                if source.column is not None:
                    return row[columns[_fold(source.column)]]
                return source.value if source.value is not None else pins.get(source.pin or "")

            row_key = {table.columns[i]: row[i] for i in keys}
            for raw_platform, wording, status, across in _readings(spec, cell, row, columns):
                record = self._row_record(
                    owner, mapping, cell, (raw_platform, wording, status),
                    row_where + (f", column {across!r}" if across else ""),
                )  # fmt: skip
                if record is None:
                    continue
                key_id = _short(slug(" ".join([*key_values, *([across] if across else [])])))
                record["id"] = f"{owner}/{slug(page.name)}/{slug(table.name)}/{key_id}"
                record["pins"] = [{"name": n, "value": _cap(pins.get(n))} for n in spec.pins]
                evidence_row = row_key | ({across: wording or ""} if across else {})
                record["evidence"] = [
                    self._evidence(page, table.name, evidence_row, wording, record["status"])
                ]
                records.append((record, row_where))
        if mapping.combine == "strongest":
            records = _strongest(records)
        for record, row_where in records:
            self._add(record, row_where)

    def check_contradictions(self) -> None:
        """A problem for each (project, platform, version) that records give two statuses,
        naming the rows that say each: the catalog cannot hold both claims."""
        for (project, platform, version), group in _claims(self.integrations.values()).items():
            if len({r["status"] for r in group}) < 2:
                continue
            on = f"{platform!r}" + (f", version {version!r}" if version else "")
            said = "; ".join(_said(record) for record in group)
            self.problems.append(
                f"project {project!r} on platform {on}: the records contradict each other "
                f"({said}): map those rows to different platforms, or set 'combine: strongest' "
                "on the table in sources.yaml"
            )

    def _row_record(
        self, owner: str, mapping: TableMapping, cell: CellReader,
        reading: tuple[str, str | None, str | None], where: str,
    ) -> dict[str, Any] | None:  # fmt: skip
        """project, platform, layer, status, version of one reading of a row (its platform
        wording, its status wording or literal status); None after a problem, or when a map
        says the wording gives no record."""
        spec = mapping.integrations
        raw_platform, wording, status = reading
        target: str | None = owner
        if spec.project is not None:
            name = cell(spec.project) or ""
            target = self._project_id(name, where)
        platform_name: str | None = raw_platform
        if mapping.platform_map:
            found, platform_name = _lookup_map(mapping.platform_map, raw_platform)
            if not found:
                self.problems.append(
                    f"{where}: platform {raw_platform!r} is not in platform_map: add "
                    f"'{raw_platform}: <catalog platform name>' (or null: no record) to the "
                    "table in sources.yaml"
                )
        if wording is not None:
            found, status = _lookup_map(mapping.status_map, wording)
            if not found:
                self.problems.append(
                    f"{where}: status {wording!r} is not in status_map: add '{wording}: <one of "
                    f"{', '.join(SUPPORT_STATUSES)}>' (or null: no record) to the table in "
                    "sources.yaml"
                )
        if platform_name is None or status is None:
            return None  # a problem said above, or a map's null: this reading gives no record
        platform = self._platform_id(platform_name, where)
        version = cell(spec.version) if spec.version is not None else None
        if version is not None and (_fold(version) in _NO_VALUE or is_placeholder(version)):
            version = None  # a template placeholder is no version
        if target is None or platform is None:
            return None
        return {
            "project": target,
            "platform": platform,
            "layer": spec.layer,
            "status": status,
            "version_range": _cap(version),
            "via": owner if target != owner else None,
        }

    def platform_records(self) -> list[dict[str, Any]]:
        return [{"id": ident, "name": name} for ident, name in sorted(self.platforms.items())]

    def integration_records(self) -> list[dict[str, Any]]:
        return [self.integrations[ident] for ident in sorted(self.integrations)]


Claim = tuple[str, str, str | None]  # (project id, platform id, version range)


def _claims(records: Iterable[dict[str, Any]]) -> dict[Claim, list[dict[str, Any]]]:
    grouped: dict[Claim, list[dict[str, Any]]] = {}
    for record in records:
        claim = (record["project"], record["platform"], record.get("version_range"))
        grouped.setdefault(claim, []).append(record)
    return grouped


def _said(record: dict[str, Any]) -> str:
    evidence = record["evidence"][0]
    row = " / ".join((evidence.get("row") or {}).values())
    where = f"table {evidence['table']!r} row {row!r}" if evidence.get("table") else "page"
    wording = f" ({evidence['wording']!r})" if evidence.get("wording") else ""
    return f"{where} says {record['status']!r}{wording}"


def _strongest(
    records: list[tuple[dict[str, Any], str]],
) -> list[tuple[dict[str, Any], str]]:
    """Rows of one table claiming one (project, platform, version): one record, the strongest
    status (the vocabulary's order), with the first row of each wording as its evidence (a
    table of a hundred operations marked ✅ for one backend says "yes" once, not a hundred
    times)."""
    rank = {status: n for n, status in enumerate(SUPPORT_STATUSES)}
    where = {id(record): row_where for record, row_where in records}
    merged: list[tuple[dict[str, Any], str]] = []
    for group in _claims(record for record, _ in records).values():
        group = sorted(group, key=lambda r: (rank[r["status"]], r["id"]))
        first = dict(group[0])
        said: dict[tuple[Any, ...], dict[str, Any]] = {}
        for evidence in (e for record in group for e in record["evidence"]):
            said.setdefault((evidence["table"], evidence["wording"], evidence["status"]), evidence)
        first["evidence"] = list(said.values())
        merged.append((first, where[id(group[0])]))
    return merged
