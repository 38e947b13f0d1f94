"""snapshot.md and catalog.json from hand-made inputs: golden files, conventions, stability."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from crawler.export import (
    ExportInput,
    LicenseFacts,
    LicenseFileEntry,
    TrackedRef,
    export_files,
    render_snapshot,
    write_export,
)
from crawler.export.labels import license_cell, plain, ref_cell
from crawler.report.markdown import escape, link
from tests.support import GOLDEN as GOLDEN_DIR
from tests.support.export import AUDIT_DATE, SHA, seed_export

GOLDEN = GOLDEN_DIR / "export"


def _golden(name: str, text: str) -> None:
    """Compare with the golden file; UPDATE_GOLDEN=1 rewrites it (review the diff)."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def _rows(snapshot: str) -> dict[str, str]:
    table = [line for line in snapshot.splitlines() if line.startswith("| ")][1:]
    return {line.split(" | ")[0][2:]: line for line in table}


def test_snapshot_matches_golden_file() -> None:
    _golden("snapshot.md", export_files(seed_export())["snapshot.md"])


def test_catalog_matches_golden_file() -> None:
    _golden("catalog.json", export_files(seed_export())["catalog.json"])


def test_snapshot_has_the_seed_sentence_columns_and_one_row_per_project_in_order() -> None:
    snapshot = render_snapshot(seed_export())
    lines = snapshot.splitlines()
    assert lines[2] == (
        "The following is a dated snapshot of selected upstream releases checked on 2026-11-05. "
        "It is not a compatibility guarantee; pin the exact device, framework, driver, and "
        "runtime versions before deployment."
    )
    assert lines[4] == (
        "| Project | Latest release checked | Release date | Repository-level license |"
    )
    assert list(_rows(snapshot)) == [
        "Triton", "TileLang", "Helion", "vLLM", "SGLang", "NIXL", "vLLM Ascend",
        escape("torch-gcu"), "TritonBench", escape("MLC-LLM"), "vLLM Iluvatar plugin",
    ]  # fmt: skip


def test_row_conventions() -> None:
    rows = _rows(render_snapshot(seed_export()))
    gh = "https://github.com"
    assert rows["vLLM"] == (
        f"| vLLM | {link('v0.33.0rc3', f'{gh}/vllm-project/vllm/releases/tag/v0.33.0rc3')} "
        f"(release candidate) | 2026-11-02 | {escape('Apache-2.0')} |"
    )
    assert rows["TritonBench"].split(" | ")[1] == (
        "no tagged release; tracked by commit "
        f"{link('3b437fd', f'{gh}/meta-pytorch/tritonbench/commit/{SHA}')}"
        " (2026-11-05)"
    )
    assert rows[escape("MLC-LLM")].split(" | ")[1] == (
        "no GitHub release; tracked by tag "
        f"{link('v0.20.0', f'{gh}/mlc-ai/mlc-llm/releases/tag/v0.20.0')}"
    )
    assert (
        rows["vLLM Iluvatar plugin"].split(" | ")[1].startswith("no Gitee release; tracked by tag ")
    )
    assert rows["TileLang"].endswith("| MIT plus extra text in LICENSE |")
    assert rows["NIXL"].endswith(
        f"| {escape('Apache-2.0')} base; bundled "
        f"{escape('examples/device/ep/LICENSE-DeepEP')} has a separate license |"
    )
    # GitHub said NOASSERTION, the text reads BSD-3-Clause: the cell says what the text is
    assert rows["Helion"].endswith(f"| {escape('BSD-3-Clause')} |")
    assert "NOASSERTION" not in rows["Helion"]
    # not checked in this audit: last good values, dated
    assert rows["SGLang"].split(" | ")[1].endswith(") (stale: facts of 2026-10-30)")
    assert rows["SGLang"].split(" | ")[2] == "2026-10-20"


def test_caution_paragraph_quotes_extra_text_and_links_evidence() -> None:
    caution = next(
        line for line in render_snapshot(seed_export()).splitlines()
        if line.startswith("License caution: ")
    )  # fmt: skip
    gh = "https://github.com"
    assert (
        f"TileLang: {link('LICENSE', f'{gh}/tile-ai/tilelang/blob/main/LICENSE')} carries text "
        "beyond the MIT terms, from line 4: “"
        + escape("For a stated period this project is also under extra collaboration terms.")
        + "”."
    ) in caution
    assert (
        "Helion: NOASSERTION per GitHub, although a root license file exists; "
        f"{link('LICENSE', f'{gh}/pytorch/helion/blob/main/LICENSE')} reads as "
        f"{escape('BSD-3-Clause')}."
    ) in caution
    deepep = f"{gh}/ai-dynamo/nixl/blob/main/examples/device/ep/LICENSE-DeepEP"
    assert (
        "NIXL bundles separately licensed files: "
        f"{link('examples/device/ep/LICENSE-DeepEP', deepep)} (MIT)."
    ) in caution
    assert "Triton:" not in caution and "vLLM:" not in caution


