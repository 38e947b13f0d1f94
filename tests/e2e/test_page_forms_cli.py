"""``crawler page`` on every form: it lists what the page holds, then shows the rows it read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli import cli


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "matrix.csv").write_text("Model,UnitTest\nQwen/Qwen3-4B,✅ Passing\n")
    (tmp_path / "PINS").write_text("# pins\nVLLM_TAG=v0.28.0\nexport VLLM_COMMIT='2cf0a69'\n")
    (tmp_path / "README.md").write_text(
        "## Compatibility\n\nSupported Hardware:\n\n- NVIDIA GPUs\n- AMD GPUs ([ROCm 6.2+](x))\n"
        "\nIntegrations in progress: AWS Trainium and Cambricon MLU.\n"
    )
    (tmp_path / "notes.rst").write_text(
        "Versions\n========\n\n=======  =======\nPackage  Version\n=======  =======\n"
        "vllm     0.16.0\n=======  =======\n"
    )
    return tmp_path


def test_a_csv_file_lists_its_table_then_shows_its_rows(files: Path) -> None:
    listing = run("page", str(files / "matrix.csv"))
    assert listing == (0, (
        f"1 table in {files / 'matrix.csv'} (read as csv):\n"
        "  [0] the file's one table, 1 row: Model | UnitTest\n"
        "Choose the columns that identify a row with --key COLUMN.\n"
    ))  # fmt: skip
    assert run("page", str(files / "matrix.csv"), "--key", "Model") == (0, (
        f"Table at the page in {files / 'matrix.csv'}: 1 row, keyed by Model\n"
        "Model         | UnitTest\n"
        "--------------+------------\n"
        "Qwen/Qwen3-4B | yes Passing\n"
    ))  # fmt: skip


def test_a_key_value_file_lists_its_keys(files: Path) -> None:
    assert run("page", str(files / "PINS"), "--form", "keyvalue") == (0, (
        f"2 keys in {files / 'PINS'} (read as keyvalue):\n"
        "  VLLM_TAG = v0.28.0\n  VLLM_COMMIT = 2cf0a69\n"
        "Watch them with 'pins: all', or a list of keys: 'pins: [KEY, ...]'.\n"
    ))  # fmt: skip


def test_a_list_and_an_enumeration_show_their_items(files: Path) -> None:
    readme = str(files / "README.md")
    code, shown = run("page", readme, "--heading", "Compatibility", "--items", "list")
    assert (code, shown.splitlines()) == (0, [
        f"List items at heading 'Compatibility' in {readme}: 2 items",
        "Item                 | Label              | Link | Parent",
        "---------------------+--------------------+------+-------",
        "AMD GPUs (ROCm 6.2+) | Supported Hardware | <x>  |",
        "NVIDIA GPUs          | Supported Hardware |      |",
    ])  # fmt: skip
    code, shown = run("page", readme, "--items", "enumeration", "--label",
                      "Integrations in progress", "--json")  # fmt: skip
    assert code == 0
    rows = json.loads(shown)["table"]["rows"]
    assert [(r["Item"], r["Label"]) for r in rows] == [
        ("AWS Trainium", "Integrations in progress"),
        ("Cambricon MLU", "Integrations in progress"),
    ]


def test_a_restructuredtext_page_lists_and_shows_its_tables(files: Path) -> None:
    notes = str(files / "notes.rst")
    assert run("page", notes) == (0, (
        f"1 table in {notes} (read as rst):\n"
        '  [0] under "Versions", 1 row: Package | Version\n'
        "Choose one with --heading TEXT or --table SELECTOR, and --key COLUMN.\n"
        "Or read the lists under a heading as a table: --heading TEXT --items list "
        "(a 'Label: a, b and c.' sentence: --items enumeration --label Label).\n"
    ))  # fmt: skip
    code, shown = run("page", notes, "--heading", "Versions", "--key", "Package")
    assert (code, shown.splitlines()[-1]) == (0, "vllm    | 0.16.0")


def test_a_table_chosen_without_its_key_is_told_which_option_is_missing(files: Path) -> None:
    """`--heading H` without `--key` printed the validation library's error ("1 validation
    error for PageSpec … [type=value_error, input_value=TableSpec(…)]"): now the options'
    own words, as a usage error."""
    notes = str(files / "notes.rst")
    code, shown = run("page", notes, "--heading", "Versions")
    assert code == 2
    assert shown.splitlines()[-1] == (
        "Error: --heading 'Versions' needs --key: the column(s) that identify a row (--key "
        "COLUMN, once per column), or --items list|enumeration to read the lists there as a "
        "table; without --table and --heading the page's tables are listed with their columns"
    )
    assert run("page", notes, "--table", "table", "--heading", "Versions")[1].splitlines()[
        -1
    ] == "Error: give --table or --heading, not both"
    readme = str(files / "README.md")
    code, shown = run("page", readme, "--items", "enumeration")
    assert (code, shown.splitlines()[-1]) == (2, (
        "Error: --items enumeration is chosen by its label: add --label 'Integrations in "
        "progress' (the text before its colon)"
    ))  # fmt: skip
    assert run("page", readme, "--label", "Supported Hardware")[1].splitlines()[-1] == (
        "Error: --label only applies with --items"
    )
