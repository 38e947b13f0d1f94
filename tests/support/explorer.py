"""Explorer inputs: the seed-like export with an SGLang hardware table, release histories and
the last audit's changes (``demo_site``), and the same with hostile upstream strings
(``hostile_site``). Versions, dates and wording are our own."""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import date
from typing import Any

from crawler.config import FieldSource, TableIntegrations
from crawler.export import build_catalog
from crawler.export.export_input import (
    ExportInput,
    ProjectInput,
    TableMapping,
    TrackedRef,
    WatchedPage,
    WatchedTable,
)
from crawler.export.site import HistoryPoint, SiteChange, SiteInput
from tests.support.export import AUDIT_DATE, GH, seed_export

SGLANG_README = f"{GH}/sgl-project/sglang/blob/main/README.md"

# project → one list of statuses per platform column, as the demo's catalog says
EXPECTED_MATRIX = {
    "TileLang": [[], [], [], ["official plugin"], [], [], ["upstream"], ["in progress"]],
    "vLLM": [[], [], [], ["official plugin", "official plugin"], [], ["community plugin"], [], []],
    "SGLang": [["upstream"], ["in progress"], [], ["upstream"], ["in progress"], ["in progress"],
               ["upstream"], []],
    "torch-gcu": [[], [], ["vendor integration"], [], [], [], [], []],
}  # fmt: skip
PLATFORMS = ["AMD Instinct", "Cambricon MLU", "Enflame GCU", "Huawei Ascend", "Hygon DCU",
             "Iluvatar CoreX", "NVIDIA GPU", "WebGPU"]  # fmt: skip

HOSTILE_RELEASE = "<img src=x onerror=alert(1)>"
HOSTILE_TAG = '"><img src=x onerror="window.__pwned=1">'
HOSTILE_PLATFORM = "<svg onload=window.__pwned=2> Accelerator"
HOSTILE_VERSION = "</code><script>window.__pwned=3</script>"
HOSTILE_PROJECT = "Evil' onmouseover='window.__pwned=4"
HOSTILE_URLS = ("javascript:window.__pwned=5", "data:text/html,<script>alert(1)</script>")

SGLANG_TABLE = WatchedTable(
    name="hardware",
    columns=("Hardware", "Status"),
    key_columns=("Hardware",),
    rows=(
        ("NVIDIA GPUs", "Supported"),
        ("AMD Instinct MI300 / MI325 / MI350", "Supported"),
        ("Huawei Ascend A2 / A3", "Supported"),
        ("Cambricon MLU", "In progress"),
        ("Hygon DCU", "In progress"),
        ("Iluvatar CoreX", "In progress"),
    ),
    mapping=TableMapping(
        TableIntegrations(
            platform=FieldSource(column="Hardware"),
            status=FieldSource(column="Status"),
            layer="serving",
        ),
        status_map={"Supported": "upstream", "In progress": "in progress"},
        platform_map={
            "NVIDIA GPUs": "NVIDIA GPU",
            "AMD Instinct MI300 / MI325 / MI350": "AMD Instinct",
            "Huawei Ascend A2 / A3": "Huawei Ascend",
            "Cambricon MLU": "Cambricon MLU",
            "Hygon DCU": "Hygon DCU",
            "Iluvatar CoreX": "Iluvatar CoreX",
        },
    ),
)


def _history(*points: tuple[str, str, bool]) -> list[HistoryPoint]:
    return [
        HistoryPoint(date.fromisoformat(day), "release", name, pre) for day, name, pre in points
    ]


HISTORY: dict[str, list[HistoryPoint]] = {
    "Triton": _history(
        ("2025-11-20", "v3.6.0", False),
        ("2026-02-18", "v3.7.0", False),
        ("2026-06-02", "v3.8.0", False),
        ("2026-10-27", "v3.9.0", False),
    ),
    "TileLang": _history(
        ("2026-03-01", "v0.1.12", False),
        ("2026-05-14", "v0.1.13", False),
        ("2026-07-30", "v0.1.14", False),
        ("2026-09-30", "v0.1.15", False),
    ),
    "vLLM": _history(
        ("2026-04-10", "v0.30.0", False),
        ("2026-06-25", "v0.31.0", False),
        ("2026-08-28", "v0.32.0", False),
        ("2026-10-15", "v0.33.0rc1", True),
        ("2026-10-24", "v0.33.0rc2", True),
        ("2026-11-02", "v0.33.0rc3", True),
    ),
    "SGLang": _history(
        ("2026-07-01", "v0.5.19", False),
        ("2026-08-12", "v0.5.20", False),
        ("2026-09-09", "v0.5.21", False),
        ("2026-10-20", "v0.5.22", False),
    ),
    "MLC-LLM": [
        HistoryPoint(date(2026, 2, 3), "tag", "v0.19.0"),
        HistoryPoint(date(2026, 7, 23), "tag", "v0.20.0"),
    ],
    "TritonBench": [
        HistoryPoint(date(2026, 10, 1), "commit", "9c1e2ab"),
        HistoryPoint(date(2026, 11, 5), "commit", "3b437fd"),
    ],
}

