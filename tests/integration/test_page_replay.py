"""Issue 18: the real history of every page in ../shared/replay/pages, replayed night by night.

Revision k is served on night k (from the vendor-site fake, or as the repository file through
the GitHub fake where the shipped sources.yaml reads it that way), audited into a real database
(SQLite and PostgreSQL), and each night's report must list exactly the changes a person sees in
the diff between revisions k-1 and k, and nothing else. The expected changes below were written
by reading those diffs (rows named by their key cells, cells by key and column); nights not
listed must report nothing. A night whose page lacks the watched table is an error, never
"rows removed". The material is read at run time and never copied into this repository.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from crawler.config import parse_config
from crawler.store import Store
from crawler_fakes.github import FakeGitHub
from crawler_fakes.pages import FakePageServer
from tests.support import ROOT
from tests.support.page_replay import (
    Nights,
    github_repo,
    needs_replay,
    observe,
    other_kinds,
    revisions,
)

pytestmark = needs_replay


@pytest.fixture
def nights(db_url: str, tmp_path: Path) -> Iterator[Nights]:
    store = Store(db_url)
    try:
        yield Nights(store, tmp_path / "reports")
    finally:
        store.close()


@pytest.fixture
def site() -> Iterator[FakePageServer]:
    with FakePageServer() as server:
        yield server


SITE_CONFIG = """
settings: {{allow_private_addresses: true}}
projects:
  - name: Vendor
    homepage: https://vendor.example
    pages:
      - name: page
        url: {site}/page.md
{watch}
"""


def _cells(*pairs: str) -> list[tuple[str, str]]:
    """``"key | column"`` → (key, column), sorted as the observation lists them."""
    return sorted(tuple(p.split(" | ")) for p in pairs)  # type: ignore[misc]


def _layout(table: str, message: str) -> dict[str, str]:
    return {"error": f"table {table!r}: page layout changed: {message}"}


MAIN_NOTE = {"branches": {"cells": _cells("main | Note")}}  # the vLLM tag main follows moved
BRANCHES: dict[int, dict[str, Any]] = {
    1: _layout("branches", "no table under heading 'Branch' before the next heading"),
    3: {"branches": {"rows_added": ["v0.7.1-dev"]}},
    4: MAIN_NOTE, 5: MAIN_NOTE,
    6: {"branches": {"cells": _cells("v0.7.3-dev | Note"), "rows_added": ["v0.9.1-dev"]}},
    7: MAIN_NOTE,
    8: {"branches": {"rows_added": ["rfc/feature-name"]}},
    9: MAIN_NOTE, 10: MAIN_NOTE,
    11: {"branches": {"rows_added": ["v0.11.0-dev"]}},
    12: MAIN_NOTE, 13: MAIN_NOTE,
    14: {"branches": {"cells": _cells("rfc/feature-name | Note")}},  # its link moved host
    15: {"branches": {"rows_added": ["releases/v0.13.0"]}},
    16: {"branches": {"cells": _cells("v0.7.1-dev | Note", "v0.7.3-dev | Note")}},
    17: MAIN_NOTE, 18: MAIN_NOTE, 19: MAIN_NOTE,
    # the table re-aligned (no change in itself); three dev branches became Unmaintained
    20: {"branches": {
        "cells": _cells(
            "v0.11.0-dev | Note", "v0.11.0-dev | Status", "v0.7.1-dev | Note",
            "v0.7.3-dev | Note", "v0.7.3-dev | Status", "v0.9.1-dev | Note",
            "v0.9.1-dev | Status",
        ),
        "rows_added": ["releases/v0.18.0"],
    }},
    21: MAIN_NOTE,
    22: {"branches": {"rows_added": ["releases/v0.20.2rc"]}},
    23: MAIN_NOTE, 24: MAIN_NOTE, 25: MAIN_NOTE, 26: MAIN_NOTE, 27: MAIN_NOTE,
    # old branches dropped; the feature-branch row now reads rfc/<feature-name> (its text kept)
    28: {"branches": {
        "cells": _cells("main | Note", "releases/v0.13.0 | Note"),
        "rows_added": ["releases/v0.23.0", "rfc/<feature-name>"],
        "rows_removed": [
            "releases/v0.20.2rc", "rfc/feature-name", "v0.11.0-dev", "v0.7.1-dev",
            "v0.7.3-dev", "v0.9.1-dev",
        ],
    }},
    29: MAIN_NOTE, 30: MAIN_NOTE, 31: MAIN_NOTE,
}  # fmt: skip

BACKENDS: dict[int, dict[str, Any]] = {
    # before 2026-08 the README had a "Tested Devices" list, no table: an error, not a removal
    **{n: _layout("backends", "heading 'Platform and Backend Support' not found")
       for n in (1, 2, 3, 4)},
    6: {"backends": {"cells": _cells("AMD ROCm/HIP / hip | Notes")}},  # ROCm CI note rewritten
}  # fmt: skip

NEXT = "Next Step"
FEATURES: dict[int, dict[str, Any]] = {
    2: {"features": {
        "cells": _cells(
            "Automatic Prefix Caching | Note", "Enc-dec | Note", "Multi step scheduler | Note",
            "Multi step scheduler | Supported", "Pooling | Note", "Prompt adapter | Note",
            "Prompt adapter | Supported", "Speculative decoding | Note",
            "Speculative decoding | Supported",
        ),
        "rows_added": ["Pipeline Parallel", "Tensor Parallel"],
    }},
    3: {"features": {"cells": _cells("Guided Decoding | Note", "Guided Decoding | Supported")}},
    4: {"features": {"cells": _cells("Pooling | Note", "Pooling | Supported")}},
    5: {"features": {  # re-laid out with more columns; four verdicts flipped
        "cells": _cells(
            "Automatic Prefix Caching | Supported", "Multi Modality | Supported",
            "Multi step scheduler | Supported", "Speculative decoding | Supported",
        ),
        "columns_added": ["CI Coverage", "Current Status", "Guidance Document", NEXT],
        "columns_removed": ["Note"],
    }},
    6: {"features": {"cells": _cells(f"Multi Modality | {NEXT}")}},  # a typo fixed
    7: {"features": {"cells": _cells(f"Multi step scheduler | {NEXT}")}},
    8: {"features": {  # V0/V1 engine columns replace the status columns; six features added
        "cells": _cells(*(f"{k} | {NEXT}" for k in (
            "Async output", "Automatic Prefix Caching", "Beam search", "Best of",
            "Chunked Prefill", "Guided Decoding", "LoRA", "LogProbs", "Multi Modality",
            "Multi step scheduler", "Pipeline Parallel", "Pooling", "Prompt logProbs",
            "Speculative decoding", "Tensor Parallel",
        ))),
        "columns_added": ["vLLM V0 Engine", "vLLM V1 Engine"],
        "columns_removed": ["CI Coverage", "Current Status", "Guidance Document", "Supported"],
        "rows_added": [
            "Data Parallel", "Expert Parallel", "Graph Mode", "Prefill Decode Disaggregation",
            "Quantization", "Sleep Mode",
        ],
    }},
    # "Prompt adapter" gained a 🔴 before "No plan" in V0: the same word, no change
    9: {"features": {"cells": _cells(
        f"Automatic Prefix Caching | {NEXT}", "Automatic Prefix Caching | vLLM V1 Engine",
        f"Chunked Prefill | {NEXT}", "Chunked Prefill | vLLM V1 Engine",
        f"Graph Mode | {NEXT}", "Graph Mode | vLLM V1 Engine",
        f"Multi step scheduler | {NEXT}", "Pooling | vLLM V1 Engine",
    )}},
    10: {"features": {"cells": _cells(f"LoRA | {NEXT}", "LoRA | vLLM V1 Engine")}},
    11: {"features": {"cells": _cells(
        "Automatic Prefix Caching | vLLM V0 Engine", "Chunked Prefill | vLLM V0 Engine",
        f"Prompt adapter | {NEXT}", "Prompt adapter | vLLM V1 Engine",
        f"Speculative decoding | {NEXT}", "Speculative decoding | vLLM V1 Engine",
    )}},
    12: {"features": {  # one Status column replaces the two engine columns
        "cells": _cells(*(f"{k} | {NEXT}" for k in (
            "Best of", "Data Parallel", "Enc-dec", "Expert Parallel", "Pipeline Parallel",
            "Prefill Decode Disaggregation", "Prompt adapter", "Quantization", "Sleep Mode",
            "Tensor Parallel",
        ))),
        "columns_added": ["Status"],
        "columns_removed": ["vLLM V0 Engine", "vLLM V1 Engine"],
    }},
    13: {"features": {
        "cells": _cells(f"Prefill Decode Disaggregation | {NEXT}",
                        "Prefill Decode Disaggregation | Status"),
        "rows_removed": ["Best of", "Multi step scheduler", "Prompt adapter"],
    }},
    14: {"features": {"cells": _cells(*(f"{k} | {NEXT}" for k in (
        "Automatic Prefix Caching", "Chunked Prefill", "Expert Parallel", "Graph Mode",
        "Pooling", "Quantization", "Tensor Parallel",
    )))}},
    15: {"features": {"cells": _cells(f"Pooling | {NEXT}")}},
    16: {"features": {"rows_added": ["Context Parallel"]}},
    17: {"features": {"cells": _cells(
        f"Context Parallel | {NEXT}", "Context Parallel | Status", f"Graph Mode | {NEXT}",
        "Graph Mode | Status", f"LoRA | {NEXT}", f"Multi Modality | {NEXT}",
        f"Sleep Mode | {NEXT}",
    )}},
    # re-aligned; three features back to Experimental
    18: {"features": {"cells": _cells("Beam search | Status", "LoRA | Status",
                                      "Pooling | Status")}},
    # two reference-style links now point elsewhere (cell changes); a key re-capitalised
    19: {"features": {
        "cells": _cells(f"Chunked Prefill | {NEXT}", f"Multi Modality | {NEXT}",
                        f"Quantization | {NEXT}"),
        "rows_added": ["Prompt LogProbs"],
        "rows_removed": ["Prompt logProbs"],
    }},
    20: {"features": {"cells": _cells(f"Expert Parallel | {NEXT}")}},
    21: {"features": {"cells": _cells(f"Pipeline Parallel | {NEXT}")}},
}  # fmt: skip

AITER = {
    # six unrelated README edits around an unchanged table report nothing
    7: {"hardware": {"rows_added": [
        "AMD AI Max and Max Pro 400/300 Series", "AMD Pro W7900", "AMD Radeon AI PRO R9700",
    ]}},
}  # fmt: skip

FLASHINFER = {
    1: _layout("gpus", "no table under heading 'GPU Support' before the next heading"),
    2: _layout("gpus", "no table under heading 'GPU Support' before the next heading"),
    # "GPU and CUDA Support": not the "GPU Support" asked for, even though it contains it
    3: _layout("gpus", "heading 'GPU Support' not found"),
    6: {
        "gpus": {  # Jetson Thor moved to its own SM 11.0 row
            "cells": _cells("Blackwell / SM 12.0, 12.1 | Example GPUs"),
            "rows_added": ["Blackwell / SM 11.0"],
        }
    },
    7: {"pin cuda": ("12.6, 12.8, 13.0, 13.1", "12.9, 13.0, and 13.4 (PyTorch nightly)")},
}

FLAGGEMS = {
    # the first table is keyed "Platform"; the replay watches the later "vendor" table
    **{n: _layout("platforms", "identity column 'vendor' not in table columns "
                  "['Platform', 'float16', 'float32', 'bfloat16']") for n in (1, 2)},
    # night 4 only re-aligns the columns: nothing; night 5 moves the table to the docs site
    5: _layout("platforms", "heading 'Supported Platforms' not found"),
}  # fmt: skip

DEEPSPARK: dict[int, dict[str, Any]] = {
    # the first two revisions have one column per engine, not the Model | Engine table
    **{n: _layout("llm", "identity column 'Engine' not in table columns "
                  "['Model', 'vLLM', 'TRT-LLM', 'TGI', 'IXUCA SDK']") for n in (1, 2)},
    # night 4 also puts every engine in `code`: the same text, no change
    4: {"llm": {"rows_added": ["MiniCPM-V / vLLM", "MiniCPM-o / vLLM"],
                "rows_removed": ["MiniCPM O / vLLM", "MiniCPM V / vLLM"]}},
    5: {"llm": {"rows_added": ["CosyVoice2-0.5B / PyTorch"]}},
    6: {"llm": {"rows_added": ["E5-V / vLLM"], "rows_removed": ["LLaVA-NeXT-based / vLLM"]}},
    7: {"llm": {"rows_added": [f"{m} / vLLM" for m in (
        "DeepSeek-OCR", "NVLM", "PaliGemma", "Phi3_v", "Qwen3_Moe", "Step3", "Ultravox",
        "XLMRoberta",
    )]}},
    8: {"llm": {"cells": _cells(  # the ✅ links point into .../vllm folders
        "Qwen-VL / vLLM | Supported", "Qwen2-VL / vLLM | Supported",
        "Qwen2.5-VL / vLLM | Supported",
    )}},
    9: {"llm": {"rows_added": ["DeepSeek-OCR / Transformers"],
                "rows_removed": ["DeepSeek-OCR / vLLM"]}},
    10: {"llm": {"rows_added": ["DeepSeek-OCR / vLLM"]}},
    11: {"llm": {"rows_added": ["MiniCPM-V-2 / vLLM", "MiniCPM-V-4 / vLLM", "MiniCPM-o-2 / vLLM"],
                 "rows_removed": ["MiniCPM-V / vLLM", "MiniCPM-o / vLLM"]}},
    12: {"llm": {"cells": _cells("DeepSeek-OCR / vLLM | IXUCA SDK",
                                 "MiniCPM-V-4 / vLLM | IXUCA SDK")}},
    13: {"llm": {"rows_added": ["CosyVoice2-0.5B / ixRT"]}},
    14: {"llm": {"rows_added": ["InternLM3 / vLLM", "Qwen3-8B / vLLM"]}},
    15: {"llm": {
        "cells": _cells(
            "DeepSeek-R1-Distill-Qwen-7B / vLLM | IXUCA SDK", "Qwen2.5-VL / vLLM | IXUCA SDK",
            "Qwen3-8B / vLLM | Supported", "Step3 / vLLM | IXUCA SDK",
        ),
        "rows_added": [f"{m} / vLLM" for m in (
            "DeepSeek-V3.1", "Qwen3-235B-A22B-Thinking", "Qwen3-30B-A3B-Thinking", "Qwen3-32B",
            "Qwen3-Next-80B-A3B",
        )],
    }},
    16: {"llm": {"rows_added": [
        "ERNIE-4.5-VL-28B-A3B-Thinking / Transformers", "IndexTTS-2 / IndexTTS",
        "PaddleOCR-VL / Transformers", "Qwen3-ASR-1.7B / Qwen-ASR",
        "Qwen3-Embedding-8B / vLLM", "Qwen3-TTS-12Hz-1.7B-Base / Qwen-TTS",
    ]}},
    17: {"llm": {"rows_added": ["CosyVoice2-0.5B / IGIE"]}},
    18: {"llm": {"rows_removed": ["CosyVoice2-0.5B / IGIE"]}},
    19: {"llm": {"rows_added": ["CosyVoice2-0.5B / IGIE"]}},
}  # fmt: skip

MLC = {
    # 21 other README edits report nothing; on night 8 the Apple column was renamed and the
    # macOS, browser and iOS rows re-worded (the browser and iOS rows now span the columns)
    8: {"platforms": {
        "cells": _cells(
            "Web Browser | AMD GPU", "Web Browser | Intel GPU", "Web Browser | NVIDIA GPU",
            "iOS / iPadOS | AMD GPU", "iOS / iPadOS | Intel GPU", "iOS / iPadOS | NVIDIA GPU",
            "macOS | AMD GPU", "macOS | Intel GPU",
        ),
        "columns_added": ["Apple GPU"],
        "columns_removed": ["Apple M1/M2 GPU"],
    }},
}  # fmt: skip


def _logos(*vendors: str, captioned: bool) -> str:
    """The logo grid as read: each logo's alt text, then its caption when it has one."""
    return " ".join(f"{v} {v}" if captioned else v for v in vendors)


