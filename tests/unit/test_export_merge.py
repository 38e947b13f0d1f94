"""Merging a fresh export into a curated catalog: curated fields survive, crawled facts are
updated or added, and a contradicted curated claim is reported, never rewritten."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from crawler.export import (
    MergeError,
    build_catalog,
    merge_catalog,
    merge_file,
    render_merge_report,
    validate_catalog,
)
from crawler.export.merge import CRAWLER_OWNED
from crawler.export.validate import catalog_schema
from tests.support.export import KERNEL_TABLE, seed_export

WEBGPU = "tilelang/backend-support/backends/webgpu-webgpu"
CUDA = "tilelang/backend-support/backends/nvidia-cuda-cuda"


def _by_id(data: dict[str, Any], collection: str, ident: str) -> dict[str, Any]:
    return next(r for r in data[collection] if r["id"] == ident)


def _curated() -> dict[str, Any]:
    """Last month's export, then edited by a person."""
    data = build_catalog(seed_export())
    _by_id(data, "projects", "triton")["notes"] = "Check the compatibility matrix before pinning."
    cuda = _by_id(data, "integrations", CUDA)
    cuda["maturity"] = "production"
    cuda["evidence"].append({"url": "https://example.com/ci", "date": "2026-10-01"})
    _by_id(data, "integrations", WEBGPU)["status"] = "upstream"  # a person claimed upstream
    data["integrations"].append(
        {
            "id": "curated/biren-serving",
            "project": "vllm",
            "platform": "nvidia-gpu",
            "layer": "serving",
            "status": "unverified",
            "evidence": [{"url": "https://example.com/case", "date": "2026-04-28"}],
        }
    )
    return data


def _crawled() -> dict[str, Any]:
    """This month's crawl: a new release, a new table row, WebGPU still experimental."""
    export = seed_export()
    triton = export.projects[0]
    assert triton.ref is not None
    projects = list(export.projects)
    projects[0] = replace(triton, ref=replace(triton.ref, name="v3.10.0"))
    tilelang = projects[1]
    table = replace(KERNEL_TABLE, rows=(*KERNEL_TABLE.rows, ("NVIDIA CUDA", "cutedsl", "Primary")))
    projects[1] = replace(tilelang, pages=(replace(tilelang.pages[0], tables=(table,)),))
    return build_catalog(replace(export, audit_id=8, projects=tuple(projects)))


def test_merge_keeps_curated_adds_crawled_and_reports_the_contradicted_status() -> None:
    curated, crawled = _curated(), _crawled()
    merged, report = merge_catalog(curated, crawled)

    triton = _by_id(merged, "projects", "triton")
    assert triton["notes"] == "Check the compatibility matrix before pinning."  # kept
    assert triton["tracked_ref"]["name"] == "v3.10.0"  # crawler-owned: updated
    # the crawler's entries, marked so; the release is linked once, by tracked_ref
    assert [(e["about"], e["crawled"]) for e in triton["evidence"]] == [
        ("repository", True), ("license file", True),
    ]  # fmt: skip
    assert all("audit" not in e and "date" not in e for e in triton["evidence"])

    new = "tilelang/backend-support/backends/nvidia-cuda-cutedsl"
    assert _by_id(merged, "integrations", new) == _by_id(crawled, "integrations", new)
    assert {"collection": "integrations", "id": new} in report["added"]

    webgpu = _by_id(merged, "integrations", WEBGPU)
    assert webgpu["status"] == "upstream"  # the curated claim is never rewritten
    assert webgpu["evidence"][0]["status"] == "in progress"  # what the page says, dated
    index = merged["integrations"].index(webgpu)
    assert report["conflicts"] == [
        {
            "path": f"$.integrations[{index}].status",
            "id": WEBGPU,
            "field": "status",
            "curated": "upstream",
            "crawled": "in progress",
            "evidence": ["https://github.com/tile-ai/tilelang/blob/main/README.md"],
        }
    ]

    cuda = _by_id(merged, "integrations", CUDA)
    assert cuda["maturity"] == "production"
    assert [e.get("crawled") for e in cuda["evidence"]] == [
        True,
        None,
    ]  # crawler's replaced, person's kept
    assert _by_id(merged, "integrations", "curated/biren-serving") == _by_id(
        curated, "integrations", "curated/biren-serving"
    )
    assert merged["audit"] == {"id": 8, "date": "2026-11-05"}
    assert validate_catalog(merged) == []
    # curated order kept, new records appended
    assert [r["id"] for r in merged["integrations"]][-2:] == ["curated/biren-serving", new]


