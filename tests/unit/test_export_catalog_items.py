"""The export of items with no source of their own: a riding item's record shows its host's
release and license facts, labelled "part of HOST"; a not-trackable one says why and has no
facts; every item carries its layer; snapshot.md holds exactly the rows sources.yaml marks."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from crawler.export import build_catalog, render_snapshot
from crawler.export.merge import merge_catalog
from crawler.export.validate import validate_catalog
from tests.support.export import AUDIT_DATE, catalog_items_export


def _records(catalog: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in catalog["projects"]}


def test_riding_and_not_trackable_records_and_layers() -> None:
    catalog = build_catalog(catalog_items_export())
    assert validate_catalog(catalog, today=AUDIT_DATE) == []
    records = _records(catalog)
    host, rider = records["vLLM"], records["vLLM V1 engine"]
    assert (rider["id"], rider["part_of"], rider["layer"]) == ("vllm-v1-engine", "vllm", "serving")
    assert rider["tracked_ref"] == host["tracked_ref"] | {
        "label": "part of vLLM: v0.33.0rc3 (release candidate)"
    }
    assert host["tracked_ref"]["label"] == "v0.33.0rc3 (release candidate)"
    for fact in ("repository", "license", "last_checked", "evidence"):
        assert rider.get(fact) == host.get(fact), fact
    assert "last_checked" not in host  # checked on the catalog's date: it goes without saying
    assert "part_of" not in host and "not_trackable" not in host
    # a riding item whose host could not be read is stale with it, with its date
    assert (records["SGLang router"]["stale"], records["SGLang router"]["last_checked"]) == (
        True, "2026-10-30"
    )
    assert records["Neuware"] == {
        "id": "neuware", "name": "Neuware", "layer": "platform sdk",
        "not_trackable": "closed SDK; no version list of its own",
        "homepage": "https://developer.cambricon.com",
        "repository": {"url": None, "forge": None}, "tracked_ref": None, "license": None,
        "last_checked": None, "evidence": [],
    }  # fmt: skip
    assert "homepage" not in records["DTK"] and "stale" not in records["DTK"]
    assert [records[n].get("layer") for n in ("Triton", "Helion")] == ["kernel programming", None]
    # the riding items bring no integration record of their own (their host's page does)
    owners = {i["project"] for i in catalog["integrations"]}
    assert "vllm" in owners and not owners & {"vllm-v1-engine", "sglang-router", "neuware", "dtk"}


def test_snapshot_holds_exactly_the_marked_rows_in_order() -> None:
    snapshot = render_snapshot(catalog_items_export())
    rows = [line for line in snapshot.splitlines() if line.startswith("| ")][1:]
    assert [row.split(" | ")[0][2:] for row in rows] == [
        "Triton", "vLLM", "SGLang", "vLLM V1 engine", "Neuware"
    ]  # fmt: skip
    assert rows[3].startswith(
        "| vLLM V1 engine | part of vLLM: [v0.33.0rc3](<https://github.com/vllm-project/vllm/"
        "releases/tag/v0.33.0rc3>) (release candidate) | 2026-11-02 | Apache-2.0 |"
    )
    assert rows[4] == (
        "| Neuware | not trackable: closed SDK; no version list of its own | — | — |"
    )
    # the cautions and the tag/commit note name only the rows shown, never a rider twice
    assert "TileLang" not in snapshot and "TritonBench" not in snapshot


def test_without_marks_every_item_is_a_row() -> None:
    export = catalog_items_export()
    unmarked = replace(export, projects=tuple(replace(p, snapshot=False) for p in export.projects))
    rows = [line for line in render_snapshot(unmarked).splitlines() if line.startswith("| ")]
    assert len(rows) - 1 == len(export.projects)


def test_validate_refuses_a_part_of_that_names_nothing_a_chain_or_a_not_trackable_rider() -> None:
    catalog = build_catalog(catalog_items_export())
    broken = copy.deepcopy(catalog)
    by_id = {p["id"]: p for p in broken["projects"]}
    by_id["vllm-v1-engine"]["part_of"] = "vllm-v2"
    by_id["sglang-router"]["part_of"] = "vllm-v1-engine"
    by_id["neuware"]["part_of"] = "triton"
    at = {p["id"]: i for i, p in enumerate(broken["projects"])}
    assert [str(p) for p in validate_catalog(broken, today=AUDIT_DATE)] == [
        f"$.projects[{at['vllm-v1-engine']}].part_of: 'vllm-v2' is not the id of any record in "
        "$.projects: fix the reference",
        f"$.projects[{at['sglang-router']}].part_of: 'vllm-v1-engine' is itself part of "
        "'vllm-v2': name 'vllm-v2' directly (no chains)",
        f"$.projects[{at['neuware']}].part_of: a riding project shows its host's facts: drop "
        "part_of or not_trackable",
    ]


def test_a_merge_drops_part_of_once_the_item_rides_no_more() -> None:
    catalog = build_catalog(catalog_items_export())
    now = copy.deepcopy(catalog)
    rider = next(p for p in now["projects"] if p["id"] == "vllm-v1-engine")
    del rider["part_of"]
    rider["layer"] = "compiler"
    merged, report = merge_catalog(catalog, now)
    record = next(p for p in merged["projects"] if p["id"] == "vllm-v1-engine")
    assert ("part_of" in record, record["layer"]) == (False, "compiler")
    assert {"path": "$.projects[11]", "id": "vllm-v1-engine",
            "fields": ["part_of", "layer"]} in report["updated"]  # fmt: skip
