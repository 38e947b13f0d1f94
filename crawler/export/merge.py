"""Merge a fresh export into a curated catalog without clobbering what people wrote. Pure.

Ownership (also in ``catalog.schema.json``'s descriptions):

* crawler-owned, replaced by the crawl: the top-level ``schema_version`` and ``audit``; a
  project's ``name``, ``repository``, ``tracked_ref``, ``license``, ``last_checked``, and what
  sources.yaml says of it (``layer``, ``homepage``, ``part_of``, ``not_trackable``); an
  integration's ``version_range`` and ``pins``; every evidence entry marked ``crawled`` (or,
  written before that mark, carrying an ``audit``): the crawler wrote it, and the
  page-derived status lives there;
* everything else is curated: kept as it is. A crawled value is added only where the curated
  record has no such field; where both have one and they differ (an integration's ``status``,
  ``platform``, ``layer``...), the curated value stays and the difference is a conflict;
* evidence entries without either (a person added them) and records the crawl does not
  produce are kept untouched.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from crawler.export.validate import CatalogFileError, read_catalog
from crawler.report.words import plural as counted
from crawler.untrusted import one_line

COLLECTIONS = ("projects", "platforms", "integrations")
TOP_LEVEL_OWNED = ("schema_version", "audit")
CRAWLER_OWNED: dict[str, tuple[str, ...]] = {
    "projects": (
        *("name", "repository", "tracked_ref", "license", "last_checked", "stale", "links"),
        "maturity_suggestion",
        *("layer", "homepage", "part_of", "not_trackable"),  # what sources.yaml says of it
    ),
    "platforms": (),
    "integrations": ("version_range", "pins"),
}

# crawler-owned fields a record has only when they apply: gone from the crawl, gone from the file
OPTIONAL_OWNED: dict[str, tuple[str, ...]] = {
    "projects": ("stale", "links", "maturity_suggestion", "layer", "homepage", "part_of",
                 "not_trackable", "last_checked"),
}


class MergeError(Exception):
    """The curated file does not have the catalog's shape: validate it first."""


def _is_crawled(entry: Any) -> bool:
    """An entry the crawler wrote: ``crawled``, or (catalogs exported before it) an ``audit``."""
    return isinstance(entry, dict) and (entry.get("crawled") is True or "audit" in entry)


def merge_evidence(curated: Any, crawled: list[Any]) -> list[Any]:
    """The crawl's entries, then every entry a person wrote (no ``audit``), in their order."""
    kept = [e for e in curated if not _is_crawled(e)] if isinstance(curated, list) else []
    return copy.deepcopy(crawled) + kept


def _urls(record: dict[str, Any]) -> list[str]:
    evidence = record.get("evidence")
    if not isinstance(evidence, list):
        return []
    return [e["url"] for e in evidence if isinstance(e, dict) and isinstance(e.get("url"), str)]


def _records(document: dict[str, Any], collection: str, label: str) -> list[dict[str, Any]]:
    items = document.get(collection, [])
    if not isinstance(items, list) or not all(
        isinstance(r, dict) and isinstance(r.get("id"), str) for r in items
    ):
        raise MergeError(f"{label}: $.{collection} must be a list of records with an 'id'")
    return items