CHANGES = [
    SiteChange(
        "vLLM",
        "new_prerelease",
        "v0.33.0rc2 → v0.33.0rc3 (release candidate)",
        f"{GH}/vllm-project/vllm/releases/tag/v0.33.0rc3",
    ),
    SiteChange(
        "Helion",
        "license_noassertion",
        "NOASSERTION per GitHub; LICENSE reads as BSD-3-Clause",
        f"{GH}/pytorch/helion/blob/main/LICENSE",
    ),
    SiteChange(
        "TileLang",
        "table_changed",
        "backends: WebGPU Unsupported → Experimental",
        f"{GH}/tile-ai/tilelang/blob/main/README.md",
    ),
]


def demo_export() -> ExportInput:
    export = seed_export()
    projects = []
    for project in export.projects:
        if project.name == "SGLang":
            page = WatchedPage(
                "README hardware", SGLANG_README, date(2026, 10, 30), tables=(SGLANG_TABLE,)
            )
            project = replace(project, pages=(page,))
        projects.append(project)
    return replace(export, projects=tuple(projects))


def demo_site(**overrides: Any) -> SiteInput:
    site = SiteInput(
        catalog=build_catalog(demo_export()),
        checked_on=AUDIT_DATE,
        history=HISTORY,
        changes=CHANGES,
        stale_after_days=14,
    )
    return replace(site, **overrides)


def hostile_site() -> SiteInput:
    """The demo with attacker-controlled strings where upstream text goes: a release name, a
    tag, a platform (from a table cell), a version cell, a project name, and non-http URLs
    (which a validated catalog would not hold: the page must still not link them)."""
    export = demo_export()
    evil = ProjectInput(
        name=HOSTILE_PROJECT,
        order=99,
        repository_url=f"{GH}/evil/evil",
        forge="GitHub",
        ref=TrackedRef(
            "release", HOSTILE_RELEASE, date(2026, 11, 1), False, f"{GH}/evil/evil/releases/tag/x"
        ),
        license=None,
        last_checked=AUDIT_DATE,
        checked_in_audit=True,
        pages=(
            WatchedPage(
                "README",
                f"{GH}/evil/evil/blob/main/README.md",
                AUDIT_DATE,
                tables=(
                    WatchedTable(
                        name="support",
                        columns=("Chip", "State", "Since"),
                        key_columns=("Chip",),
                        rows=((HOSTILE_PLATFORM, "ok", HOSTILE_VERSION),),
                        mapping=TableMapping(
                            TableIntegrations(
                                platform=FieldSource(column="Chip"),
                                status=FieldSource(column="State"),
                                version=FieldSource(column="Since"),
                                layer="serving",
                            ),
                            status_map={"ok": "community plugin"},
                        ),
                    ),
                ),
            ),
        ),
    )
    catalog: dict[str, Any] = copy.deepcopy(
        build_catalog(replace(export, projects=(*export.projects, evil)))
    )
    record = next(p for p in catalog["projects"] if p["name"] == HOSTILE_PROJECT)
    record["repository"]["url"] = HOSTILE_URLS[1]
    record["evidence"].append({"about": "release", "url": HOSTILE_URLS[0]})
    integration = next(i for i in catalog["integrations"] if i["project"] == record["id"])
    integration["evidence"][0]["url"] = HOSTILE_URLS[0]
    history = dict(HISTORY)
    history[HOSTILE_PROJECT] = [
        HistoryPoint(date(2026, 9, 1), "release", HOSTILE_TAG),
        HistoryPoint(date(2026, 11, 1), "release", HOSTILE_RELEASE),
    ]
    changes = [
        *CHANGES,
        SiteChange(
            HOSTILE_PROJECT, "new_release", f"{HOSTILE_TAG} → {HOSTILE_RELEASE}", HOSTILE_URLS[0]
        ),
    ]
    return SiteInput(catalog=catalog, checked_on=AUDIT_DATE, history=history, changes=changes)


def many_projects_site(count: int) -> SiteInput:
    """``count`` projects, each with one record on one of three platforms: more rows than
    the page shows at once."""
    platforms = [{"id": f"chip-{n}", "name": f"Chip {n}"} for n in range(3)]
    projects, integrations = [], []
    for i in range(count):
        repo = f"{GH}/org/p{i:03d}"
        projects.append(
            {"id": f"p{i:03d}", "name": f"Project {i:03d}", "repository": {"url": repo,
             "forge": "GitHub"}, "tracked_ref": None, "license": None,
             "last_checked": AUDIT_DATE.isoformat(), "evidence": []}
        )  # fmt: skip
        integrations.append(
            {"id": f"p{i:03d}/readme", "project": f"p{i:03d}", "platform": f"chip-{i % 3}",
             "layer": "serving", "status": "upstream" if i % 2 else "in progress",
             "version_range": None, "pins": [], "via": None,
             "evidence": [{"url": f"{repo}/blob/main/README.md", "date": AUDIT_DATE.isoformat()}]}
        )  # fmt: skip
    catalog = {
        "schema_version": 1,
        "audit": {"id": 1, "date": AUDIT_DATE.isoformat()},
        "projects": projects,
        "platforms": platforms,
        "integrations": integrations,
    }
    return SiteInput(catalog=catalog, checked_on=AUDIT_DATE)