FIRST_LOGOS = ("Huawei", "Cambricon", "Moore Threads", "MetaX", "T-Head", "NVIDIA", "AMD",
               "Alibaba Cloud", "AWS")  # fmt: skip
NEW_ORDER = ("NVIDIA", "Huawei", "AMD", "Cambricon", "Moore Threads", "AWS", "MetaX", "T-Head",
             "Alibaba Cloud", "Sunrise", "Hygon")  # fmt: skip
MOONCAKE = {
    5: {"text": _logos(*FIRST_LOGOS, "Sunrise", captioned=True)},
    6: {"text": _logos(*FIRST_LOGOS, "Sunrise", "Hygon", captioned=True)},
    7: {"text": _logos(*NEW_ORDER, captioned=False)},  # a Markdown grid, no captions
    9: {"text": _logos(*NEW_ORDER, "Biren Technology", captioned=False)},
}

TABLE = "tables:\n  - {{name: {}, {}, key: [{}]}}"
# history → (what the replay watches: YAML under the page, the expected changes by night)
SPECS: dict[str, tuple[str, dict[int, dict[str, Any]]]] = {
    "tile-ai__tilelang/README.md": (
        TABLE.format("backends", "heading: Platform and Backend Support", "Backend, Target"),
        BACKENDS,
    ),
    "vllm-project__vllm-ascend/README.md": (
        TABLE.format("branches", "heading: Branch", "Branch"),
        BRANCHES,
    ),
    "vllm-project__vllm-ascend/docs__source__user_guide__support_matrix__supported_features.md": (
        TABLE.format("features", "selector: table", "Feature"),
        FEATURES,
    ),
    "ROCm__aiter/README.md": (
        TABLE.format("hardware", "heading: Supported Hardware", "GPU"),
        AITER,
    ),
    "flashinfer-ai__flashinfer/README.md": (
        TABLE.format("gpus", "heading: GPU Support", "Architecture, Compute Capability")
        + "\npins:\n  cuda: 'Supported CUDA Versions:\\s*(.+?)\\s+Note:'",
        FLASHINFER,
    ),
    "flagos-ai__FlagGems/README.md": (
        TABLE.format("platforms", "heading: Supported Platforms", "vendor"),
        FLAGGEMS,
    ),
    # three revisions; only the paragraph above the table and the legend changed
    "flagos-ai__FlagGems/docs__content__en__overview__platforms.md": (
        TABLE.format("platforms", "heading: Platforms Supported", "Vendor"),
        {},
    ),
    "Deep-Spark__DeepSparkInference/README.md": (
        TABLE.format("llm", "heading: 大语言模型（LLM）", "Model, Engine"),
        DEEPSPARK,
    ),
    "mlc-ai__mlc-llm/README.md": (
        TABLE.format(
            "platforms", "selector: 'table:has(th:-soup-contains(\"NVIDIA GPU\"))'", "column 1"
        ),
        MLC,
    ),
    # the "Supported Hardware" section is a grid of vendor logos (names only in alt text):
    # watched as text, the first table after the <h2> (inside a <div> in early revisions)
    "kvcache-ai__Mooncake/README.md": (
        "text: 'h2#supported-hardware ~ table, h2#supported-hardware ~ div table'",
        MOONCAKE,
    ),
}