def test_merge_report_lists_updates_and_records_no_longer_crawled() -> None:
    curated = _curated()
    crawled = _crawled()
    crawled["integrations"] = [r for r in crawled["integrations"] if r["id"] != CUDA]
    merged, report = merge_catalog(curated, crawled)
    index = [r["id"] for r in merged["integrations"]].index(CUDA)
    assert report["not_in_crawl"] == [{"path": f"$.integrations[{index}]", "id": CUDA}]
    triton = next(u for u in report["updated"] if u["id"] == "triton")
    assert triton == {
        "path": "$.projects[0]",
        "id": "triton",
        "fields": ["tracked_ref"],
    }
    lines = render_merge_report(report)
    # updated: Triton alone (its new release); nothing else changed, and no record carries the
    # audit's number or date, so no other record is touched
    assert [u["id"] for u in report["updated"]] == ["triton"]
    assert lines[0] == (
        "merge of audit #8 (2026-11-05): 1 added, 1 updated, 1 conflict, 1 not in the crawl"
    )
    assert lines[1].startswith(
        "conflict $.integrations[2].status ('tilelang/backend-support/backends/webgpu-webgpu'): "
        "curated 'upstream', crawled 'in progress' (https://github.com/tile-ai/tilelang/blob/"
    )
    assert lines[1].endswith("the curated value is kept; edit it by hand if the source is right")


def test_crawler_evidence_written_before_the_crawled_mark_is_replaced_not_kept() -> None:
    """A curated catalog exported before the ``crawled`` mark has the crawler's entries
    marked by their ``audit``: the merge replaces them (it does not keep them as a person's)."""
    curated = _curated()
    for record in curated["projects"] + curated["integrations"]:
        for entry in record.get("evidence") or []:
            if entry.pop("crawled", None):
                entry |= {"audit": 7, "date": "2026-10-29"}
    merged, _report = merge_catalog(curated, _crawled())
    cuda = _by_id(merged, "integrations", CUDA)
    assert [(e.get("crawled"), e.get("audit")) for e in cuda["evidence"]] == [
        (True, None), (None, None),
    ]  # fmt: skip
    assert not any(
        "audit" in e for r in merged["projects"] + merged["integrations"] for e in r["evidence"]
    )
    assert validate_catalog(merged) == []


def test_merging_the_same_crawl_twice_changes_nothing_more() -> None:
    once, _ = merge_catalog(_curated(), _crawled())
    twice, report = merge_catalog(copy.deepcopy(once), _crawled())
    assert twice == once
    assert report["added"] == [] and report["updated"] == []


def test_merge_file_refuses_a_file_it_cannot_read(tmp_path: Path) -> None:
    broken = tmp_path / "curated.json"
    broken.write_text('{"projects": [1, 2]}')
    with pytest.raises(MergeError) as info:
        merge_file(broken, _crawled())
    assert str(info.value) == (
        f"{broken}: curated: $.projects must be a list of records with an 'id'"
    )
    broken.write_text("{")
    with pytest.raises(MergeError, match=r"curated.json:1:2: not JSON"):
        merge_file(broken, _crawled())
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_curated()))
    merged, report = merge_file(good, _crawled())
    assert len(report["conflicts"]) == 1 and merged["audit"]["id"] == 8


def _descriptions(schema: dict[str, Any], name: str) -> dict[str, str]:
    props = schema["$defs"][name]["properties"]
    return {key: value.get("description", "") for key, value in props.items()}


def test_schema_documents_exactly_the_crawler_owned_fields() -> None:
    schema = catalog_schema()
    for collection, definition in (("projects", "project"), ("integrations", "integration")):
        described = _descriptions(schema, definition)
        owned = {k for k, text in described.items() if text.startswith("Crawler-owned")}
        assert owned == set(CRAWLER_OWNED[collection]), collection
