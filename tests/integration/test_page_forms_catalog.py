"""Every catalog evidence file whose form the page readers handle, read as the audit reads it.

``../shared/replay/catalog`` holds a real revision of each evidence page the catalog cites, with
its form (``index.json``). Each file here is served as a file of its repository by the
GitHub-shaped fake and watched as a ``path:`` page with its form's options: lists and
paragraph enumerations as tables of items, reStructuredText and MyST list-tables, CSV, KEY=VALUE
files, MDX, an HTML table, a pin on another branch (``ref:``), prose under a heading. One audit
reads them all into a real database (SQLite and PostgreSQL); the stored snapshot must hold the
rows and pins written below from reading each file. A second night applies one small real-shaped
edit per form, and its report must list exactly those changes and nothing else.

The material is read at run time and never copied into this repository.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from crawler.config import parse_config
from crawler.model import PageSnapshot
from crawler_fakes.github import FakeGitHub
from tests.support.audits import Audits
from tests.support.evidence import evidence, files_of_forms, github_state, needs_catalog
from tests.support.page_replay import other_kinds

pytestmark = needs_catalog

GAUDI_BRANCH = "vllm/last-good-commit-for-vllm-gaudi"
NOTES = "https://docs.nvidia.com/deeplearning/tensorrt/release-notes/index.html"


@dataclass(frozen=True)
class Watch:
    """How one file is watched (the page's options) and what its first reading holds."""

    repository: str
    path: str
    options: dict[str, Any]
    check: Callable[[PageSnapshot], None]
    ref: str | None = None
    edits: list[tuple[str, str]] = field(default_factory=list)  # (old, new) for night 2


def items(page: PageSnapshot, table: str = "t") -> dict[str, tuple[str, str, str]]:
    """Item → (Label, Link, Parent) of a list read as a table."""
    (found,) = [t for t in page.tables if t.name == table]
    assert found.columns == ("Item", "Label", "Link", "Parent")
    return {row[0]: row[1:] for row in found.rows}


def rows(page: PageSnapshot, table: str) -> tuple[tuple[str, ...], dict[str, dict[str, str]]]:
    """(columns, first key cell → row as a dict) of one table."""
    (found,) = [t for t in page.tables if t.name == table]
    return found.columns, {row[0]: dict(zip(found.columns, row, strict=True)) for row in found.rows}


def _list(heading: str, **more: Any) -> dict[str, Any]:
    return {"tables": [{"name": "t", "heading": heading, "items": "list", **more}]}


def _check_triton(page: PageSnapshot) -> None:
    assert items(page) == {
        "Linux": ("Supported Platforms", "", ""),
        "NVIDIA GPUs (Compute Capability 8.0+)": ("Supported Hardware", "", ""),
        "AMD GPUs (ROCm 6.2+)": ("Supported Hardware", "", ""),
        "Under development: CPUs": ("Supported Hardware", "", ""),
    }


def _check_custom_op(page: PageSnapshot) -> None:
    found = items(page)
    assert len(found) == 7
    assert found["vllm-ascend (for Huawei Ascend NPU)"] == (
        "Official device plugins",
        "<https://github.com/vllm-project/vllm-ascend>",
        "",
    )
    # the link text reads "vllm-meta", its target vllm-metal: the key is what a reader sees
    assert found["vllm-meta (for Apple Silicon)"][:2] == (
        "Official device plugins",
        "<https://github.com/vllm-project/vllm-metal>",
    )
    assert found["vllm-kunlun (for Baidu Kunlun XPU)"][0] == "Non-official device plugins"
    assert "etc" not in " ".join(found)


def _check_liger(page: PageSnapshot) -> None:
    found = items(page)
    assert len(found) == 8
    assert found["torch >= 2.1.2"] == ("CUDA", "", "")
    assert found["triton >= 3.0.0 Install from pypi. (e.g. pip install triton==3.0.0)"][0] == "ROCm"
    assert found["CANN == 9.1.0"] == ("Ascend NPU", "", "")
    assert found[
        "triton-ascend == 3.2.2 Install from the Ascend PyPI mirror (not on default PyPI)."
    ]


def _check_flash_attention(page: PageSnapshot) -> None:
    assert items(page) == {
        "CUDA 12.0 and above.": ("Requirements", "", ""),
        "Ampere, Ada, or Hopper GPUs (e.g., A100, RTX 3090, RTX 4090, H100). For Turing GPUs "
        "(T4, RTX 2080), see the separate flash-attention-turing repo, which supports a core "
        "subset of FlashAttention features on Turing.": (
            "FlashAttention-2 with CUDA currently supports",
            "<https://github.com/ssiu/flash-attention-turing>",
            "",
        ),
        "Datatype fp16 and bf16 (bf16 requires Ampere, Ada, or Hopper GPUs).": (
            "FlashAttention-2 with CUDA currently supports",
            "",
            "",
        ),
        "All head dimensions up to 256. ~~Head dim > 192 backward requires A100/A800 or "
        "H100/H800~~. Head dim 256 backward now works on consumer GPUs (if there's no dropout) "
        "as of flash-attn 2.5.5.": ("FlashAttention-2 with CUDA currently supports", "", ""),
    }


def _check_deepgemm(page: PageSnapshot) -> None:
    found = items(page)
    assert len(found) == 10
    assert found["CUDA Toolkit:"] == ("", "", "")
    assert found["CUDA 12.3 or higher for SM90"] == ("", "", "CUDA Toolkit:")
    assert found["We highly recommend 12.9 or higher for the best performance"] == (
        "",
        "",
        "CUDA 12.3 or higher for SM90",
    )
    assert found["PyTorch 2.1 or higher"] == ("", "", "")


def _check_onednn(page: PageSnapshot) -> None:
    found = items(page)
    assert found["RISC-V 64-bit (RV64)."] == (
        "oneDNN supports platforms based on the following architectures",
        "<https://en.wikipedia.org/wiki/RISC-V>",
        "",
    )
    assert found["Intel Data Center GPU Max Series (formerly Ponte Vecchio)"] == (
        "The library is optimized for the following GPUs",
        "",
        "Intel discrete GPUs:",
    )
    assert found["AMD ROCm version 5.3 or later"][0] == (
        "The following additional requirements apply for AMD GPUs"
    )


def _check_helion(page: PageSnapshot) -> None:
    found = items(page)
    label = (
        "Helion currently targets Linux systems and requires a recent Python and PyTorch "
        "environment"
    )
    assert set(found) >= {"Linux-based OS", "Python 3.10–3.14", "PyTorch 2.9 or later"}
    assert found["PyTorch 2.9 or later"] == (label, "<https://github.com/pytorch/pytorch>", "")


def _check_torch_musa(page: PageSnapshot) -> None:
    found = items(page)
    assert len(found) == 3
    assert found["Other libraries, including muThrust and muAlg"][1:] == (
        "<https://github.com/MooreThreads/muThrust>",
        "",
    )
    assert "MUSA-SDK, including MUSA Driver, musa_toolkit, muDNN and MCCL(S4000 only);" in found


def _check_tensorrt(page: PageSnapshot) -> None:
    found = items(page)
    assert found["TensorRT v11.1.0.106"] == ("", "", "")
    assert found["cuda-13.3.0"] == ("", "", "CUDA")
    assert found["cuda-12.9.0"] == ("", "", "CUDA")
    assert found["cmake >= v3.31"][1] == "<https://github.com/Kitware/CMake/releases>"


def _check_rccl(page: PageSnapshot) -> None:
    assert items(page) == {
        "ROCm supported GPUs": ("", "", ""),
        "ROCm stack installed on the system (HIP runtime & HIP-Clang)": ("", "", ""),
    }


def _check_vllm_metal(page: PageSnapshot) -> None:
    assert items(page) == {
        "macOS 15 (Sequoia) or later, on Apple Silicon": ("", "", ""),
        "Native arm64 Python 3.12. Rosetta/x86_64 Python is not supported.": ("", "", ""),
    }


def _check_vllm_gpu(page: PageSnapshot) -> None:
    assert items(page) == {"OS: Linux": ("", "", ""), "Python: 3.10 -- 3.13": ("", "", "")}


def _check_lmdeploy_ascend(page: PageSnapshot) -> None:
    label = "We currently support running lmdeploy on"
    assert items(page) == {
        "Atlas 800T A3": (label, "", ""),
        "Atlas 800T A2": (label, "", ""),
        "Atlas 300I Duo": (label, "", ""),
    }


def _image_pin(device: str) -> Callable[[PageSnapshot], None]:
    def check(page: PageSnapshot) -> None:
        assert dict(page.pins) == {
            "image": "crpi-4crprmm5baj1v8iv.cn-hangzhou.personal.cr.aliyuncs.com/lmdeploy_dlinfer/"
            f"{device}:latest"
        }

    return check


def _text(expected: str, *, prefix: bool = False) -> Callable[[PageSnapshot], None]:
    def check(page: PageSnapshot) -> None:
        assert page.text is not None
        assert page.text.startswith(expected) if prefix else page.text == expected

    return check


def _check_neuron_vllm(page: PageSnapshot) -> None:
    assert items(page) == {"v0.24.0.1.1.0 (Beta)": ("Latest version (in 2.32.0)", "", "")}


def _check_releasecontent(page: PageSnapshot) -> None:
    columns, transformers = rows(page, "transformers")
    assert columns == ("Package", "Supported Hugging Face Transformers Versions")
    assert transformers == {
        "neuronx-distributed-inference": {
            "Package": "neuronx-distributed-inference",
            "Supported Hugging Face Transformers Versions": "== 4.57.*",
        },
        "torch-neuronx": {
            "Package": "torch-neuronx",
            "Supported Hugging Face Transformers Versions": ">= 4.52",
        },
        "vllm": {
            "Package": "vllm",
            "Supported Hugging Face Transformers Versions": ">= 4.56.0, < 5",
        },
    }
    _, protobuf = rows(page, "protobuf")
    assert len(protobuf) == 7
    assert protobuf["torch-neuron"]["Supported Protobuf versions"] == "< 3.20"
    assert protobuf["neuronx-cc"]["Supported Protobuf versions"] == "> 3"
    assert page.text == "Neuron currently supports vLLM version 0.16.0."


def _check_rocm_rst(page: PageSnapshot) -> None:
    (table,) = page.tables
    assert table.columns == ("OS", "Version", "Kernel")
    assert len(table.rows) == 15
    assert ("Debian", "12", "6.1") in table.rows
    assert ("Ubuntu", "24.04.2", "6.8 GA, 6.11 HWE") in table.rows
    assert ("", "15 SP5", "5.14.21") in table.rows  # a continuation row: its OS cell is empty


def _check_rocm_csv(page: PageSnapshot) -> None:
    columns, by_key = rows(page, "matrix")
    assert columns[0] == "ROCm Version" and len(columns) == 14
    assert sorted(columns[1:]) == sorted(
        [
            "6.3.3",
            "6.3.2",
            "6.3.1",
            "6.3.0",
            "6.2.4",
            "6.2.2",
            "6.2.1",
            "6.2.0",
            "6.1.2",
            "6.1.1",
            "6.1.0",
            "6.0.2",
            "6.0.0",
        ]
    )
    assert by_key[":doc:`RCCL <rccl:index>`"]["6.3.3"] == "2.21.5"
    assert by_key[":doc:`RCCL <rccl:index>`"]["6.0.0"] == "2.18.3"
    assert by_key[":doc:`JAX <../compatibility/ml-compatibility/jax-compatibility>`"]["6.2.0"] == (
        "0.4.26"
    )


def _check_tpu_dtypes(page: PageSnapshot) -> None:
    columns, by_key = rows(page, "matrix")
    assert columns == ("TPU Generations", "Natively Supported FP4/FP8")
    assert by_key == {
        "v5": {"TPU Generations": "v5", "Natively Supported FP4/FP8": "int8, int4, bf16"},
        "v6": {"TPU Generations": "v6", "Natively Supported FP4/FP8": "int8, int4, bf16"},
        "v7": {"TPU Generations": "v7", "Natively Supported FP4/FP8": "fp8_e4m3fn, fp8_e5m2, bf16"},
    }


def _check_tpu_models(page: PageSnapshot) -> None:
    columns, by_key = rows(page, "matrix")
    assert columns == ("Model", "Accuracy/Correctness", "Benchmark", "Type", "UnitTest")
    assert len(by_key) == 31
    # ✅ reads "yes" as in a README; ❓ is a legend mark dropped beside its word
    assert by_key["Qwen/Qwen3-Embedding-8B"] == {
        "Model": "Qwen/Qwen3-Embedding-8B",
        "Accuracy/Correctness": "yes Passing",
        "Benchmark": "Untested",
        "Type": "Embedding",
        "UnitTest": "yes Passing",
    }


def _check_pins(expected: dict[str, str]) -> Callable[[PageSnapshot], None]:
    def check(page: PageSnapshot) -> None:
        assert dict(page.pins) == expected

    return check


def _check_trtllm(page: PageSnapshot) -> None:
    columns, hardware = rows(page, "hardware")
    assert columns == ("column 1", "Hardware Compatibility")
    assert hardware["Operating System"]["Hardware Compatibility"] == (
        "TensorRT-LLM requires Linux x86_64 or Linux aarch64."
    )
    assert hardware["GPU Model Architectures"]["Hardware Compatibility"].startswith(
        "NVIDIA GB200 NVL72 <https://www.nvidia.com/en-us/data-center/gb200-nvl72/>"
    )
    columns, software = rows(page, "software")
    assert columns == ("column 1", "Software Compatibility")
    assert sorted(software) == ["Container", "Precision", "TensorRT"]
    assert software["TensorRT"]["Software Compatibility"] == (
        "10.11 <https://docs.nvidia.com/deeplearning/tensorrt/release-notes/index.html>"
    )


def _check_dynamo_mdx(page: PageSnapshot) -> None:
    _, glance = rows(page, "glance")
    # the JSX chips (<span className=...>) read as their text
    assert glance["GPU"]["Supported"] == "Ampere Ada Lovelace Hopper Blackwell"
    assert glance["TensorRT-LLM"]["Supported"] == "CUDA 13.1"
    columns, backends = rows(page, "backends")
    assert columns == ("Dynamo", "NIXL", "SGLang", "TensorRT-LLM", "vLLM")
    assert backends["v1.2.0"]["SGLang"] == "0.5.11"
    assert backends["v1.3.0-dev.1 (experimental)"]["vLLM"] == "0.22.0"


def _check_kunlun(page: PageSnapshot) -> None:
    columns, models = rows(page, "generative")
    assert columns == ("Model", "LoRA", "Note", "Piecewise Kunlun Graph", "Quantization", "Support")
    assert len(models) == 14
    assert models["Qwen2"]["Support"] == "yes" and models["Qwen2"]["Quantization"] == ""
    assert models["DeepSeek-V3.2"]["Quantization"] == "yes"
    assert items(page, "prerequisites")["PyTorch ≥ 2.5.1"] == ("", "", "Software:")


WATCHES: dict[str, Watch] = {}


def _watch(
    name: str,
    repository: str,
    path: str,
    options: dict[str, Any],
    check: Callable[[PageSnapshot], None],
    **more: Any,
) -> None:
    WATCHES[name] = Watch(repository, path, options, check, **more)


_watch(
    "triton",
    "triton-lang/triton",
    "README.md",
    _list("Compatibility"),
    _check_triton,
    edits=[
        ("- AMD GPUs (ROCm 6.2+)", "- AMD GPUs (ROCm 7.0+)"),
        ("- Linux\n", "- Linux\n- Windows (experimental)\n"),
    ],
)
_watch(
    "custom op",
    "vllm-project/vllm",
    "docs/design/custom_op.md",
    {
        "tables": [
            {
                "name": "t",
                "heading": "Register a New CustomOp in OOT Device Plugins",
                "items": "enumeration",
                "labels": ["Official device plugins", "Non-official device plugins"],
            }
        ]
    },
    _check_custom_op,
    edits=[
        (
            "(for Baidu Kunlun XPU), etc.",
            "(for Baidu Kunlun XPU), "
            "[vllm-musa](https://github.com/MooreThreads/vllm-musa) (for Moore Threads "
            "GPU), etc.",
        )
    ],
)
_watch("liger", "linkedin/Liger-Kernel", "README.md", _list("Dependencies"), _check_liger)
_watch(
    "flash attention",
    "Dao-AILab/flash-attention",
    "README.md",
    _list("NVIDIA CUDA Support"),
    _check_flash_attention,
)
_watch("deepgemm", "deepseek-ai/DeepGEMM", "README.md", _list("Requirements"), _check_deepgemm)
_watch("onednn", "uxlfoundation/oneDNN", "README.md", _list("System Requirements"), _check_onednn)
_watch("helion", "pytorch/helion", "README.md", _list("Requirements"), _check_helion)
_watch(
    "torch musa", "MooreThreads/torch_musa", "README.md", _list("Prerequisites"), _check_torch_musa
)
_watch("tensorrt", "NVIDIA/TensorRT", "README.md", _list("Prerequisites"), _check_tensorrt)
_watch("rccl", "ROCm/rccl", "README.md", _list("Requirements"), _check_rccl)
_watch(
    "vllm metal", "vllm-project/vllm-metal", "README.md", _list("Requirements"), _check_vllm_metal
)
_watch(
    "vllm gpu",
    "vllm-project/vllm",
    "docs/getting_started/installation/gpu.md",
    _list("Requirements"),
    _check_vllm_gpu,
)
_watch(
    "lmdeploy ascend",
    "InternLM/lmdeploy",
    "docs/en/get_started/ascend/get_started.md",
    {
        "tables": [
            {
                "name": "t",
                "items": "enumeration",
                "labels": ["We currently support running lmdeploy on"],
            }
        ]
    },
    _check_lmdeploy_ascend,
)
for device in ("camb", "maca"):
    _watch(
        f"lmdeploy {device}",
        "InternLM/lmdeploy",
        f"docs/en/get_started/{device}/get_started.md",
        {"pins": {"image": r"docker pull (\S+)"}},
        _image_pin(device),
    )
_watch(
    "nixl",
    "ai-dynamo/nixl",
    "README.md",
    {"text": {"heading": "Supported Platforms"}},
    _text(
        "NIXL is supported on a Linux environment only. It is tested on Ubuntu "
        "(22.04/24.04) and Fedora. macOS and Windows are not currently supported; use a "
        "Linux host or container/VM."
    ),
    edits=[("and Fedora.", "and Fedora 42.")],
)
_watch(
    "glow",
    "pytorch/glow",
    "README.md",
    {
        "tables": [
            {
                "name": "t",
                "heading": "System Requirements",
                "items": "enumeration",
                "labels": ["Glow builds and runs on"],
            }
        ]
    },
    lambda page: _equal(
        items(page),
        {
            "macOS": ("Glow builds and runs on", "", ""),
            "Linux": ("Glow builds and runs on", "", ""),
        },
    ),
)
_watch(
    "neuron vllm",
    "aws-neuron/aws-neuron-sdk",
    "release-notes/components/vllm-neuron.rst",
    {"tables": [{"name": "t", "items": "enumeration", "labels": ["Latest version (in 2.32.0)"]}]},
    _check_neuron_vllm,
)
_watch(
    "neuron redirect",
    "aws-neuron/aws-neuron-sdk",
    "vllm-neuron/docs/guides/reference-feature-model-compatibility.md",
    {"text": {"heading": "Feature and model compatibility"}},
    _text(
        "Feature support can vary by model architecture. Each model recipe page includes a "
        "Features table listing all supported capabilities for that model.",
        prefix=True,
    ),
)
_watch(
    "spyre models",
    "vllm-project/vllm-spyre",
    "docs/user_guide/supported_models.md",
    {"text": {"heading": "Generative Models"}},
    _text("Models with continuous batching support for text generation tasks."),
)
_watch(
    "neuron release content",
    "aws-neuron/aws-neuron-sdk",
    "release-notes/releasecontent.rst",
    {
        "tables": [
            {
                "name": "transformers",
                "heading": "Supported Hugging Face Transformers Versions",
                "key": ["Package"],
            },
            {"name": "protobuf", "heading": "Supported Protobuf Versions", "key": ["Package"]},
        ],
        "text": {"heading": "Supported vLLM Versions"},
    },
    _check_releasecontent,
    edits=[
        (
            "| torch-neuronx                    | >= 3.20",
            "| torch-neuronx                    | >= 3.21",
        )
    ],
)
_watch(
    "neuron 2.32",
    "aws-neuron/aws-neuron-sdk",
    "release-notes/2.32.0.rst",
    {"text": {"heading": "Component Release Notes"}},
    _text(
        "Select a card below to review detailed release notes for each component of the "
        "Neuron SDK version 2.32.0.",
        prefix=True,
    ),
)
_watch(
    "rocm matrix",
    "ROCm/ROCm",
    "docs/compatibility/compatibility-matrix.rst",
    {
        "tables": [
            {
                "name": "os",
                "heading": "Operating systems and kernel versions",
                "key": ["OS", "Version"],
            }
        ]
    },
    _check_rocm_rst,
)
_watch(
    "rocm csv",
    "ROCm/ROCm",
    "docs/compatibility/compatibility-matrix-historical-6.0.csv",
    {"tables": [{"name": "matrix", "key": ["ROCm Version"]}]},
    _check_rocm_csv,
)
_watch(
    "tpu dtypes",
    "vllm-project/tpu-inference",
    "support_matrices/nightly/hardware_acceleration_and_dtype_support_matrix.csv",
    {"tables": [{"name": "matrix", "key": ["TPU Generations"]}]},
    _check_tpu_dtypes,
    edits=[('v7,"fp8_e4m3fn, fp8_e5m2, bf16"', 'v7,"fp8_e4m3fn, fp8_e5m2, bf16, fp4"')],
)
_watch(
    "tpu models",
    "vllm-project/tpu-inference",
    "support_matrices/nightly/v7x/default/model_support_matrix.csv",
    {"tables": [{"name": "matrix", "key": ["Model"]}]},
    _check_tpu_models,
)
_watch(
    "musa pins",
    "MooreThreads/vllm-musa",
    "third_party/PINS",
    {"form": "keyvalue", "pins": "all"},
    _check_pins(
        {
            "VLLM_TAG": "v0.28.0",
            "VLLM_COMMIT": "2cf0a6915ce544dc493a0990f2ea38d81601128a",
            "FLASHINFER_REPOSITORY": "https://github.com/yeahdongcn/flashinfer.git",
            "FLASHINFER_COMMIT": "5e4b43c411a5280329d8b1fd362b2656d389f3ef",
        }
    ),
    edits=[("VLLM_TAG=v0.28.0", "VLLM_TAG=v0.29.0")],
)
_watch(
    "mlu pins",
    "sgl-project/sglang",
    "scripts/ci/mlu/component_versions.properties",
    {"pins": ["TORCH_MLU_VERSION", "CNTOOLKIT_VERSION", "TRITON_VERSION"]},
    _check_pins(
        {
            "TORCH_MLU_VERSION": "1.34.1+torch2.13.0",
            "CNTOOLKIT_VERSION": "4.7.6-1",
            "TRITON_VERSION": "3.4.0+mlu2.1.3",
        }
    ),
)
_watch(
    "metal install",
    "vllm-project/vllm-metal",
    "install.sh",
    {"form": "keyvalue", "pins": ["VLLM_VERSION"]},
    _check_pins({"VLLM_VERSION": "0.27.1"}),
)
_watch(
    "trtllm matrix",
    "NVIDIA/TensorRT-LLM",
    "docs/source/reference/support-matrix.md",
    {
        "tables": [
            {"name": "hardware", "heading": "Hardware", "key": ["column 1"]},
            {"name": "software", "heading": "Software", "key": ["column 1"]},
        ]
    },
    _check_trtllm,
    edits=[(f"[10.11]({NOTES})", f"[10.13]({NOTES})")],
)
_watch(
    "dynamo mdx",
    "ai-dynamo/dynamo",
    "docs/reference/compatibility.mdx",
    {
        "tables": [
            {
                "name": "glance",
                "heading": "Supported Platforms (At a Glance)",
                "key": ["Requirement"],
            },
            {"name": "backends", "heading": "Backend Dependencies", "key": ["Dynamo"]},
        ]
    },
    _check_dynamo_mdx,
    edits=[("| **v1.2.0** | `0.5.11` |", "| **v1.2.0** | `0.5.12` |")],
)
_watch(
    "kunlun",
    "baidu/vLLM-Kunlun",
    "README.md",
    {
        "tables": [
            {"name": "generative", "heading": "Generaltive Models", "key": ["Model"]},
            {"name": "prerequisites", "heading": "Prerequisites", "items": "list"},
        ]
    },
    _check_kunlun,
)


def _equal(seen: object, expected: object) -> None:
    assert seen == expected


# the forms these readers handle, and the files that take them (every one is watched above)
FORMS = ("list", "paragraph", "rst table", "myst list-table", "csv", "key=value", "html table")


def test_every_file_of_the_forms_read_here_is_watched() -> None:
    watched = {(w.repository, w.path) for w in WATCHES.values()}
    assert set(files_of_forms(FORMS)) <= watched
    assert evidence("ai-dynamo/dynamo", "docs/reference/compatibility.mdx").form == "markdown table"


GAUDI_COMMIT = "14617c2b6c1257ac0d6c7b5e05b195ca30013827"  # the file's one line, read by eye
NEW_COMMIT = "0123456789abcdef0123456789abcdef01234567"
_watch(
    "gaudi stable commit",
    "vllm-project/vllm-gaudi",
    "VLLM_STABLE_COMMIT",
    {"pins": {"commit": r"\b([0-9a-f]{40})\b"}},
    _check_pins({"commit": GAUDI_COMMIT}),
    ref=GAUDI_BRANCH,
    edits=[(GAUDI_COMMIT, NEW_COMMIT)],
)


def _config() -> str:
    pages = []
    for name, watch in WATCHES.items():
        page: dict[str, Any] = {"name": name, "repo": watch.repository, "path": watch.path}
        if watch.ref:
            page["ref"] = watch.ref
        pages.append(page | watch.options)
    project = {"name": "Catalog", "homepage": "https://catalog.example", "pages": pages}
    return yaml.safe_dump({"settings": {"allow_private_addresses": True}, "projects": [project]})


def _state(edited: bool) -> Any:
    files: dict[tuple[str, str], str] = {}
    on_branch: dict[tuple[str, str, str], str] = {}
    for watch in WATCHES.values():
        text = evidence(watch.repository, watch.path).text()
        for old, new in watch.edits if edited else ():
            assert text.count(old) == 1, (watch.path, old)
            text = text.replace(old, new)
        if watch.ref:
            on_branch[(watch.repository, watch.ref, watch.path)] = text
            files[(watch.repository, watch.path)] = "0" * 40 + "\n"  # the default branch's
        else:
            files[(watch.repository, watch.path)] = text
    return github_state(files, on_branch)


def test_each_evidence_file_reads_as_its_form_then_one_edit_each_is_exactly_reported(
    db_url: str, tmp_path: Path
) -> None:
    config = parse_config(_config())
    with FakeGitHub(_state(edited=False), unauth_limit=5000) as github:
        audits = Audits(github, db_url, tmp_path, github.env())
        try:
            first = audits.audit(config)
            assert [e["error"] for e in first.report.as_json()["errors"]] == []
            state = audits.store.states_as_of(first.audit_id, include_own=True)["Catalog"]
            pages = {page.name: page for page in state.snapshot.pages}
            assert sorted(pages) == sorted(WATCHES)
            for name, watch in WATCHES.items():
                watch.check(pages[name])
            gaudi = pages["gaudi stable commit"].url
            assert gaudi.endswith(
                f"/vllm-project/vllm-gaudi/blob/{GAUDI_BRANCH}/VLLM_STABLE_COMMIT"
            )
            github.set_state(_state(edited=True))
            second = audits.audit(config).report.as_json()
        finally:
            audits.close()
    assert other_kinds(second, "Catalog") == []
    assert _changes(second) == {
        "triton": {
            "t": {
                "added": ["Windows (experimental)"],
                "reworded": [("AMD GPUs (ROCm 6.2+)", "AMD GPUs (ROCm 7.0+)")],
            }
        },
        "custom op": {"t": {"added": ["vllm-musa (for Moore Threads GPU)"]}},
        "musa pins": {"pin VLLM_TAG": ("v0.28.0", "v0.29.0")},
        "gaudi stable commit": {"pin commit": (GAUDI_COMMIT, NEW_COMMIT)},
        "tpu dtypes": {
            "matrix": {
                "cells": [("v7", "Natively Supported FP4/FP8", "fp8_e4m3fn, fp8_e5m2, bf16, fp4")]
            }
        },
        "neuron release content": {
            "protobuf": {"cells": [("torch-neuronx", "Supported Protobuf versions", ">= 3.21")]}
        },
        "trtllm matrix": {
            "software": {
                "cells": [
                    (
                        "TensorRT",
                        "Software Compatibility",
                        "10.13 <https://docs.nvidia.com/deeplearning/tensorrt/release-notes/index.html>",
                    )
                ]
            }
        },
        "dynamo mdx": {"backends": {"cells": [("v1.2.0", "SGLang", "0.5.12")]}},
        "nixl": {
            "text": "NIXL is supported on a Linux environment only. It is tested on Ubuntu "
            "(22.04/24.04) and Fedora 42. macOS and Windows are not currently supported; "
            "use a Linux host or container/VM."
        },
    }
    summaries = {c["details"]["page"]: c["summary"] for c in second["changes"]}
    assert summaries["triton"] == (
        "triton: list 't': 1 item added ('Windows (experimental)' under 'Supported "
        "Platforms'); 1 item reworded ('AMD GPUs (ROCm 6.2+)' → 'AMD GPUs (ROCm 7.0+)')"
    )
    assert summaries["custom op"] == (
        "custom op: list 't': 1 item added ('vllm-musa (for Moore Threads GPU)' under "
        "'Non-official device plugins')"
    )


def _changes(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per page: per table the items added, removed and reworded (a list) or the cells
    changed (key, column, new value); per pin (before, after); the watched text as it reads."""
    seen: dict[str, dict[str, Any]] = {}
    for change in report["changes"]:
        details = change["details"]
        page = seen.setdefault(details["page"], {})
        if change["kind"] == "table_changed":
            table: dict[str, Any] = {}
            keys = details["key_columns"]
            for part, name in (("rows_added", "added"), ("rows_removed", "removed")):
                if details[part]:
                    table[name] = sorted(" / ".join(r[k] for k in keys) for r in details[part])
            if details.get("items_reworded"):
                table["reworded"] = [(r["before"], r["after"]) for r in details["items_reworded"]]
            if details["cells_changed"]:
                table["cells"] = sorted(
                    (" / ".join(c["key"].values()), c["column"], c["after"])
                    for c in details["cells_changed"]
                )
            for part in ("columns_added", "columns_removed"):
                if details[part]:
                    table[part] = sorted(details[part])
            page[details["table"]] = table
        elif change["kind"] == "pin_changed":
            page[f"pin {details['pin']}"] = (change["before"], change["after"])
        else:
            page["text"] = change["after"]
    return seen
