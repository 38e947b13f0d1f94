"""The top of a README, read for a successor (crawler.analysis.successor.readme_top), and which
repositories have their README read at all (crawler.diff.health.wants_readme). Pure.

Guards the gap "a repository whose README says it moved": only the banner before the first
heading, or the title's own section, counts; what a README says further down (dependencies,
forks, partners, "the docs moved to") is not a successor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from crawler.analysis.successor import README_KEPT, Successor, readme_top, successor_in
from crawler.diff.health import successor_of, wants_readme
from crawler.model import Commit, ProjectSnapshot, ReadmeTop, RepoInfo
from tests.support import SHARED

GLOW = SHARED / "replay/catalog/pytorch__glow/README@52be32c686.md"
TENSORRT = SHARED / "replay/catalog/NVIDIA__TensorRT/README@82d1dca801.md"
NOW = datetime(2026, 12, 5, tzinfo=UTC)
YEAR = timedelta(days=365)


def _read(readme: str, full_name: str = "HabanaAI/vllm-fork") -> Successor | None:
    url = f"https://github.com/{full_name}"
    return successor_in(readme_top(readme), url, full_name, "github", repository_only=True)


def test_a_warning_banner_before_the_title_names_the_successor() -> None:
    readme = (
        "> [!WARNING]\n> This fork is **superseded by**\n"
        "> [vllm-gaudi](https://github.com/vllm-project/vllm-gaudi).\n\n# vLLM\n\nServing.\n"
    )
    assert _read(readme) == Successor(
        "superseded",
        "superseded by",
        "https://github.com/vllm-project/vllm-gaudi",
        "https://github.com/vllm-project/vllm-gaudi",
    )


def test_the_title_section_counts_when_nothing_stands_before_the_title() -> None:
    readme = "# torch_x\n\n[![ci](https://ci/badge.svg)](https://ci)\n\nMoved to accel/torch_y.\n"
    assert readme_top(readme) == "torch_x\nMoved to accel/torch_y."
    assert _read(readme, "accel/torch_x") == Successor(
        "moved", "moved to", "accel/torch_y", "https://github.com/accel/torch_y"
    )


def test_a_reference_link_defined_below_the_top_still_names_the_successor() -> None:
    """Only the top's inline text is parsed, but the whole text's blocks are: a link whose
    target is defined at the bottom of the README (as badge-heavy READMEs do) reads as in a
    whole parse."""
    readme = (
        "# torch_x\n\nDevelopment continues at [torch_y][next], and `code` *stays*.\n\n"
        "## Build\n\nSee [docs][next].\n\n[next]: https://github.com/accel/torch_y\n"
    )
    assert readme_top(readme) == (
        "torch_x\nDevelopment continues at [torch_y](https://github.com/accel/torch_y), and "
        "code stays."
    )
    assert _read(readme, "accel/torch_x") == Successor(
        "moved",
        "development continues at",
        "https://github.com/accel/torch_y",
        "https://github.com/accel/torch_y",
    )


def test_an_html_banner_names_the_successor_through_its_link() -> None:
    readme = (
        '<p align="center"><b>Note:</b> this project moved to '
        '<a href="https://github.com/org/next">its new home</a></p>\n\n# old\n'
    )
    assert (
        readme_top(readme)
        == "Note: this project moved to [its new home](https://github.com/org/next)"
    )
    found = _read(readme, "org/old")
    assert found is not None and found.url == "https://github.com/org/next"


@pytest.mark.parametrize(
    "readme",
    [
        # after the title's section: an install note, not a notice
        "# vLLM\n\nServing.\n\n## Docs\n\nThe docs moved to https://docs.vllm.ai\n",
        # a preamble says something: the top ends at the first heading
        "A serving engine.\n\n# Partners\n\nSuperseded by nothing; replaced by acme/engine.\n",
        # code, an indented block and an HTML comment are not prose
        "# x\n\n```sh\n# moved to org/y\n```\n\n    replaced by org/z\n\n<!-- moved to org/w -->\n",
    ],
)
def test_what_stands_below_the_top_or_in_code_names_no_successor(readme: str) -> None:
    assert _read(readme, "org/x") is None


def test_glows_recorded_readme_names_no_successor() -> None:
    """Glow's README (sunset announced in an issue, not in the README): its top is its first
    paragraph, and the partners and dependencies it names further down are not read."""
    if not GLOW.exists():
        pytest.skip("../shared not present")
    top = readme_top(GLOW.read_text(encoding="utf-8"))
    assert top.startswith("Glow is a machine learning compiler and execution engine")
    assert "\n" not in top and "Partners" not in top
    assert successor_in(top, "https://github.com/pytorch/glow", "pytorch/glow", "github") is None


def test_a_huge_hostile_readme_is_read_to_its_cap() -> None:
    readme = "\u202e> moved to org/" + "a" * 50 + " " + "word " * 100_000
    top = readme_top(readme)
    assert len(top) == README_KEPT and "\u202e" not in top
    assert readme_top("# t\n\n" + "x" * 20_000 + " moved to org/late\n") == "t\n" + "x" * (
        README_KEPT - 2
    )


def _snapshot(
    *, archived: bool = False, head: str = "2026-11-20T00:00:00Z", description: str | None = None
) -> ProjectSnapshot:
    repo = RepoInfo(
        1, "org/x", "main", archived, "https://github.com/org/x", description=description
    )
    return ProjectSnapshot("x", repo=repo, head=Commit("a" * 40, head, "https://c"))


def test_only_an_archived_or_dormant_repository_without_a_successor_has_its_readme_read() -> None:
    assert wants_readme(_snapshot(archived=True), NOW, YEAR)
    assert wants_readme(_snapshot(head="2024-05-11T00:00:00Z"), NOW, YEAR)  # dormant
    assert not wants_readme(_snapshot(), NOW, YEAR)  # lively
    said = "Superseded by org/y"
    assert not wants_readme(_snapshot(archived=True, description=said), NOW, YEAR)
    assert not wants_readme(ProjectSnapshot("x"), NOW, YEAR)  # no repository


def test_the_description_is_read_before_the_readme() -> None:
    readme = ReadmeTop("Moved to org/from-readme", "https://github.com/org/x/blob/main/README.md")
    both = ProjectSnapshot(
        "x",
        repo=RepoInfo(
            1,
            "org/x",
            "main",
            True,
            "https://github.com/org/x",
            description="Moved to org/from-description",
        ),
        readme=readme,
    )
    found = successor_of(both)
    assert found is not None and found.target == "org/from-description"


def test_an_api_replaced_by_a_documentation_page_is_no_successor() -> None:
    """A README's top speaks of features too: "…APIs have been removed, replaced by [Strongly
    Typed Networks](https://docs…)" names no successor of the project (read in TensorRT's real
    README, a form the reader was not written against: it was reported as superseded)."""
    readme = (
        "# TensorRT\n\nWeakly-typed networks and related APIs have been removed, replaced by "
        "[Strongly Typed Networks](https://docs.nvidia.com/tensorrt/advanced.html#typed).\n"
    )
    assert _read(readme, "NVIDIA/TensorRT") is None
    snapshot = ProjectSnapshot(
        "x",
        repo=RepoInfo(1, "NVIDIA/TensorRT", "main", True, "https://github.com/NVIDIA/TensorRT"),
        readme=ReadmeTop(readme_top(readme), "https://github.com/NVIDIA/TensorRT"),
    )
    assert successor_of(snapshot) is None
    moved = readme.replace("APIs have been removed", "The project moved").replace(
        "replaced by [Strongly Typed Networks](https://docs.nvidia.com/tensorrt/advanced.html#typed)",
        "superseded by [TensorRT-X](https://github.com/NVIDIA/TensorRT-X)",
    )
    assert _read(moved, "NVIDIA/TensorRT") == Successor(
        "superseded", "superseded by", "https://github.com/NVIDIA/TensorRT-X",
        "https://github.com/NVIDIA/TensorRT-X",
    )  # fmt: skip


def test_tensorrts_recorded_readme_names_no_successor() -> None:
    if not TENSORRT.exists():
        pytest.skip("../shared not present")
    assert _read(TENSORRT.read_text(encoding="utf-8"), "NVIDIA/TensorRT") is None
