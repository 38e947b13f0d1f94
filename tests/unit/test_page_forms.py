"""Each page form on pages written here: what it reads, what it refuses, and how its changes
diff. (The catalog's real files are read in tests/integration/test_page_forms_catalog.py.)"""

from __future__ import annotations

import pytest

from crawler.analysis.pages import ExtractionError, form_of, read_page
from crawler.analysis.pages.items import split_enumeration
from crawler.config import ConfigError, PageSpec, parse_config
from crawler.diff.pages import diff_page, diff_table
from crawler.model import ExtractedTable, PageSnapshot
from crawler.report.words import _table_summary


def page(body: str, url: str = "https://vendor.example/page.md", **spec: object) -> PageSnapshot:
    return read_page(PageSpec(name="p", url=url, **spec), body, None, url)  # type: ignore[arg-type]


def table(snapshot: PageSnapshot, name: str = "t") -> ExtractedTable:
    return next(t for t in snapshot.tables if t.name == name)


# -- multi-row HTML headers ------------------------------------------------------------------

GROUPED = """
<h2>Matrix</h2>
<table>
  <thead>
    <tr><th rowspan="2">Framework</th><th colspan="{n}">SDK version</th></tr>
    <tr>{versions}</tr>
  </thead>
  <tbody>
    <tr><td>PyTorch</td>{cells}</tr>
    <tr><td>JAX</td>{cells}</tr>
  </tbody>
</table>
"""


def grouped(versions: list[str]) -> str:
    return GROUPED.format(
        n=len(versions),
        versions="".join(f"<th>{v}</th>" for v in versions),
        cells="".join("<td>✅</td>" for _ in versions),
    )


def test_a_two_row_header_names_each_column_from_the_top() -> None:
    """The second header row was read as a data row and the group as "SDK version (2)"."""
    spec = {"tables": [{"name": "t", "heading": "Matrix", "key": ["Framework"]}]}
    read = table(page(grouped(["1.22", "1.23"]), url="https://x/m.html", **spec))
    assert read.columns == ("Framework", "SDK version / 1.22", "SDK version / 1.23")
    assert read.rows == (("JAX", "yes", "yes"), ("PyTorch", "yes", "yes"))


def test_a_column_added_under_a_header_group_is_that_one_column_added() -> None:
    spec = {"tables": [{"name": "t", "heading": "Matrix", "key": ["Framework"]}]}
    before = table(page(grouped(["1.22", "1.23"]), url="https://x/m.html", **spec))
    after = table(page(grouped(["1.22", "1.23", "1.24"]), url="https://x/m.html", **spec))
    details = diff_table(before, after)
    assert details is not None
    assert (details["columns_added"], details["columns_removed"]) == (["SDK version / 1.24"], [])
    assert (details["rows_added"], details["rows_removed"], details["cells_changed"]) == (
        [],
        [],
        [],
    )


def test_leading_rows_of_header_cells_are_the_header_without_a_thead() -> None:
    html = (
        "<table><tr><th>Chip</th><th colspan='2'>Driver</th></tr>"
        "<tr><th></th><th>min</th><th>max</th></tr>"
        "<tr><td>MLU370</td><td>5.10</td><td>6.0</td></tr></table>"
    )
    read = table(page(html, url="https://x/d.html", tables=[{"name": "t", "key": ["Chip"]}]))
    assert read.columns == ("Chip", "Driver / max", "Driver / min")
    assert read.rows == (("MLU370", "6.0", "5.10"),)


# -- lists and enumerations ------------------------------------------------------------------

TRITON_LIKE = """# Project

## Compatibility

Supported Platforms:

- Linux

Supported Hardware:

- NVIDIA GPUs (Compute Capability 8.0+)
- [AMD GPUs](https://rocm.example) (ROCm 6.2+)
  - MI300X
  - MI250

## Other

- not this one
"""