def _watch(yaml_text: str) -> str:
    return "\n".join("        " + line for line in yaml_text.strip().splitlines())


def _replay_site(history: str, watch: str, nights: Nights, site: FakePageServer) -> dict[int, Any]:
    config = parse_config(SITE_CONFIG.format(site=site.base_url, watch=_watch(watch)))
    seen: dict[int, Any] = {}
    read = False  # the project (a page alone) is added the first night its page is read
    for revision in revisions(history):
        site.set_page("/page.md", revision.path.read_bytes(), "text/markdown", charset="utf-8")
        report = nights.audit(config, {})
        seen[revision.night] = observe(report, "Vendor")
        first_read = not read and "error" not in seen[revision.night]
        read = read or first_read
        extra = other_kinds(report, "Vendor")
        assert extra == (["project_added"] if first_read else []), revision.night
    assert read, "the page was never read"
    return seen


@pytest.mark.parametrize("history", sorted(SPECS))
def test_a_night_by_night_replay_reports_what_the_diff_shows(
    history: str, nights: Nights, site: FakePageServer
) -> None:
    watch, expected = SPECS[history]
    seen = _replay_site(history, watch, nights, site)
    assert {n: s for n, s in seen.items() if s} == expected


# the watched pages of the shipped sources.yaml, read as it reads them: a repository file
# through the forge (the GitHub fake's contents API), revision k on night k
SHIPPED = {
    "TileLang": ("tile-ai__tilelang/README.md", BACKENDS),
    "vLLM Ascend": ("vllm-project__vllm-ascend/README.md", BRANCHES),
}


