"""Issue 18, defects 6-10: real pages read as a person reading the rendered page would.

Each test reads real revisions from ../shared/replay/pages at run time (skipped when absent);
where the real material has no example of a shape (MkDocs tabs, template placeholders), the
test writes its own small page.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from crawler.analysis.pages import ExtractionError, normalise_cell, read_page
from crawler.analysis.pages.document import extract_table
from crawler.analysis.pages.markdown import parse_markdown
from crawler.analysis.pages.sections import page_text
from crawler.config import PageSpec, TableSpec, load_config
from crawler.diff.pages import diff_table
from crawler.export import (
    ExportError,
    ExportInput,
    Pin,
    ProjectInput,
    TableMapping,
    WatchedPage,
    WatchedTable,
    build_catalog,
)
from crawler.export.validate import validate_catalog
from crawler.model import ExtractedTable
from tests.support import ROOT
from tests.support.page_replay import needs_replay, revisions

pytestmark = needs_replay
AUDIT = date(2026, 12, 1)
TILELANG = "tile-ai__tilelang/README.md"
BRANCHES = "vllm-project__vllm-ascend/README.md"
FEATURES = (
    "vllm-project__vllm-ascend/docs__source__user_guide__support_matrix__supported_features.md"
)


def _table(text: str, *, key: tuple[str, ...], heading: str | None = None,
           selector: str | None = None) -> ExtractedTable:  # fmt: skip
    soup = parse_markdown(text).soup
    return extract_table(soup, name="t", heading=heading, selector=selector, key=key)


def _latest(history: str) -> str:
    return revisions(history)[-1].text()


# --- 6: a row is who its key cells say, in visible text ----------------------------------


def test_a_link_target_edit_in_a_key_cell_is_no_row_change() -> None:
    """aiter's "Framework Integration" table links each framework name. Give those links a
    trailing '#' (the edit the issue saw a real commit undo), then serve the real revision:
    the rows are the same rows, keyed by the names a reader sees."""
    real = _latest("ROCm__aiter/README.md")
    frameworks = ("vllm-project/vllm", "sgl-project/sglang", "ROCm/ATOM", "ROCm/jax-aiter")
    hashed = real
    for repo in frameworks:
        link = f"(https://github.com/{repo})"
        assert hashed.count(link) >= 1
        hashed = hashed.replace(link, f"(https://github.com/{repo}#)")
    before = _table(hashed, heading="Framework Integration", key=("Framework",))
    after = _table(real, heading="Framework Integration", key=("Framework",))
    assert [row[0] for row in after.rows] == [
        "ATOM",
        "JAX",
        "SGLang",
        "Various customer proprietary inference engines",
        "vLLM",
    ]
    assert diff_table(before, after) is None


# --- 7: a heading matches exactly, or the error lists the page's headings -----------------


def test_a_heading_that_only_contains_the_asked_words_is_not_taken() -> None:
    """``heading: Hardware`` on aiter's README: main took the "Supported Hardware" table; now
    it is the documented layout error, naming the headings the page does have."""
    real = _latest("ROCm__aiter/README.md")
    with pytest.raises(ExtractionError) as caught:
        _table(real, heading="Hardware", key=("GPU",))
    message = str(caught.value)
    assert message.startswith(
        "table 't': page layout changed: heading 'Hardware' not found; the page's headings: "
    )
    assert "'Supported Hardware'" in message and "'Framework Integration'" in message
    # exact, as a person reads it: case, spacing and a decorating emoji aside
    assert _table(real, heading="  supported   HARDWARE ", key=("GPU",)).rows[0][0] == (
        "AMD AI Max and Max Pro 400/300 Series"
    )
    mooncake = revisions("kvcache-ai__Mooncake/README.md")[0].text()  # <h2>🖥️ Supported Hardware
    logos = _table(mooncake, heading="Supported Hardware", key=("Huawei Huawei",))
    assert (logos.columns[0], len(logos.columns), logos.rows) == ("Huawei Huawei", 9, ())
    assert "Moore Threads Moore Threads" in logos.columns  # logo alt text, then its caption


def test_a_missing_heading_lists_at_most_thirty_headings() -> None:
    page = "".join(f"## Section {n}\n\ntext\n\n" for n in range(40)) + "## Evil 'quote\n"
    with pytest.raises(ExtractionError) as caught:
        _table(page, heading="Section", key=("x",))
    assert str(caught.value).endswith("'Section 28', 'Section 29', +11 more")


# --- 8: what real docs contain ------------------------------------------------------------


def test_legend_marks_read_as_the_words_beside_them() -> None:
    """vLLM Ascend's feature matrix writes "🟢 Functional", "🔵 Experimental", "🟡 Planned":
    the colour only decorates the word a reader goes by (main kept the emoji in the cell)."""
    table = _table(_latest(FEATURES), selector="table", key=("Feature",))
    status = table.columns.index("Status")
    assert sorted({row[status] for row in table.rows}) == ["Experimental", "Functional", "Planned"]
    first = _table(revisions(FEATURES)[0].text(), selector="table", key=("Feature",))
    supported = {row[0]: row[first.columns.index("Supported")] for row in first.rows}
    assert set(supported.values()) == {"yes", "no", "yes (LLaVA/Qwen2-vl/Qwen2-audio/internVL)"}
    assert (supported["LoRA"], supported["LogProbs"]) == ("no", "yes")  # ✗ and ✅


def test_a_partial_mark_is_not_read_as_full_support() -> None:
    """FlagGems' platform page: ✅ supported, ☑️ partially supported (its legend). Main read
    both as "yes"."""
    page = revisions("flagos-ai__FlagGems/docs__content__en__overview__platforms.md")[-1].text()
    table = _table(page, heading="Platforms Supported", key=("Vendor",))
    state = {row[0]: row[table.columns.index("State")] for row in table.rows}
    assert (state["AIPU"], state["ARM(CPU)"], state["NVIDIA"], state["AMD"]) == (
        "checked box", "checked box", "yes", "in progress",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("cell", "reads"),
    [
        ("√", "yes"), ("×", "no"), ("✅", "yes"), ("✗", "no"), ("🚧 WIP", "in progress WIP"),
        ("🟢", "green"), ("🔵", "blue"), ("🟡", "yellow"), ("🟠", "orange"), ("❔", "unknown"),
        ("🟢 Functional", "Functional"), ("🟠 Partial", "Partial"), ("❔ unclear", "unclear"),
        ("4×200 Gbps", "4×200 Gbps"), ("√2", "√2"), ("8 × H100", "8 × H100"),
        ("× not yet", "no not yet"),
    ],
)  # fmt: skip
def test_one_vocabulary_for_status_marks(cell: str, reads: str) -> None:
    assert normalise_cell(cell) == reads


def test_maths_signs_in_page_text_stay_maths() -> None:
    mooncake = revisions("kvcache-ai__Mooncake/README.md")[0].text()
    assert "4×200 Gbps and 8×400 Gbps" in page_text(parse_markdown(mooncake).soup)


def test_angle_bracket_words_keep_their_text() -> None:
    """``rfc/<feature-name>`` in vLLM Ascend's branch table is a name a reader sees, not an
    HTML tag: main rendered it ``rfc/`` and exported the version range ``rfc/``."""
    table = _table(_latest(BRANCHES), heading="Branch", key=("Branch",))
    assert [row[0] for row in table.rows] == [
        "main", "releases/v0.13.0", "releases/v0.18.0", "releases/v0.23.0", "rfc/<feature-name>",
    ]  # fmt: skip
    catalog = build_catalog(_export("vLLM Ascend", BRANCHES, -1))
    assert sorted(r["version_range"] for r in catalog["integrations"]) == [
        "main", "releases/v0.13.0", "releases/v0.18.0", "releases/v0.23.0", "rfc/<feature-name>",
    ]  # fmt: skip
    inline = _table(
        "| a | b |\n|---|---|\n| <b>bold</b> x | y<br/>z |\n", selector="table", key=("a",)
    )
    assert inline.rows == (("bold x", "y z"),)  # real tags still render; <br/> parts words


MKDOCS = """# Install