def test_a_list_under_a_heading_is_a_table_of_items_with_their_label() -> None:
    read = table(page(TRITON_LIKE, tables=[{"name": "t", "heading": "Compatibility",
                                            "items": "list"}]))  # fmt: skip
    assert read.key_columns == ("Item",)
    assert read.columns == ("Item", "Label", "Link", "Parent")
    assert read.rows == (
        ("AMD GPUs (ROCm 6.2+)", "Supported Hardware", "<https://rocm.example>", ""),
        ("Linux", "Supported Platforms", "", ""),
        ("MI250", "Supported Hardware", "", "AMD GPUs (ROCm 6.2+)"),
        ("MI300X", "Supported Hardware", "", "AMD GPUs (ROCm 6.2+)"),
        ("NVIDIA GPUs (Compute Capability 8.0+)", "Supported Hardware", "", ""),
    )


def test_labels_keep_the_items_under_them() -> None:
    only = [{"name": "t", "heading": "Compatibility", "items": "list",
             "labels": ["supported platforms:"]}]  # fmt: skip
    read = table(page(TRITON_LIKE, tables=only))
    assert read.rows == (("Linux", "Supported Platforms", "", ""),)


@pytest.mark.parametrize(
    ("kind", "body", "labels", "message"),
    [
        ("list", TRITON_LIKE, ["Supported OS"],
         "table 't': page layout changed: label 'Supported OS' not found; the labels present: "
         "'Supported Platforms', 'Supported Hardware', 'Other'"),
        ("enumeration", "## HW\n\nSupported: A, B.\n\nIntegrations planned: C and D.\n",
         ["Integrations in progress"],
         "table 't': page layout changed: label 'Integrations in progress' not found; the "
         "labels present: 'Supported', 'Integrations planned'"),
    ],
)  # fmt: skip
def test_a_label_no_longer_there_is_an_error_naming_the_labels_present(
    kind: str, body: str, labels: list[str], message: str
) -> None:
    with pytest.raises(ExtractionError) as raised:
        page(body, tables=[{"name": "t", "items": kind, "labels": labels}])
    assert str(raised.value) == message


SGLANG_LIKE = """## Supported Hardware

Integrations in progress: AWS Trainium, [Alibaba T-Head PPU](https://t-head.example),
Cambricon MLU (MLU370, MLU590), Hygon DCU, and Qualcomm QAIC.
"""


def test_a_paragraph_enumeration_selected_by_its_label_is_a_list_of_items() -> None:
    read = table(page(SGLANG_LIKE, tables=[{"name": "t", "items": "enumeration",
                                            "labels": ["Integrations in progress"]}]))  # fmt: skip
    label = "Integrations in progress"
    assert read.rows == (
        ("AWS Trainium", label, "", ""),
        ("Alibaba T-Head PPU", label, "<https://t-head.example>", ""),
        ("Cambricon MLU (MLU370, MLU590)", label, "", ""),
        ("Hygon DCU", label, "", ""),
        ("Qualcomm QAIC", label, "", ""),
    )


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("a, b and c.", ["a", "b", "c"]),
        ("a, b, and c", ["a", "b", "c"]),
        ("x (for A and B), y (for C), etc.", ["x (for A and B)", "y (for C)"]),
        ("Atlas 800T A3, Atlas 800T A2 and Atlas 300I Duo", ["Atlas 800T A3", "Atlas 800T A2",
                                                             "Atlas 300I Duo"]),
        ("one; two；three、four", ["one", "two", "three", "four"]),
        ("only", ["only"]),
    ],
)  # fmt: skip
def test_an_enumeration_splits_at_commas_outside_brackets_and_at_the_last_and(
    text: str, items: list[str]
) -> None:
    assert split_enumeration(text) == items


def _items(*rows: tuple[str, str]) -> ExtractedTable:
    cols = ("Item", "Label", "Link", "Parent")
    return ExtractedTable("hw", ("Item",), cols, tuple((i, lab, "", "") for i, lab in rows))


