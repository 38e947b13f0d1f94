"""The export against the real READMEs and license files in ../shared/corpus, read with the
shipped sources.yaml: every watched table maps without an unmapped cell, and the snapshot shows
the seed's conventions (skips when the corpus is absent)."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

from crawler.analysis.licenses import analyze_file
from crawler.analysis.pages import read_page
from crawler.config import PageSpec, load_config
from crawler.export import (
    ExportInput,
    LicenseFileEntry,
    Pin,
    ProjectInput,
    TableMapping,
    TrackedRef,
    WatchedPage,
    WatchedTable,
    build_catalog,
    license_facts_from_analysis,
    render_snapshot,
)
from crawler.export.labels import license_cell, plain
from tests.support import ROOT

AUDIT = date(2026, 11, 30)
FOLDERS = {  # sources.yaml repo → corpus folder (torch-gcu: the corpus holds a substitute copy)
    "EnflameTechnology/torch-gcu": "sunnygui-L__torch-gcu",
}


def _folder(corpus: Path, repo: str) -> Path:
    return corpus / FOLDERS.get(repo, repo.replace("/", "__"))


def _day(stamp: str) -> date:
    return datetime.fromisoformat(stamp).date()


def _pages(corpus: Path, spec_pages: tuple[PageSpec, ...], repo: str) -> tuple[WatchedPage, ...]:
    pages = []
    for spec in spec_pages:
        page_repo = spec.location.path if spec.location else repo
        readme = _folder(corpus, page_repo) / "README.md"
        if spec.path != "README.md" or not readme.is_file():
            continue  # the other evidence files: tests/integration/test_catalog_evidence.py
        url = f"https://github.com/{page_repo}/blob/HEAD/{spec.path}"
        snapshot = read_page(spec, readme.read_text(encoding="utf-8"), None, url)
        tables = tuple(
            WatchedTable(t.name, t.columns, t.key_columns, t.rows, TableMapping.from_spec(ts))
            for t, ts in zip(snapshot.tables, spec.tables, strict=True)
        )
        pins = tuple(Pin(name, value) for name, value in snapshot.pins)
        pages.append(WatchedPage(spec.name, url, AUDIT, tables, pins, spec.integration))
    return tuple(pages)


def _project(corpus: Path, order: int, name: str) -> ProjectInput:
    spec = load_config(ROOT / "sources.yaml").project(name)
    assert spec.forge is not None
    repo = spec.forge.path
    folder = _folder(corpus, repo)
    meta = json.loads((folder / "meta.json").read_text())
    gh = f"https://github.com/{repo}"
    if meta["newest_tag"]:
        kind = "tag" if name == "MLC-LLM" else "release"  # the corpus has tags, not releases
        tag = meta["newest_tag"]
        ref = TrackedRef(
            kind, tag, _day(meta["newest_tag_date"]), False, f"{gh}/releases/tag/{tag}"
        )
    else:
        sha = meta["head_commit"]
        ref = TrackedRef("commit", sha, _day(meta["head_date"]), False, f"{gh}/commit/{sha}")
    bundled = tuple(
        LicenseFileEntry(
            saved.name.replace("__", "/"),
            f"{gh}/blob/HEAD/{saved.name.replace('__', '/')}",
            analyze_file(saved).spdx_ids,
        )
        for saved in sorted((folder / "licenses").iterdir())
        if "__" in saved.name and "LICENSE" in saved.name
    )
    root = meta["root_license_files"][0]
    facts = license_facts_from_analysis(
        analyze_file(folder / "licenses" / root),
        forge_verdict=None,
        root_path=root,
        root_url=f"{gh}/blob/HEAD/{root}",
        bundled=bundled,
    )
    return ProjectInput(
        name, order, gh, "GitHub", ref, facts, AUDIT, True,
        pages=_pages(corpus, spec.pages, repo),
    )  # fmt: skip


NAMES = ["TileLang", "vLLM", "NIXL", "vLLM Ascend", "torch-gcu", "TritonBench", "MLC-LLM"]


def _export(corpus: Path) -> ExportInput:
    projects = []
    for order, name in enumerate(NAMES):
        if name == "vLLM":  # not mirrored in the corpus: only named, as the integrated project
            projects.append(ProjectInput(name, order, None, "GitHub", None, None, None, False))
        else:
            projects.append(_project(corpus, order, name))
    return ExportInput(1, AUDIT, tuple(projects))


def test_real_license_files_give_the_seed_cells(shared_corpus: Path) -> None:
    export = _export(shared_corpus)
    cells = {p.name: plain(license_cell(p.license)) for p in export.projects}
    assert cells["TileLang"] == "MIT plus extra text in LICENSE"
    assert cells["NIXL"] == (
        "Apache-2.0 base plus extra text in LICENSE; bundled "
        "examples/device/ep/LICENSE-DeepEP has a separate license"
    )
    tilelang = export.projects[0].license
    assert tilelang is not None and tilelang.extra_text is not None
    assert tilelang.extra_text.line == 4
    nixl = export.projects[2].license
    assert nixl is not None
    assert (nixl.detected_spdx_ids, nixl.referenced_spdx_ids) == (("Apache-2.0",), ("MIT",))
    assert nixl.bundled[0].spdx_ids == ("MIT",)


def test_real_readmes_map_every_row_with_the_shipped_mappings(shared_corpus: Path) -> None:
    catalog = build_catalog(_export(shared_corpus))  # raises on any unmapped cell
    by_source: dict[str, list[tuple[str, str, str]]] = {}
    for record in catalog["integrations"]:
        source = record["id"].split("/")[0]
        by_source.setdefault(source, []).append(
            (record["platform"], record["status"], record["version_range"] or "")
        )
    assert sorted(set(by_source["tilelang"])) == [
        ("amd-gpu", "upstream", ""),
        ("apple-silicon", "upstream", ""),
        ("cpu", "in progress", ""),
        ("huawei-ascend", "official plugin", ""),
        ("metax-gpu", "official plugin", ""),
        ("moore-threads", "official plugin", ""),
        ("nvidia-gpu", "upstream", ""),  # CUDA Primary and CuTe DSL Experimental combined
        ("webgpu", "in progress", ""),
    ]
    assert len(by_source["vllm-ascend"]) == 5
    assert {
        r["project"] for r in catalog["integrations"] if r["id"].startswith("vllm-ascend/")
    } == {"vllm"}
    assert by_source["torch-gcu"] == [
        ("enflame-gcu", "vendor integration", "2.10.0"),
        ("enflame-gcu", "vendor integration", "2.10.0"),
    ]


def test_real_refs_follow_the_snapshot_conventions(shared_corpus: Path) -> None:
    rows = {
        line.split(" | ")[0][2:]: line.split(" | ")[1]
        for line in render_snapshot(_export(shared_corpus)).splitlines()
        if line.startswith("| ") and not line.startswith("| Project")
    }
    assert rows["NIXL"].endswith(" (release candidate)")  # newest tag v1.4.0-rc3
    assert rows["TritonBench"].startswith("no tagged release; tracked by commit ")
    assert rows["TritonBench"].endswith(" (2025-08-15)")
    assert rows["MLC-LLM"].startswith("no GitHub release; tracked by tag ")
