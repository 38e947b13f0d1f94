"""Hostile pages of every form: a clear error or a capped read, never a hang or a crash.

A page is at most ``settings.page_size_limit`` (5 MB) when it is read; each reader must answer
such a page, and the shapes that cost a parser most (deep nesting, a hundred thousand rows, a
malformed table), in bounded time. No timing is asserted: a reader that hangs never returns.
"""

from __future__ import annotations

import pytest

from crawler.analysis.pages import ExtractionError, read_page
from crawler.config import PageSpec

FIVE_MB = 5 * 1024 * 1024
KEYED = {"tables": [{"name": "t", "key": ["A"]}]}
MYST = "# T\n\n```{list-table}\n:header-rows: 1\n\n" + "* - a\n  - b\n" * 100_000 + "```\n"


def read(url: str, body: str, **spec: object) -> object:
    return read_page(PageSpec(name="p", url=url, **spec), body, None, url)  # type: ignore[arg-type]


def test_lists_nested_thousands_deep_are_read_or_refused_whole() -> None:
    """Every list walked up to the page from each nested list: 20,000 levels took minutes."""
    deep = "<h2>L</h2>" + "<ul><li>level" * 1500 + "</li></ul>" * 1500
    snapshot = read(
        "https://x/p.html", deep, tables=[{"name": "t", "heading": "L", "items": "list"}]
    )
    (table,) = snapshot.tables  # type: ignore[attr-defined]
    assert len(table.rows) == 1500
    assert {row[3] for row in table.rows} == {"", "level"}  # each level's parent reads "level"
    deeper = "<h2>L</h2>" + "<ul><li>x" * 20_000 + "</li></ul>" * 20_000
    with pytest.raises(ExtractionError, match=r"^table 't': more than 2000 items: refusing"):
        read("https://x/p.html", deeper, tables=[{"name": "t", "heading": "L", "items": "list"}])


def test_a_hundred_thousand_row_csv_is_refused() -> None:
    body = "Model,Status\n" + "".join(f"m{i},ok\n" for i in range(100_000))
    with pytest.raises(ExtractionError) as raised:
        read("https://x/m.csv", body, tables=[{"name": "t", "key": ["Model"]}])
    assert str(raised.value) == ("table 't': the file has more than 2000 rows: refusing to diff it")


@pytest.mark.parametrize(
    ("url", "body", "spec", "message"),
    [
        ("https://x/p.md", "- item\n" * (FIVE_MB // 7), {"text": {"heading": "x"}},
         "the Markdown page is 5,242,874 characters, over the 2,000,000 the reader parses"),
        ("https://x/p.mdx", "<Tabs>x</Tabs>\n" * (FIVE_MB // 15), {"text": {"heading": "x"}},
         "the MDX page is 5,242,875 characters, over the 2,000,000 the reader parses"),
        ("https://x/p.rst", "para\n\n" * (FIVE_MB // 6), {"text": {"heading": "x"}},
         "the reStructuredText page is 5,242,878 characters, over the 1,000,000 the reader "
         "parses"),
        ("https://x/p.csv", 'A,B\n1,"' + "x" * FIVE_MB + '"\n', KEYED,
         "table 't': not a readable CSV file (line 2): field larger than field limit (131072)"),
        ("https://x/p.properties", "".join(f"K{i}=v\n" for i in range(FIVE_MB // 10)),
         {"pins": "all"}, "the file sets more than 2000 keys: refusing to diff them"),
        ("https://x/p.html", "<h2>L</h2><p>Label: " + "a, " * (FIVE_MB // 3) + "</p>",
         {"tables": [{"name": "t", "heading": "L", "items": "enumeration", "labels": ["Label"]}]},
         "table 't': more than 2000 items: refusing to diff them"),
        ("https://x/p.md", MYST, {"tables": [{"name": "t", "heading": "T", "key": ["a"]}]},
         "table 't': table has more than 2000 rows: refusing to diff it"),
    ],
    ids=["markdown", "mdx", "rst", "csv", "keyvalue", "html enumeration", "myst list-table"],
)  # fmt: skip
def test_a_five_megabyte_page_of_each_form_is_a_clear_error(
    url: str, body: str, spec: dict[str, object], message: str
) -> None:
    with pytest.raises(ExtractionError) as raised:
        read(url, body, **spec)
    assert str(raised.value) == message


def test_rst_nested_past_the_interpreter_s_depth_is_a_clear_error() -> None:
    body = "T\n=\n\n" + "".join("  " * i + "- item\n\n" for i in range(400))
    with pytest.raises(ExtractionError, match=r"^document is too deeply nested to parse$"):
        read("https://x/p.rst", body, tables=[{"name": "t", "heading": "T", "items": "list"}])