=== "pip"

    | Package | Version |
    |---|---|
    | vllm | {{main_vllm_commit}} |
    | vllm-ascend | 0.9.1 |

    ```
    === "not a tab: code"
    ```

=== "From source"

    !!! note "Build"
        | Package | Version |
        |---|---|
        | torch | 2.5.1 |
"""


def test_tables_inside_mkdocs_tabs_and_admonitions_are_found() -> None:
    soup = parse_markdown(MKDOCS).soup
    tables = soup.find_all("table")
    assert len(tables) == 2
    pip = extract_table(soup, name="pip", selector="table", key=("Package",))
    assert pip.rows == (
        ("vllm", "{{main_vllm_commit}} (template placeholder)"),
        ("vllm-ascend", "0.9.1"),
    )
    assert soup.find("code").get_text() == '=== "not a tab: code"\n'  # fenced code untouched
    assert "From source Build" in page_text(soup)


def test_a_placeholder_cell_is_no_version_in_the_catalog() -> None:
    spec = PageSpec.model_validate(
        {
            "name": "install",
            "url": "https://docs.example/install.md",
            "tables": [
                {
                    "name": "pip",
                    "selector": "table",
                    "key": ["Package"],
                    "integrations": {
                        "project": {"value": "Plugin"},
                        "platform": {"value": "Huawei Ascend"},
                        "status": {"value": "official plugin"},
                        "version": "Version",
                        "layer": "serving",
                    },
                }
            ],
        }
    )
    snapshot = read_page(spec, MKDOCS, "text/markdown", spec.url or "")
    table = snapshot.tables[0]
    page = WatchedPage(
        "install", spec.url or "", AUDIT,
        (WatchedTable("pip", table.columns, table.key_columns, table.rows,
                      TableMapping.from_spec(spec.tables[0])),),
        (),
    )  # fmt: skip
    project = ProjectInput("Plugin", 0, None, "GitHub", None, None, AUDIT, True, pages=(page,))
    catalog = build_catalog(ExportInput(1, AUDIT, (project,)))
    versions = {r["id"].rsplit("/", 1)[1]: r["version_range"] for r in catalog["integrations"]}
    assert versions == {"vllm": None, "vllm-ascend": "0.9.1"}


def test_a_placeholder_pin_is_no_version_of_a_page_record() -> None:
    spec = PageSpec.model_validate(
        {
            "name": "readme",
            "url": "https://docs.example/install.md",
            "pins": {"vllm": r"vllm==(\S+)"},
            "integration": {
                "project": "Plugin", "platform": "Huawei Ascend", "status": "official plugin",
                "layer": "serving", "version": "vllm",
            },
        }
    )  # fmt: skip
    snapshot = read_page(spec, "pip install vllm=={{main_vllm_commit}}\n", None, "x.md")
    assert snapshot.pins == (("vllm", "{{main_vllm_commit}} (template placeholder)"),)
    page = WatchedPage("readme", spec.url or "", AUDIT, (), (Pin("vllm", snapshot.pins[0][1]),),
                       spec.integration)  # fmt: skip
    project = ProjectInput("Plugin", 0, None, "GitHub", None, None, AUDIT, True, pages=(page,))
    (record,) = build_catalog(ExportInput(1, AUDIT, (project,)))["integrations"]
    assert record["version_range"] is None


# --- 9 and 10: the shipped mappings against every real revision ---------------------------


def _export(project: str, history: str, night: int) -> ExportInput:
    """The shipped sources.yaml's pages of ``project`` read from one real revision (index
    ``night``, Python style), as ``crawler export`` would see them."""
    config = load_config(ROOT / "sources.yaml")
    spec = config.project(project)
    text = revisions(history)[night].text()
    pages = []
    for page_spec in spec.pages:
        if page_spec.path != "README.md":  # the history is the README's (vLLM Ascend watches
            continue  # its versioning policy too: tests/integration/test_catalog_evidence.py)
        url = f"https://github.com/{page_spec.where}"
        snapshot = read_page(page_spec, text, None, url)
        tables = tuple(
            WatchedTable(t.name, t.columns, t.key_columns, t.rows, TableMapping.from_spec(ts))
            for t, ts in zip(snapshot.tables, page_spec.tables, strict=True)
        )
        pins = tuple(Pin(name, value) for name, value in snapshot.pins)
        pages.append(WatchedPage(page_spec.name, url, AUDIT, tables, pins, page_spec.integration))
    projects = [
        ProjectInput(project, 0, None, "GitHub", None, None, AUDIT, True, pages=tuple(pages))
    ]
    if project == "vLLM Ascend":  # its rows are vLLM's integrations: vLLM must be in the catalog
        projects.append(ProjectInput("vLLM", 1, None, "GitHub", None, None, None, False))
    return ExportInput(1, AUDIT, tuple(projects))


def _without_combine(export: ExportInput) -> ExportInput:
    """The same export with the TileLang table's mapping as main had it (no combine rule)."""
    project = export.projects[0]
    page = project.pages[0]
    table = page.tables[0]
    assert table.mapping is not None and table.mapping.combine == "strongest"
    refuse = replace(table, mapping=replace(table.mapping, combine="refuse"))
    pages = (replace(page, tables=(refuse,)),)
    return replace(export, projects=(replace(project, pages=pages),))