def test_a_list_diffs_as_items_added_removed_and_reworded() -> None:
    before = _items(("AMD GPUs (ROCm 6.2+)", "HW"), ("CPUs", "HW"), ("Linux", "OS"))
    after = _items(("AMD GPUs (ROCm 7.0+)", "HW"), ("Linux", "OS"), ("Windows", "OS"))
    details = diff_table(before, after)
    assert details is not None
    assert details["items_reworded"] == [
        {"before": "AMD GPUs (ROCm 6.2+)", "after": "AMD GPUs (ROCm 7.0+)", "label": "HW"}
    ]
    assert [r["Item"] for r in details["rows_added"]] == ["Windows"]
    assert [r["Item"] for r in details["rows_removed"]] == ["CPUs"]
    assert _table_summary(details) == (
        "list 'hw': 1 item added ('Windows' under 'OS'); 1 item removed ('CPUs' under 'HW'); "
        "1 item reworded ('AMD GPUs (ROCm 6.2+)' → 'AMD GPUs (ROCm 7.0+)')"
    )


def test_an_item_moved_to_another_label_is_that_item_changed_not_removed_and_added() -> None:
    before = _items(("vllm-metax", "Non-official device plugins"))
    after = _items(("vllm-metax", "Official device plugins"))
    details = diff_table(before, after)
    assert details is not None
    assert (details["rows_added"], details["rows_removed"], details["items_reworded"]) == (
        [], [], []
    )  # fmt: skip
    assert _table_summary(details) == (
        "list 'hw': 1 item changed ('vllm-metax' label: 'Non-official device plugins' → "
        "'Official device plugins')"
    )


def test_unalike_items_under_one_label_are_one_removed_and_one_added() -> None:
    details = diff_table(_items(("Hygon DCU", "HW")), _items(("Qualcomm QAIC", "HW")))
    assert details is not None
    assert details["items_reworded"] == []
    assert [r["Item"] for r in details["rows_added"]] == ["Qualcomm QAIC"]
    assert [r["Item"] for r in details["rows_removed"]] == ["Hygon DCU"]


# -- MyST, MDX, front matter -----------------------------------------------------------------

MYST = """(matrix)=
## Software

```{list-table} Versions
:header-rows: 1
:stub-columns: 1

* - Component
  - Version
* - TensorRT
  - [10.11](https://trt.example)
* - Precision
  -
    - FP8
    - FP4
```
"""


def test_a_myst_list_table_is_a_table_under_its_heading() -> None:
    read = table(page(MYST, tables=[{"name": "t", "heading": "Software", "key": ["Component"]}]))
    assert read.columns == ("Component", "Version")
    assert read.rows == (("Precision", "FP8 FP4"), ("TensorRT", "10.11 <https://trt.example>"))


MDX = """---
title: Compatibility
sidebar_position: 2
---
import Tabs from '@theme/Tabs';

{/* a comment */}
<Tabs>
| Backend | CUDA |
| --- | --- |
| **vLLM** | <span className="chip">12.9</span> <Badge kind="new" /> |
</Tabs>
"""


def test_mdx_drops_jsx_and_its_front_matter_title_is_the_first_heading() -> None:
    spec = {"tables": [{"name": "t", "heading": "Compatibility", "key": ["Backend"]}]}
    read = table(page(MDX, url="https://x/compat.mdx", **spec))
    assert read.rows == (("vLLM", "12.9"),)


def test_a_front_matter_title_repeated_as_a_heading_is_one_heading() -> None:
    body = "---\ntitle: Platforms\n---\n\n# Platforms\n\n| A | B |\n|---|---|\n| 1 | 2 |\n"
    read = table(page(body, tables=[{"name": "t", "heading": "Platforms", "key": ["A"]}]))
    assert read.rows == (("1", "2"),)


# -- reStructuredText ------------------------------------------------------------------------

RST = """Matrix
======

.. list-table:: Drivers
   :header-rows: 1

   * - Chip
     - Driver
   * - MI300X
     - :doc:`6.8 GA <kernel/ga>`

Grid
----

+---------+---------+
| Package | Version |
+=========+=========+
| torch   | >= 2.5  |
+---------+---------+

.. include:: /etc/hostname

.. raw:: html

   <table><tr><th>Injected</th></tr><tr><td>x</td></tr></table>

.. csv-table::
   :file: /etc/hostname
"""