def merge_catalog(
    curated: dict[str, Any], crawled: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(merged catalog, merge report). Curated order is kept; new records are appended in the
    crawl's order. The report lists added and updated records, conflicts (the curated value is
    kept) and curated records with crawler evidence that the crawl no longer produces."""
    if not isinstance(curated, dict):
        raise MergeError("the curated file must hold a JSON object: validate it first")
    merged = copy.deepcopy(curated)
    for key in TOP_LEVEL_OWNED:
        merged[key] = copy.deepcopy(crawled[key])
    report: dict[str, Any] = {
        "audit": copy.deepcopy(crawled["audit"]),
        "added": [],
        "updated": [],
        "conflicts": [],
        "not_in_crawl": [],
        "suggestions": [],
    }
    for collection in COLLECTIONS:
        records = _records(merged, collection, "curated")
        merged[collection] = records
        position = {r["id"]: i for i, r in enumerate(records)}
        seen = set()
        for fresh in _records(crawled, collection, "crawled"):
            seen.add(fresh["id"])
            if fresh["id"] not in position:
                position[fresh["id"]] = len(records)
                records.append(copy.deepcopy(fresh))
                report["added"].append({"collection": collection, "id": fresh["id"]})
                continue
            index = position[fresh["id"]]
            path = f"$.{collection}[{index}]"
            fields = _merge_record(collection, records[index], fresh, path, report["conflicts"])
            if fields:
                report["updated"].append({"path": path, "id": fresh["id"], "fields": fields})
        for index, record in enumerate(records):
            suggested = record.get("maturity_suggestion")
            if collection == "projects" and suggested and record.get("maturity") != suggested:
                report["suggestions"].append(
                    {"path": f"$.{collection}[{index}].maturity", "id": record["id"],
                     "curated": record.get("maturity"), "suggested": suggested}
                )  # fmt: skip
            evidence = record.get("evidence")
            crawled_before = isinstance(evidence, list) and any(map(_is_crawled, evidence))
            if record["id"] not in seen and crawled_before:
                path = f"$.{collection}[{index}]"
                report["not_in_crawl"].append({"path": path, "id": record["id"]})
    return merged, report


def _merge_record(
    collection: str,
    record: dict[str, Any],
    fresh: dict[str, Any],
    path: str,
    conflicts: list[dict[str, Any]],
) -> list[str]:
    """Update one curated record in place; return the fields it changed."""
    changed: list[str] = []
    owned = CRAWLER_OWNED[collection]
    for key in OPTIONAL_OWNED.get(collection, ()):
        if key in record and key not in fresh:
            del record[key]  # no longer so (read again, no longer riding…): the field goes
            changed.append(key)
    for key, value in sorted(fresh.items()):
        if key == "id":
            continue
        if key == "evidence":
            new = merge_evidence(record.get("evidence"), value)
            if new != record.get("evidence"):
                record["evidence"] = new
                changed.append(key)
        elif key in owned or key not in record:
            if record.get(key, object()) != value:
                record[key] = copy.deepcopy(value)
                changed.append(key)
        elif record[key] != value:
            conflicts.append(
                {
                    "path": f"{path}.{key}",
                    "id": record["id"],
                    "field": key,
                    "curated": copy.deepcopy(record[key]),
                    "crawled": copy.deepcopy(value),
                    "evidence": _urls(fresh),
                }
            )
    return changed


def render_merge_report(report: dict[str, Any]) -> list[str]:
    """Lines for a terminal: counts, then each conflict and what to do about it."""
    lines = [
        f"merge of audit #{report['audit']['id']} ({report['audit']['date']}): "
        f"{len(report['added'])} added, {len(report['updated'])} updated, "
        f"{counted(len(report['conflicts']), 'conflict')}, "
        f"{len(report['not_in_crawl'])} not in the crawl"
    ]
    for conflict in report["conflicts"]:
        evidence = ", ".join(one_line(url, 300) for url in conflict["evidence"]) or "no URL"
        lines.append(
            f"conflict {conflict['path']} ({_short(conflict['id'])}): curated "
            f"{_short(conflict['curated'])}, crawled {_short(conflict['crawled'])} ({evidence}): "
            "the curated value is kept; edit it by hand if the source is right"
        )
    for item in report.get("suggestions", []):
        lines.append(
            f"suggestion {item['path']} ({_short(item['id'])}): the upstream looks "
            f"{item['suggested']} (curated: {_short(item['curated'])}); the curated value is "
            "kept: set maturity by hand if you agree"
        )
    for item in report["not_in_crawl"]:
        lines.append(
            f"not in the crawl {item['path']} ({_short(item['id'])}): its crawler evidence is "
            "no longer produced (row or project gone?): review the record"
        )
    return lines


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def merge_file(
    curated_path: Path, crawled: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``merge_catalog`` on a curated file; MergeError (with the file and line) when it cannot
    be read as a catalog, so nothing is overwritten."""
    if not curated_path.exists():
        raise MergeError(f"{curated_path}: file not found: pass an existing catalog")
    try:
        curated, duplicates = read_catalog(curated_path)
    except CatalogFileError as exc:
        raise MergeError(str(exc)) from None
    if duplicates:  # merging would keep one of them silently: let a person choose
        raise MergeError(
            f"{curated_path}: duplicate keys, so it was not merged: "
            + "; ".join(str(p) for p in duplicates[:10])
        )
    try:
        return merge_catalog(curated, crawled)
    except MergeError as exc:
        raise MergeError(f"{curated_path}: {exc}") from None
