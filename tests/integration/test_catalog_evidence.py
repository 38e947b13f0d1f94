"""The shipped catalog reads every evidence file of the catalog, with the records the pages state.

Every file of ``../shared/replay/catalog`` (and the evidence files elsewhere in ``../shared``
that the shipped ``sources.yaml`` watches: TileLang's, vLLM Ascend's, AITer's … READMEs, and
torch-gcu's stand-in) is served through the forge fakes at the path and ref the shipped file
watches; torch-npu, tracked at its canonical git server, is a real repository on a loopback git
server. One audit of the shipped file (its nightly link checks off) into SQLite and PostgreSQL:
every watch yields rows or pins with no error, except SGLang's README, whose current shape no
recorded revision shows (its 2024 revision is an error naming the headings it has). The
export's catalog.json holds every item and integration records on every platform the catalog
lists with public evidence, with the statuses below, written from reading the files.

The SGLang watch is then checked on a README written here in the shape the catalog describes
(our own rows and words): its table and its "Integrations in progress" sentence give records,
and when the 2024 revision comes back the next night, that is an error naming the headings,
never rows removed, and the records stay, from the last good reading, marked stale.

The material is read at run time and never copied into this repository.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.audit import source_names
from crawler.export.from_store import export_audit
from crawler.model import PageSnapshot
from tests.support.catalog import SGLANG_README, TOKEN, WRITTEN_SGLANG, Catalog, needs_catalog
from tests.support.evidence import CATALOG, evidence

pytestmark = needs_catalog

SGLANG_2024_HEADINGS = "'News', 'About', 'Contents', 'Install', 'Method 1: With pip'"
# what the catalog lists with public evidence (../shared/CATALOG.md section 2, platforms
# beside the vLLM plugins' own hardware and TileLang's backends); T-Head PPU and QAIC have
# only SGLang's current README, which no recorded revision shows (the next test writes one)
WITH_EVIDENCE = {
    "amd-gpu", "apple-silicon", "aws-trainium", "cambricon-mlu", "enflame-gcu", "google-tpu",
    "huawei-ascend", "hygon-dcu", "iluvatar-corex", "intel-gpu", "metax-gpu", "moore-threads",
    "nvidia-gpu",
}  # fmt: skip
BESIDE = {"cpu", "webgpu", "intel-gaudi", "ibm-spyre", "kunlunxin-xpu"}
ONLY_IN_SGLANGS_README = {"alibaba-t-head-ppu", "qualcomm-qaic"}

# (project, platform, version) → status: a few cells of each platform, read off the files
NAMED_CELLS = {
    # CUTLASS's Hardware table, PyTorch's release matrix (2.3: CUDA 11.8 / 12.1)
    ("cutlass", "nvidia-gpu", None): "upstream",
    ("pytorch", "nvidia-gpu", "2.3"): "upstream",
    ("tensorrt-llm", "nvidia-gpu", None): "upstream",
    # AITer's MI300X "Fully supported"; FlagGems' AMD row 🚧 (under development)
    ("aiter", "amd-gpu", None): "upstream",
    ("flaggems", "amd-gpu", None): "in progress",
    ("triton", "amd-gpu", None): "upstream",
    # JAX: Intel GPU "experimental" on Linux x86_64; vLLM's "Intel XPU"; oneDNN's GPU list
    ("jax", "intel-gpu", None): "in progress",
    ("vllm", "intel-gpu", None): "upstream",
    ("onednn", "intel-gpu", None): "upstream",
    # vLLM's plugin list: vllm-ascend is official; vLLM Ascend's v0.23.0 release row;
    # torch-npu's 2.12.0 package for PyTorch 2.12.0; llama.cpp's CANN column
    ("vllm", "huawei-ascend", None): "official plugin",
    ("vllm", "huawei-ascend", "v0.23.0"): "official plugin",
    ("pytorch", "huawei-ascend", "2.12.0"): "vendor integration",
    ("llama-cpp", "huawei-ascend", None): "upstream",
    # vLLM-MUSA's v0.28.0-dev row: "Upgrade candidate"; FlagGems' Mthreads ✅; torch_musa
    ("vllm", "moore-threads", "v0.28.0-dev"): "in progress",
    ("flaggems", "moore-threads", None): "upstream",
    ("pytorch", "moore-threads", None): "vendor integration",
    # FlagGems' Hygon row ✅
    ("flaggems", "hygon-dcu", None): "upstream",
    # SGLang's MLU CI pins (code exists: in progress); torch_mlu's branch for PyTorch 2.4.0;
    # LMDeploy's Cambricon page
    ("sglang", "cambricon-mlu", None): "in progress",
    ("pytorch", "cambricon-mlu", "2.4.0"): "vendor integration",
    ("lmdeploy", "cambricon-mlu", None): "upstream",
    # vLLM's non-official plugin list; vLLM-MetaX's releases/v0.22.0 "Released"
    ("vllm", "metax-gpu", None): "community plugin",
    ("vllm", "metax-gpu", "releases/v0.22.0"): "community plugin",
    ("lmdeploy", "metax-gpu", None): "upstream",
    # DeepSparkInference's LLM table, IXUCA SDK 4.3.0; FlagGems' Iluvatar row
    ("deepsparkinference", "iluvatar-corex", "4.3.0"): "vendor integration",
    ("flaggems", "iluvatar-corex", None): "upstream",
    # torch-gcu's TopsRider table (torch_gcu 2.10.0)
    ("torch-gcu", "enflame-gcu", "2.10.0"): "vendor integration",
    # JAX's Google TPU row; vLLM's TPU backend (tpu-inference)
    ("jax", "google-tpu", None): "upstream",
    ("vllm", "google-tpu", None): "official plugin",
    # vllm-metal's install.sh pins vLLM 0.27.1; llama.cpp's MTL column; TileLang's Metal row
    ("vllm", "apple-silicon", "0.27.1"): "official plugin",
    ("llama-cpp", "apple-silicon", None): "upstream",
    ("tilelang", "apple-silicon", None): "upstream",
    # vLLM's plugin list (vllm-neuron, official); its README "(Beta)" pinning vLLM 0.11.0;
    # the Neuron SDK 2.32.0 release ("vLLM Neuron Beta", vLLM 0.16.0)
    ("vllm", "aws-trainium", None): "official plugin",
    ("vllm", "aws-trainium", "0.11.0"): "in progress",
    ("vllm", "aws-trainium", "0.16.0"): "in progress",
    # the vLLM plugins' own hardware
    ("vllm", "intel-gaudi", None): "official plugin",
    ("vllm", "ibm-spyre", ">=0.19.0,<0.19.1"): "official plugin",
    ("vllm", "kunlunxin-xpu", None): "community plugin",
}


@pytest.fixture
def catalog(db_url: str, tmp_path: Path) -> Iterator[Any]:
    made: list[Catalog] = []

    def make(**options: Any) -> Catalog:
        made.append(Catalog(db_url, tmp_path / f"reports{len(made)}", TOKEN, **options))
        return made[-1]

    yield make
    for one in made:
        one.close()


def _export(catalog: Catalog, out: Path) -> dict[str, Any]:
    labels = {name: names.label for name, names in source_names().items()}
    export_audit(catalog.store, catalog.config, None, out, labels=labels)
    found: dict[str, Any] = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    return found


def _claims(catalog_json: dict[str, Any]) -> dict[tuple[str, str, str | None], set[str]]:
    claims: dict[tuple[str, str, str | None], set[str]] = {}
    for r in catalog_json["integrations"]:
        claims.setdefault((r["project"], r["platform"], r["version_range"]), set()).add(r["status"])
    return claims


def _every_watch_yields(catalog: Catalog, audit_id: int, skip: set[str]) -> None:
    """Each watched page was read: every table has rows, every pin a value, a text block text."""
    states = catalog.store.states_as_of(audit_id, include_own=True)
    for spec in catalog.config.projects:
        if not spec.pages:
            continue
        snapshot = states[spec.name].snapshot
        assert snapshot is not None, spec.name
        read: dict[str, PageSnapshot] = {page.name: page for page in snapshot.pages}
        for page in spec.pages:
            where = f"{spec.name} / {page.name}"
            if where in skip:
                assert page.name not in read, where
                continue
            found = read[page.name]
            assert [t.name for t in found.tables] == [t.name for t in page.tables], where
            assert all(t.rows for t in found.tables), where
            watches_pins = bool(page.pins or page.pin_keys)
            assert bool(found.pins) == watches_pins, where
            assert all(value for _, value in found.pins), where
            assert found.text if page.text else found.text is None, where


def test_every_evidence_file_through_the_shipped_sources_yaml(
    catalog: Any, tmp_path: Path
) -> None:
    night = catalog()
    watched = {
        ((page.location or spec.forge).path, page.path)
        for spec in night.config.projects for page in spec.pages if page.path
    }  # fmt: skip
    recorded = json.loads((CATALOG / "index.json").read_text(encoding="utf-8"))
    assert {(e["repository"], e["path"]) for e in recorded} <= watched  # all 53 files
    outcome = night.audit()
    report = outcome.report.as_json()
    (error,) = report["errors"]
    assert (error["project"], report["summary"]["errors"]) == ("SGLang", 1)
    assert error["error"].startswith(
        "table 'hardware': page layout changed: heading 'Supported Hardware' not found; the "
        f"page's headings: {SGLANG_2024_HEADINGS}"
    )
    assert [c["kind"] for c in report["changes"] if c["kind"] != "project_added"] == []
    _every_watch_yields(night, outcome.audit_id, skip={"SGLang / supported hardware"})

    exported = _export(night, tmp_path / "export")
    items = {p["name"]: p for p in exported["projects"]}
    assert list(items) == [spec.name for spec in night.config.projects]  # all 84, in order
    for spec in night.config.projects:
        record = items[spec.name]
        if spec.part_of is not None:
            assert record["part_of"] == items[spec.part_of]["id"], spec.name
            assert record["tracked_ref"]["label"].startswith(f"part of {spec.part_of}: ")
        elif spec.not_trackable is not None:
            assert record["not_trackable"] == spec.not_trackable
        else:
            # read by this audit: its facts are of the catalog's date, which it does not repeat
            assert record["tracked_ref"] is not None and "last_checked" not in record, spec.name
    platforms = {p["id"] for p in exported["platforms"]}
    assert platforms == WITH_EVIDENCE | BESIDE
    assert not platforms & (ONLY_IN_SGLANGS_README | {"biren-gpu"})
    claims = _claims(exported)
    assert {cell: claims.get(cell) for cell in NAMED_CELLS} == {
        cell: {status} for cell, status in NAMED_CELLS.items()
    }
    assert {platform for _, platform, _ in NAMED_CELLS} == WITH_EVIDENCE | BESIDE - {
        "cpu", "webgpu"
    }  # fmt: skip
    _pins_and_versions(exported)


def _pins_and_versions(exported: dict[str, Any]) -> None:
    """The pins a record carries, as the files write them."""
    records = {r["id"]: r for r in exported["integrations"]}
    pins = {ident: {p["name"]: p["value"] for p in r["pins"]} for ident, r in records.items()}
    assert pins["vllm-musa/supported-release/releases/v0-28-0-dev"] == {
        "torch_musa": "2.11.0.post2", "MUSA": "5.2.0"
    }  # fmt: skip
    assert pins["sglang/mlu-components"] == {
        "TORCH_MLU_VERSION": "1.34.1+torch2.13.0", "CNTOOLKIT_VERSION": "4.7.6-1"
    }  # fmt: skip
    assert pins["vllm-gaudi/stable-vllm-commit"] == {
        "vLLM commit": "14617c2b6c1257ac0d6c7b5e05b195ca30013827"
    }
    assert pins["vllm-neuron/readme"] == {"Neuron SDK": "2.26.1"}
    assert pins["vllm-kunlun/readme"] == {"PyTorch": "2.5.1"}
    # the Gitee README is the world's own (no copy in ../shared): "ixformer >=0.6.0." ends a
    # sentence, and the pin once took its full stop
    assert pins["vllm-iluvatar-plugin/readme-pins"] == {
        "CoreX runtime": ">=4.2.0", "ixformer": ">=0.6.0"
    }  # fmt: skip
    # llama.cpp's ops grid: one record per backend, its evidence one row per wording
    cann = records["llama-cpp/operations/ops/abs-cann"]
    assert [(e["row"], e["wording"]) for e in cann["evidence"]] == [
        ({"Operation": "ABS", "CANN": "yes"}, "yes"),
        ({"Operation": "CONT", "CANN": "yellow"}, "yellow"),
    ]
    assert evidence("ggml-org/llama.cpp", "docs/ops.md").form == "markdown table"


# -- SGLang: the README's current shape, written in tests/support/catalog.py ----------------------


def test_sglangs_readme_in_the_described_shape_then_its_2024_revision(
    catalog: Any, tmp_path: Path
) -> None:
    night = catalog(replaced=WRITTEN_SGLANG)
    first = night.audit()
    assert first.report.as_json()["errors"] == []
    _every_watch_yields(night, first.audit_id, skip=set())
    exported = _export(night, tmp_path / "first")
    sglang = {
        (r["platform"], r["status"]) for r in exported["integrations"] if r["project"] == "sglang"
    }
    assert sglang == {
        ("nvidia-gpu", "upstream"), ("amd-gpu", "upstream"), ("google-tpu", "upstream"),
        ("intel-gpu", "upstream"), ("apple-silicon", "upstream"), ("huawei-ascend", "upstream"),
        ("moore-threads", "upstream"), ("aws-trainium", "in progress"),
        ("alibaba-t-head-ppu", "in progress"), ("cambricon-mlu", "in progress"),
        ("metax-gpu", "in progress"), ("hygon-dcu", "in progress"),
        ("iluvatar-corex", "in progress"), ("qualcomm-qaic", "in progress"),
    }  # fmt: skip
    # with it, every platform the catalog lists with public evidence has records (Biren's
    # evidence is vendor news pages: not trackable)
    assert {p["id"] for p in exported["platforms"]} == (
        WITH_EVIDENCE | BESIDE | ONLY_IN_SGLANGS_README
    )

    repo = night.github.find(SGLANG_README[0])
    assert repo is not None
    repo.files[SGLANG_README[1]] = evidence(*SGLANG_README).text()  # the 2024 revision
    second = night.audit().report.as_json()
    (error,) = second["errors"]
    assert error["project"] == "SGLang"
    assert f"the page's headings: {SGLANG_2024_HEADINGS}" in error["error"]
    assert [c for c in second["changes"] if c["project"] == "SGLang"] == []  # no rows removed
    again = _export(night, tmp_path / "second")
    kept = [r for r in again["integrations"] if r["project"] == "sglang"]
    assert {(r["platform"], r["status"]) for r in kept} == sglang
    stale = {r["id"]: r["evidence"][0].get("stale", False) for r in kept}
    assert stale.pop("sglang/mlu-components") is False  # read again tonight
    assert set(stale.values()) == {True}