def test_rst_tables_and_section_titles(capfd: pytest.CaptureFixture[str]) -> None:
    spec = {"tables": [{"name": "drivers", "heading": "Matrix", "key": ["Chip"]},
                       {"name": "grid", "heading": "Grid", "key": ["Package"]}]}  # fmt: skip
    read = page(RST, url="https://x/m.rst", **spec)
    assert table(read, "drivers").rows == (("MI300X", "6.8 GA"),)
    assert table(read, "grid").rows == (("torch", ">= 2.5"),)
    # no file was read, no raw HTML passed, nothing written to the terminal
    assert len(read.tables) == 2
    assert page(RST, url="https://x/m.rst", pins={"h": r"(Injected)"}).pins == (("h", None),)
    assert capfd.readouterr() == ("", "")


def test_an_rst_table_with_mismatched_borders_is_a_clear_error() -> None:
    broken = (
        "Grid\n----\n\n+-----+-----+\n| a   | b   |\n+=====+==+\n| 1   | 2   |\n+-----+-----+\n"
    )
    with pytest.raises(ExtractionError) as raised:
        page(broken, url="https://x/m.rst",
             tables=[{"name": "t", "heading": "Grid", "key": ["a"]}])  # fmt: skip
    message = str(raised.value)
    assert message.startswith(
        "table 't': page layout changed: no table under heading 'Grid' before the next heading "
        "(the page's markup has errors: line "
    )
    assert "Malformed table" in message


# -- CSV, TSV, KEY=VALUE ---------------------------------------------------------------------


def test_a_csv_file_is_one_table_keyed_by_its_key_columns() -> None:
    body = 'Model,Type,UnitTest\n"Qwen/Qwen3-4B",Text,✅ Passing\n"org/m, v2",Text,❓ Untested\n'
    read = table(page(body, url="https://x/m.csv", tables=[{"name": "t", "key": ["Model"]}]))
    assert read.columns == ("Model", "Type", "UnitTest")
    assert read.rows == (
        ("Qwen/Qwen3-4B", "Text", "yes Passing"),
        ("org/m, v2", "Text", "Untested"),
    )


def test_a_tsv_file_and_a_csv_key_that_is_not_a_column() -> None:
    body = "Op\tCUDA\tCANN\nADD\t✅\t❌\n"
    read = table(page(body, url="https://x/ops.tsv", tables=[{"name": "t", "key": ["Op"]}]))
    assert read.rows == (("ADD", "no", "yes"),)  # columns sorted: CANN, CUDA
    with pytest.raises(ExtractionError, match=r"identity column 'Backend' not in table columns"):
        page(body, url="https://x/ops.tsv", tables=[{"name": "t", "key": ["Backend"]}])


PINS = """# comment: VLLM_TAG=v0.1
VLLM_TAG=v0.28.0
export VLLM_VERSION="0.27.1"  # the wheel's
! a properties comment
CNNL_VERSION = 2.2.18-1
VLLM_TAG=v0.99.0
if [ "$x" = y ]; then echo; fi
"""


def test_key_value_pins_all_keys_or_the_ones_named() -> None:
    assert page(PINS, url="https://x/PINS", form="keyvalue", pins="all").pins == (
        ("CNNL_VERSION", "2.2.18-1"), ("VLLM_TAG", "v0.28.0"), ("VLLM_VERSION", "0.27.1"),
    )  # fmt: skip
    named = page(PINS, url="https://x/c.properties", pins=["VLLM_TAG", "GONE"])
    assert named.pins == (("GONE", None), ("VLLM_TAG", "v0.28.0"))