def shipped_entry(project: str) -> dict[str, Any]:
    """The project's entry in the shipped sources.yaml, without its PyPI package (no network:
    the replay is about its pages)."""
    shipped = yaml.safe_load((ROOT / "sources.yaml").read_text(encoding="utf-8"))
    entry = dict(next(p for p in shipped["projects"] if p["name"] == project))
    entry.pop("pypi", None)
    return entry


@pytest.mark.parametrize("project", sorted(SHIPPED))
def test_the_shipped_pages_replayed_through_the_github_fake(project: str, nights: Nights) -> None:
    history, expected = SHIPPED[project]
    entry = shipped_entry(project)
    # the README's page (vLLM Ascend also watches its versioning policy, of which ../shared
    # has one revision: tests/integration/test_catalog_evidence.py reads it)
    entry["pages"] = [page for page in entry["pages"] if page["path"] == "README.md"]
    config = parse_config(
        yaml.safe_dump({"settings": {"allow_private_addresses": True}, "projects": [entry]})
    )
    owner, name = entry["repo"].split("/")
    (page,) = entry["pages"]
    assert (page["repo"], page["path"]) == (entry["repo"], "README.md")
    seen: dict[int, Any] = {}
    history_revisions = revisions(history)
    first = github_repo(owner, name, history_revisions[0], "README.md")
    with FakeGitHub(first, unauth_limit=5000) as github:
        for revision in history_revisions:
            github.set_state(github_repo(owner, name, revision, "README.md"))
            report = nights.audit(config, github.env())
            seen[revision.night] = observe(report, project)
            if revision.night > 1:
                assert other_kinds(report, project) == [], revision.night
    assert {n: s for n, s in seen.items() if s} == expected