def test_two_tilelang_rows_on_one_platform_must_say_how_they_combine() -> None:
    """TileLang's CUDA (Primary) and CuTe DSL (Experimental) rows both map to "NVIDIA GPU":
    without a rule the export refuses, naming both rows; the shipped mapping says
    ``combine: strongest``, so the catalog claims upstream with both rows as evidence."""
    export = _export("TileLang", TILELANG, -1)
    with pytest.raises(ExportError) as caught:
        build_catalog(_without_combine(export))
    assert caught.value.problems == [
        "project 'tilelang' on platform 'nvidia-gpu': the records contradict each other "
        "(table 'backends' row 'NVIDIA CUDA / cuda' says 'upstream' ('Primary'); table "
        "'backends' row 'NVIDIA CuTe DSL / cutedsl' says 'in progress' ('Experimental')): "
        "map those rows to different platforms, or set 'combine: strongest' on the table in "
        "sources.yaml"
    ]
    catalog = build_catalog(export)
    (nvidia,) = [r for r in catalog["integrations"] if r["platform"] == "nvidia-gpu"]
    assert nvidia["status"] == "upstream"
    assert [(e["row"], e["wording"], e["status"]) for e in nvidia["evidence"]] == [
        ({"Backend": "NVIDIA CUDA", "Target": "cuda"}, "Primary", "upstream"),
        ({"Backend": "NVIDIA CuTe DSL", "Target": "cutedsl"}, "Experimental", "in progress"),
    ]
    assert validate_catalog(catalog, AUDIT) == []