def test_release_candidate_is_labelled_even_without_the_forge_flag() -> None:
    ref = TrackedRef("release", "v1.4.0-rc3", date(2026, 1, 1), False, None)
    assert plain(ref_cell(ref, "GitHub")) == "v1.4.0-rc3 (release candidate)"
    beta = TrackedRef("release", "v2.0.0b1", date(2026, 1, 1), True, None)
    assert plain(ref_cell(beta, "GitHub")) == "v2.0.0b1 (pre-release)"
    source = TrackedRef("release", "v2.0-source", date(2026, 1, 1), False, None)
    assert plain(ref_cell(source, "GitHub")) == "v2.0-source"
    assert plain(ref_cell(TrackedRef("none"), "GitLab")) == "no GitLab release, tag or commit found"
    assert plain(ref_cell(None, "GitHub")) == "not checked yet"


@pytest.mark.parametrize(
    ("facts", "cell"),
    [
        (LicenseFacts("NOASSERTION", verdict="unknown", root_file=LicenseFileEntry("COPYING")),
         "NOASSERTION; text of COPYING not recognised"),
        (LicenseFacts("NOASSERTION"), "NOASSERTION"),
        (LicenseFacts(None), "no license file found"),
        (LicenseFacts("MIT"), "MIT"),
        (LicenseFacts("NOASSERTION", ("MIT", "Apache-2.0"), expression="MIT OR Apache-2.0",
                      verdict="exact"), "MIT OR Apache-2.0"),
        (LicenseFacts("MIT", ("MIT",), verdict="modified",
                      root_file=LicenseFileEntry("LICENSE.md")),
         "MIT with altered text in LICENSE.md"),
        (LicenseFacts("Apache-2.0", ("Apache-2.0",), verdict="exact",
                      bundled=(LicenseFileEntry("a/LICENSE"), LicenseFileEntry("b/COPYING"),
                               LicenseFileEntry("c/LICENSE"))),
         "Apache-2.0 base; bundled a/LICENSE, b/COPYING and 1 more have separate licenses"),
        (LicenseFacts("Apache-2.0", ("Apache-2.0",), verdict="exact",
                      bundled=(LicenseFileEntry("a/LICENSE"), LicenseFileEntry("b/COPYING"))),
         "Apache-2.0 base; bundled a/LICENSE and b/COPYING have separate licenses"),
    ],
)  # fmt: skip
def test_license_cells(facts: LicenseFacts, cell: str) -> None:
    assert plain(license_cell(facts)) == cell


def test_hostile_release_name_and_path_cannot_break_the_table() -> None:
    export = seed_export()
    hostile = "v1 | <img src=x onerror=alert(1)>\n| injected | row |"
    first = export.projects[0]
    assert first.license is not None
    first = replace(
        first,
        ref=replace(first.ref, name=hostile, url="javascript:alert(1)"),
        license=replace(first.license, bundled=(LicenseFileEntry("x|y\n| z", "https://e.x/a"),)),
    )
    snapshot = render_snapshot(replace(export, projects=(first, *export.projects[1:])))
    row = _rows(snapshot)["Triton"]
    assert row.replace("\\|", "").count("|") == 5  # four cells, nothing more
    assert re.search(r"(?<!\\)<img", snapshot) is None  # only as escaped text
    assert "(<javascript" not in snapshot
    assert row.split(" | ")[1] == escape(hostile)  # no link to a non-http target
    assert (
        len([line for line in snapshot.splitlines() if line.startswith("| ")]) == 12
    )  # header + 11 rows


def test_a_future_dated_ref_is_shown_undated() -> None:
    export = seed_export()
    late = replace(export.projects[0], ref=TrackedRef("commit", "a" * 40, date(2027, 1, 1)))
    files = export_files(replace(export, projects=(late, *export.projects[1:])))
    assert _rows(files["snapshot.md"])["Triton"].split(" | ")[1:3] == [
        "no tagged release; tracked by commit aaaaaaa",
        "—",
    ]
    assert '"date": "2027' not in files["catalog.json"]


def test_same_input_gives_byte_identical_files_whatever_the_input_order(tmp_path: Path) -> None:
    export = seed_export()
    shuffled = ExportInput(
        export.audit_id,
        export.audit_date,
        tuple(
            replace(p, pages=tuple(
                replace(page, tables=tuple(replace(t, rows=t.rows[::-1]) for t in page.tables))
                for page in p.pages
            ))
            for p in reversed(export.projects)
        ),
    )  # fmt: skip
    first = write_export(export, tmp_path / "a")
    second = write_export(shuffled, tmp_path / "b")
    assert [p.name for p in first] == ["snapshot.md", "catalog.json", "catalog.schema.json"]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes()
    data = (tmp_path / "a" / "catalog.json").read_bytes()
    assert data.endswith(b"}\n") and b'\n  "audit": {\n    "date": "2026-11-05",' in data
    assert AUDIT_DATE.isoformat() in data.decode()
