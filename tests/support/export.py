"""Hand-made export inputs modelled on the seed's snapshot (wording and rows are our own)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from crawler.config import FieldSource, PageIntegration, TableIntegrations
from crawler.export.export_input import (
    EvidenceLink,
    ExportInput,
    ExtraText,
    LicenseFacts,
    LicenseFileEntry,
    Pin,
    ProjectInput,
    TableMapping,
    TrackedRef,
    WatchedPage,
    WatchedTable,
)

AUDIT_DATE = date(2026, 11, 5)
GH = "https://github.com"
SHA = "3b437fd0c2a4e6f8b1d3c5e7a9b0c2d4e6f8a1b3"


def _license(spdx: str, repo: str, **extra: object) -> LicenseFacts:
    facts = LicenseFacts(
        forge_verdict=spdx,
        detected_spdx_ids=(spdx,),
        verdict="exact",
        root_file=LicenseFileEntry("LICENSE", f"{GH}/{repo}/blob/main/LICENSE", (spdx,)),
    )
    return replace(facts, **extra)


def _release(repo: str, tag: str, day: date, prerelease: bool = False) -> TrackedRef:
    return TrackedRef("release", tag, day, prerelease, f"{GH}/{repo}/releases/tag/{tag}")


def _project(order: int, name: str, repo: str, ref: TrackedRef, lic: LicenseFacts,
             **extra: object) -> ProjectInput:  # fmt: skip
    project = ProjectInput(
        name=name,
        order=order,
        repository_url=f"{GH}/{repo}",
        forge="GitHub",
        ref=ref,
        license=lic,
        last_checked=AUDIT_DATE,
        checked_in_audit=True,
        evidence=(
            EvidenceLink("repository", f"{GH}/{repo}"),
            *((EvidenceLink(ref.kind, ref.url),) if ref.url else ()),
            *(
                (EvidenceLink("license file", lic.root_file.url),)
                if lic.root_file and lic.root_file.url
                else ()
            ),
        ),
    )
    return replace(project, **extra)


KERNEL_TABLE = WatchedTable(
    name="backends",
    columns=("Backend", "Target", "Support level"),
    key_columns=("Backend", "Target"),
    rows=(
        ("Huawei Ascend", "ascend", "Ecosystem"),
        ("NVIDIA CUDA", "cuda", "Primary"),
        ("WebGPU", "webgpu", "Experimental"),
    ),
    mapping=TableMapping(
        TableIntegrations(
            platform=FieldSource(column="Backend"),
            status=FieldSource(column="Support level"),
            layer="kernel programming",
        ),
        status_map={
            "Primary": "upstream",
            "Supported": "upstream",
            "Experimental": "in progress",
            "Ecosystem": "official plugin",
        },
        platform_map={
            "NVIDIA CUDA": "NVIDIA GPU",
            "Huawei Ascend": "Huawei Ascend",
            "WebGPU": "WebGPU",
        },
    ),
)

BRANCH_TABLE = WatchedTable(
    name="branches",
    columns=("Branch", "Note", "Status"),
    key_columns=("Branch",),
    rows=(
        ("main", "tracks the main line", "Maintained"),
        ("releases/v0.18.0", "bug fixes only", "Maintained"),
    ),
    mapping=TableMapping(
        TableIntegrations(
            project=FieldSource(value="vLLM"),
            platform=FieldSource(value="Huawei Ascend"),
            status=FieldSource(column="Status"),
            version=FieldSource(column="Branch"),
            layer="serving",
        ),
        status_map={"Maintained": "official plugin"},
    ),
)

GCU_TABLE = WatchedTable(
    name="SDK",
    columns=("SDK Version", "PyTorch Version", "plugin Version"),
    key_columns=("SDK Version",),
    rows=(("v3.7.1", "2.10.0", "2.10.0"),),
    mapping=TableMapping(
        TableIntegrations(
            platform=FieldSource(value="Enflame GCU"),
            status=FieldSource(value="vendor integration"),
            version=FieldSource(column="plugin Version"),
            layer="framework",
            pins=("wheel",),
        )
    ),
)


def seed_export() -> ExportInput:
    """Release candidate, commit- and tag-tracked projects, extra license text, a separately
    licensed example, NOASSERTION, a project not checked in this audit, a Gitee project, and
    support tables and pins."""
    tilelang = _license(
        "MIT",
        "tile-ai/tilelang",
        verdict="match_with_extra_text",
        extra_text=ExtraText(
            "LICENSE",
            4,
            "For a stated period this project is also under extra collaboration terms.",
            f"{GH}/tile-ai/tilelang/blob/main/LICENSE",
        ),
    )
    nixl = _license(
        "Apache-2.0",
        "ai-dynamo/nixl",
        referenced_spdx_ids=("MIT",),
        bundled=(
            LicenseFileEntry(
                "examples/device/ep/LICENSE-DeepEP",
                f"{GH}/ai-dynamo/nixl/blob/main/examples/device/ep/LICENSE-DeepEP",
                ("MIT",),
            ),
        ),
    )
    helion = _license("BSD-3-Clause", "pytorch/helion", forge_verdict="NOASSERTION")
    projects = (
        _project(0, "Triton", "triton-lang/triton",
                 _release("triton-lang/triton", "v3.9.0", date(2026, 10, 27)),
                 _license("MIT", "triton-lang/triton")),
        _project(1, "TileLang", "tile-ai/tilelang",
                 _release("tile-ai/tilelang", "v0.1.15", date(2026, 9, 30)), tilelang,
                 pages=(WatchedPage("backend support", f"{GH}/tile-ai/tilelang/blob/main/README.md",
                                    AUDIT_DATE, tables=(KERNEL_TABLE,)),)),
        _project(2, "Helion", "pytorch/helion",
                 _release("pytorch/helion", "v1.5.2", date(2026, 11, 1)), helion),
        _project(3, "vLLM", "vllm-project/vllm",
                 _release("vllm-project/vllm", "v0.33.0rc3", date(2026, 11, 2), prerelease=True),
                 _license("Apache-2.0", "vllm-project/vllm")),
        _project(4, "SGLang", "sgl-project/sglang",
                 _release("sgl-project/sglang", "v0.5.22", date(2026, 10, 20)),
                 _license("Apache-2.0", "sgl-project/sglang"),
                 last_checked=date(2026, 10, 30), checked_in_audit=False, stale=True),
        _project(5, "NIXL", "ai-dynamo/nixl",
                 _release("ai-dynamo/nixl", "v1.5.2", date(2026, 10, 29)), nixl),
        _project(6, "vLLM Ascend", "vllm-project/vllm-ascend",
                 _release("vllm-project/vllm-ascend", "v0.30.0", date(2026, 10, 29)),
                 _license("Apache-2.0", "vllm-project/vllm-ascend"),
                 pages=(WatchedPage("maintained branches",
                                    f"{GH}/vllm-project/vllm-ascend/blob/main/README.md",
                                    AUDIT_DATE, tables=(BRANCH_TABLE,)),)),
        _project(7, "torch-gcu", "EnflameTechnology/torch-gcu",
                 TrackedRef("release", "v2.10.0", date(2026, 8, 7), False,
                            f"{GH}/EnflameTechnology/torch-gcu/releases/tag/v2.10.0"),
                 _license("BSD-3-Clause", "EnflameTechnology/torch-gcu"),
                 pages=(WatchedPage("compatibility",
                                    f"{GH}/EnflameTechnology/torch-gcu/blob/main/README.md",
                                    date(2026, 11, 4), tables=(GCU_TABLE,),
                                    pins=(Pin("wheel", "2.10.0"),)),)),
        _project(8, "TritonBench", "meta-pytorch/tritonbench",
                 TrackedRef("commit", SHA, date(2026, 11, 5), False,
                            f"{GH}/meta-pytorch/tritonbench/commit/{SHA}"),
                 _license("BSD-3-Clause", "meta-pytorch/tritonbench")),
        _project(9, "MLC-LLM", "mlc-ai/mlc-llm",
                 TrackedRef("tag", "v0.20.0", date(2026, 7, 23), False,
                            f"{GH}/mlc-ai/mlc-llm/releases/tag/v0.20.0"),
                 _license("Apache-2.0", "mlc-ai/mlc-llm")),
        ProjectInput(
            name="vLLM Iluvatar plugin", order=10,
            repository_url="https://gitee.com/deep-spark/vllm-iluvatar", forge="Gitee",
            ref=TrackedRef("tag", "v0.27.1", date(2026, 9, 1), False,
                           "https://gitee.com/deep-spark/vllm-iluvatar/tree/v0.27.1"),
            license=None, last_checked=AUDIT_DATE, checked_in_audit=True,
            pages=(WatchedPage(
                "README pins",
                "https://gitee.com/deep-spark/vllm-iluvatar/raw/release/v0.27.1/README.md",
                AUDIT_DATE,
                pins=(Pin("CoreX runtime", ">=5.0.0"), Pin("ixformer", None),
                      Pin("vLLM", ">=0.27.1,<0.28.0")),
                integration=PageIntegration(project="vLLM", platform="Iluvatar CoreX",
                                            status="community plugin", layer="serving",
                                            version="vLLM", pins=("CoreX runtime", "ixformer")),
            ),),
        ),
    )  # fmt: skip
    return ExportInput(audit_id=7, audit_date=AUDIT_DATE, projects=projects)


ITEM_LAYERS = {"Triton": "kernel programming", "TileLang": "kernel programming",
               "vLLM": "serving", "SGLang": "serving"}  # fmt: skip


def catalog_items_export() -> ExportInput:
    """The seed's export with layers, three rows marked for the snapshot, a riding item (as
    the export builds it: its host's facts) and two not-trackable ones."""
    seed = seed_export()
    projects = [
        replace(p, layer=ITEM_LAYERS.get(p.name), snapshot=p.name in ("Triton", "vLLM", "SGLang"))
        for p in seed.projects
    ]
    host = next(p for p in projects if p.name == "vLLM")
    sglang = next(p for p in projects if p.name == "SGLang")  # not read in this audit
    rider = replace(host, name="vLLM V1 engine", order=20, pages=(), part_of="vLLM",
                    layer="serving", snapshot=True)  # fmt: skip
    stale_rider = replace(sglang, name="SGLang router", order=21, pages=(), part_of="SGLang",
                          layer="serving", snapshot=False)  # fmt: skip
    closed = ProjectInput(
        "Neuware", 22, None, None, None, None, None, False, layer="platform sdk",
        not_trackable="closed SDK; no version list of its own",
        homepage="https://developer.cambricon.com", snapshot=True,
    )  # fmt: skip
    bare = ProjectInput("DTK", 23, None, None, None, None, None, False, layer="platform sdk",
                        not_trackable="no public repository")  # fmt: skip
    return replace(seed, projects=(*projects, rider, stale_rider, closed, bare))