def test_validate_refuses_two_statuses_for_one_project_and_platform() -> None:
    """The catalog main exported for TileLang (one record per row) fails validation, with
    both rows named."""
    catalog = build_catalog(_export("TileLang", TILELANG, -1))
    (nvidia,) = [r for r in catalog["integrations"] if r["platform"] == "nvidia-gpu"]
    cuda, cute = (dict(nvidia, evidence=[e], status=e["status"]) for e in nvidia["evidence"])
    cute["id"] = nvidia["id"].replace("nvidia-cuda-cuda", "nvidia-cute-dsl-cutedsl")
    others = [r for r in catalog["integrations"] if r is not nvidia]
    contradicting: dict[str, Any] = dict(catalog, integrations=[*others, cuda, cute])
    problems = [str(p) for p in validate_catalog(contradicting, AUDIT)]
    n = len(others)
    assert problems == [
        f"$.integrations[{n + 1}].status: \"in progress\", from table 'backends' row "
        f"'NVIDIA CuTe DSL / cutedsl' contradicts \"upstream\" at $.integrations[{n}], from "
        "table 'backends' row 'NVIDIA CUDA / cuda' for project 'tilelang' on platform "
        "'nvidia-gpu': keep one record, or tell the two apart (platform or version range)"
    ]


@pytest.mark.parametrize(
    ("project", "history", "wordings"),
    [
        ("TileLang", TILELANG, {"Ecosystem", "Experimental", "Primary", "Supported"}),
        ("vLLM Ascend", BRANCHES, {"Maintained", "Unmaintained"}),
    ],
)
def test_the_shipped_mappings_cover_every_wording_of_the_real_history(
    project: str, history: str, wordings: set[str]
) -> None:
    """Every revision of every page the shipped sources.yaml watches goes through its
    mappings: none stops the export (main's vLLM Ascend map lacked "Unmaintained")."""
    seen: set[str] = set()
    exported = 0
    for index, revision in enumerate(revisions(history)):
        try:
            export = _export(project, history, index)
        except ExtractionError:
            continue  # the table is not there yet: an audit error, not a mapping question
        catalog = build_catalog(export)  # raises ExportError on any unmapped cell
        assert validate_catalog(catalog, AUDIT) == [], revision.path.name
        seen |= {e["wording"] for r in catalog["integrations"] for e in r["evidence"]}
        exported += 1
    assert seen == wordings
    assert exported == {"TileLang": 2, "vLLM Ascend": 30}[project]


def test_every_table_spec_knows_combine() -> None:
    with pytest.raises(ValueError, match="status_map/platform_map/combine need"):
        TableSpec(name="t", selector="table", key=("a",), combine="strongest")