def test_under_pins_all_a_key_no_longer_set_is_reported_not_found() -> None:
    """Under ``pins: all`` a key the file stopped setting vanished from the page's pins, and a
    vanished pin is no change (a pin no longer watched): the removal went unreported."""
    spec = PageSpec(name="p", url="https://x/PINS", form="keyvalue", pin_keys="all")
    first = read_page(spec, PINS, None, spec.where)
    edited = PINS.replace("CNNL_VERSION = 2.2.18-1\n", "")
    second = read_page(spec, edited, None, spec.where, earlier=first)
    assert dict(second.pins) == {"CNNL_VERSION": None, "VLLM_TAG": "v0.28.0",
                                 "VLLM_VERSION": "0.27.1"}  # fmt: skip
    (change,) = diff_page("Plugin", first, second)
    assert (change.kind.value, change.before, change.after) == ("pin_changed", "2.2.18-1", None)


PLATFORMS_PY = """# the platforms a build knows: {tpu, cuda}
builtin_platform_plugins = {
    "tpu": tpu_platform_plugin,
    "cuda": cuda_platform_plugin,
}
"""


def test_a_text_file_of_another_language_is_read_for_pattern_pins_as_written() -> None:
    """A Python module or a TOML file read as Markdown loses its text to the parser (``__init__``
    turns bold, ``#`` lines turn headings): ``form: text`` matches patterns on it as written."""
    pins = {"platforms": r"builtin_platform_plugins = \{([^}]*)\}"}
    read = page(PLATFORMS_PY, url="https://x/vllm/platforms/__init__.py", form="text", pins=pins)
    assert read.pins == (
        ("platforms", '"tpu": tpu_platform_plugin, "cuda": cuda_platform_plugin,'),
    )
    with pytest.raises(ExtractionError, match="a text file is read for pattern pins only"):
        page(PLATFORMS_PY, url="https://x/p.py", form="text", pin_keys="all")


def test_a_key_list_on_a_markdown_page_says_to_set_its_form() -> None:
    with pytest.raises(ExtractionError, match="set 'form: keyvalue' if it is one"):
        page("A=1\n", url="https://x/README.md", pins=["A"])


# -- choosing the form, configuring it -------------------------------------------------------


@pytest.mark.parametrize(
    ("explicit", "where", "content_type", "form"),
    [
        (None, "https://x/a/matrix.rst", "text/plain", "rst"),
        (None, "docs/ops/CUDA.csv", None, "csv"),
        (None, "https://x/ops", "text/csv; charset=utf-8", "csv"),
        (None, "https://x/page", "text/x-rst", "rst"),
        (None, "compatibility.mdx", None, "mdx"),
        (None, "scripts/component_versions.properties", None, "keyvalue"),
        (None, "https://x/page", "text/html", "html"),
        (None, "third_party/PINS", "text/plain", "markdown"),
        ("keyvalue", "third_party/PINS", "text/plain", "keyvalue"),
    ],
)
def test_the_form_is_the_option_then_the_extension_then_the_content_type(
    explicit: str | None, where: str, content_type: str | None, form: str
) -> None:
    assert form_of(explicit, where, content_type) == form


def _config_error(page_yaml: str) -> str:
    text = f"projects:\n  - name: P\n    repo: o/p\n    pages:\n{page_yaml}"
    with pytest.raises(ConfigError) as raised:
        parse_config(text)
    return str(raised.value)


@pytest.mark.parametrize(
    ("page_yaml", "says"),
    [
        ("      - {name: x, path: README.md, tables: [{name: t, items: enumeration}]}\n",
         "an enumeration is chosen by its label: add 'labels: [Integrations in progress]'"),
        ("      - {name: x, path: README.md, tables: [{name: t, heading: H}]}\n",
         "table 't' needs 'key': the column(s) that identify a row"),
        ("      - {name: x, url: 'https://x/p', ref: main, pins: {a: '(a)'}}\n",
         "'ref' (a branch or tag) applies to a repository 'path', not to a 'url'"),
        ("      - {name: x, path: P, ref: 'a..b', pins: all}\n",
         "ref 'a..b' is not a branch or tag name"),
        ("      - {name: x, path: P, form: toml, pins: all}\n", "form"),
    ],
)  # fmt: skip
def test_form_options_are_checked_when_sources_yaml_is_read(page_yaml: str, says: str) -> None:
    assert says in _config_error(page_yaml)
