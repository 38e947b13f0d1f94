"""Lists and paragraph enumerations read as tables: one row per item. Pure: no I/O.

Much of the catalog's evidence is not a table: Triton states its support as two bullet lists
under "Supported Platforms:" and "Supported Hardware:", vLLM names its official device plugins
in one list item ("**Official device plugins:** vllm-ascend (for Huawei Ascend NPU),
vllm-spyre, … etc."), SGLang its platforms in progress in one paragraph ("Integrations in
progress: AWS Trainium, Alibaba T-Head PPU, … and Qualcomm QAIC."). Read as a table, each item
is a row of ``ITEM_COLUMNS``:

* ``Item``: the item's visible text, normalised as a cell (a link target is never part of it,
  so a moved link is a cell change, not an item removed and another added); its identity;
* ``Label``: the label line it stands under: for a list, the paragraph just before it when that
  ends with a colon ("Supported Hardware:"), else the nearest heading inside the selected
  section ("CUDA" under "Dependencies"); for an enumeration, the text before its colon;
* ``Link``: the first link's target in the item (``<href>``), or empty;
* ``Parent``: for an item of a nested list, the text of the item it is nested in.

``labels`` keeps the items under those labels only, matched as headings are (case, spacing, a
trailing colon and emphasis aside); a label that is no longer on the page is an error naming
the labels present, never "every item removed". An enumeration is split at top-level commas
and semicolons (never inside brackets) and at the last "and"/"or"; "etc." is no item.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal

from bs4 import BeautifulSoup, Tag

from crawler.analysis.pages.cells import (
    MAX_HEADING_CHARS,
    MAX_HEADINGS_LISTED,
    MAX_ROWS,
    ExtractionError,
    attribute,
    normalise_cell,
    normalise_text,
    render_text,
)
from crawler.analysis.pages.document import canonical_table
from crawler.analysis.pages.sections import bare_heading, heading_level, heading_text, scope
from crawler.model import ITEM_COLUMNS, ExtractedTable

ItemKind = Literal["list", "enumeration"]
_LISTS = ("ul", "ol")
_LABEL_MAX = 120  # a label is a short line, not a sentence that happens to hold a colon
_SEPARATORS = ",;，；、"
_NOT_ITEMS = frozenset({"", "etc", "etc.", "and more", "and others", "…", "..."})
_SENTENCE_END_RE = re.compile(r"(?<!\betc)(?<!\be\.g)(?<!\bi\.e)\.(?:\s|$)")
_AND_RE = re.compile(r"\s(?:and|or|&)\s")


def extract_items(
    soup: BeautifulSoup,
    *,
    name: str,
    kind: ItemKind,
    selector: str | None = None,
    heading: str | None = None,
    labels: Sequence[str] = (),
) -> ExtractedTable:
    """The items of the lists (or the labelled enumerations) in the selection, as a table
    keyed by ``Item``. Errors name the table, as a table's do."""
    try:
        nodes = list(scope(soup, selector, heading))
        read = _list_items(nodes) if kind == "list" else _enumerated_items(nodes, labels)
        rows = _under_labels(read, labels, kind)
        if len(rows) > MAX_ROWS:
            raise ExtractionError(f"more than {MAX_ROWS} items: refusing to diff them")
        if not rows:
            where = f"under heading {heading!r}" if heading else "on the page"
            what = "no list" if kind == "list" else "no labelled enumeration"
            raise ExtractionError(f"page layout changed: {what} {where}")
        cells = [tuple((value, value) for value in row) for row in rows]
        return canonical_table(name, ITEM_COLUMNS, cells, ITEM_COLUMNS[:1])
    except ExtractionError as exc:
        raise ExtractionError(f"table {name!r}: {exc}") from None


Row = tuple[str, str, str, str]  # Item, Label, Link, Parent (ITEM_COLUMNS)


def _fold(label: str) -> str:
    return bare_heading(label.replace("*", " ").replace("_", " ")).rstrip(":：").strip().casefold()


def _under_labels(rows: list[Row], labels: Sequence[str], kind: ItemKind) -> list[Row]:
    if not labels:
        return rows
    present = list(dict.fromkeys(row[1] for row in rows if row[1]))
    wanted = {_fold(label): label for label in labels}
    missing = [label for folded, label in wanted.items() if folded not in map(_fold, present)]
    if missing:
        shown = [repr(normalise_text(p, MAX_HEADING_CHARS)) for p in present]
        listing = ", ".join(shown[:MAX_HEADINGS_LISTED])
        if len(shown) > MAX_HEADINGS_LISTED:
            listing += f", +{len(shown) - MAX_HEADINGS_LISTED} more"
        things = "lists" if kind == "list" else "enumerations"
        raise ExtractionError(
            f"page layout changed: label {missing[0]!r} not found; "
            + (f"the labels present: {listing}" if listing else f"the {things} have no label")
        )
    return [row for row in rows if _fold(row[1]) in wanted]


# -- lists -------------------------------------------------------------------------------------


def _list_items(nodes: list[Tag]) -> list[Row]:
    """Every item of the lists among ``nodes`` (nested lists too), in document order."""
    rows: list[Row] = []
    in_tables = _lists_in_tables(nodes)
    section_heading = ""
    seen: set[int] = set()  # lists already read as part of an outer one
    for node in nodes:
        if heading_level(node) is not None:
            section_heading = heading_text(node)
        if node.name not in _LISTS or id(node) in seen or id(node) in in_tables:
            continue
        label = _label_before(node) or section_heading
        rows += _walk(node, label, seen)
        if len(rows) > MAX_ROWS:
            break
    return rows


def _lists_in_tables(nodes: list[Tag]) -> set[int]:
    """The lists inside a table cell of the selection: they belong to that table. Each node is
    visited once (a hostile page may nest lists or tables thousands deep)."""
    covered: set[int] = set()
    found: set[int] = set()
    for node in nodes:
        if node.name != "table" or id(node) in covered:
            continue
        for inner in node.descendants:
            covered.add(id(inner))
            if isinstance(inner, Tag) and inner.name in _LISTS:
                found.add(id(inner))
    return found


def _label_before(lst: Tag) -> str:
    """The label line just before a list: a short paragraph ending with a colon."""
    previous = lst.find_previous_sibling()
    if not isinstance(previous, Tag) or previous.name not in ("p", "div"):
        return ""
    text = normalise_text(render_text(previous, links=False))
    if not text.endswith((":", "：")) or len(text) > _LABEL_MAX:
        return ""
    return _clean_label(text)


def _clean_label(text: str) -> str:
    return normalise_cell(text.rstrip(":： ").strip("*_ "))


def _walk(top: Tag, label: str, seen: set[int]) -> list[Row]:
    """The items of ``top`` and of the lists nested in them, without recursion (a hostile page
    may nest lists thousands deep)."""
    rows: list[Row] = []
    stack: list[tuple[Tag, str]] = [(top, "")]
    while stack:
        lst, parent = stack.pop()
        seen.add(id(lst))
        nested: list[tuple[Tag, str]] = []
        for item in lst.find_all("li", recursive=False):
            children = [c for c in item.find_all(_LISTS, recursive=False) if isinstance(c, Tag)]
            own = _item_row(item, label, parent, skip={id(c) for c in children})
            if own is not None:
                rows.append(own)
            nested += [(c, own[0] if own else parent) for c in children]
            if len(rows) > MAX_ROWS:
                return rows
        stack.extend(reversed(nested))
    return rows


def _item_row(item: Tag, label: str, parent: str, skip: set[int]) -> Row | None:
    text = normalise_cell(render_text(item, links=False, skip=skip))
    if not text:
        return None
    return (text, label, _first_link(item, skip), parent)


def _first_link(item: Tag, skip: set[int]) -> str:
    """The first link's target among the item's own content (not its nested lists')."""
    for child in item.children:
        if not isinstance(child, Tag) or id(child) in skip:
            continue
        link = child if child.name == "a" and child.get("href") else child.find("a", href=True)
        if isinstance(link, Tag):
            href = normalise_text(attribute(link, "href"))
            return f"<{href}>" if href else ""
    return ""


# -- enumerations ------------------------------------------------------------------------------


def _enumerated_items(nodes: list[Tag], labels: Sequence[str]) -> list[Row]:
    """The items of every "Label: a, b and c." paragraph or list item among ``nodes``; a
    configured label may also be the words an enumeration follows without a colon ("We
    support running lmdeploy on A, B and C."), which then ends at the sentence's end."""
    rows: list[Row] = []
    for node in nodes:
        if node.name not in ("p", "li", "dd", "td"):
            continue
        skip = {id(c) for c in node.find_all([*_LISTS, "p"], recursive=False)}
        text = normalise_text(render_text(node, links=False, skip=skip))
        found = _labelled(text, labels)
        if found is None:
            continue
        label, rest = found
        links = _links(node, skip)
        for item in split_enumeration(rest)[: MAX_ROWS + 1 - len(rows)]:
            rows.append((normalise_cell(item), _clean_label(label), _link_for(item, links), ""))
    return rows


def _labelled(text: str, labels: Sequence[str]) -> tuple[str, str] | None:
    """(label, the enumeration after it) of a block, or None when it has none."""
    plain = text.replace("*", "")
    for label in labels:
        words = label.replace("*", " ").strip(" :：").split()
        lead = re.match(r"\W*" + r"\s+".join(map(re.escape, words)) + r"\s*([:：])?", plain, re.I)
        if words and lead is not None and lead.group(1) is None:
            return label, _SENTENCE_END_RE.split(plain[lead.end() :], maxsplit=1)[0]
    label, colon, rest = text.partition(":")
    if not colon or not label.strip() or len(label) > _LABEL_MAX:
        return None
    return label, rest


def _links(node: Tag, skip: set[int]) -> list[tuple[str, str]]:
    """(visible text, href) of the first links of a block, outside ``skip``."""
    found: list[tuple[str, str]] = []
    for child in node.children:
        if not isinstance(child, Tag) or id(child) in skip:
            continue
        for link in [child] if child.name == "a" else child.find_all("a", href=True, limit=50):
            if isinstance(link, Tag) and link.get("href") and len(found) < MAX_ROWS:
                text = normalise_text(render_text(link, links=False))
                found.append((text, normalise_text(attribute(link, "href"))))
    return found


def _link_for(item: str, links: Iterable[tuple[str, str]]) -> str:
    for text, href in links:
        if text and text in item and href:
            return f"<{href}>"
    return ""


def split_enumeration(text: str) -> list[str]:
    """ "a, b (c, d) and e." → ["a", "b (c, d)", "e"]: split at commas and semicolons outside
    brackets, and at the last "and"/"or"; "etc." and a trailing full stop left out."""
    parts = list(itertools.islice(_top_level_split(text.strip()), MAX_ROWS + 2))
    if parts:
        parts += _split_last_and(parts.pop())
    items = []
    for part in parts:
        item = re.sub(r"^(?:and|or)\s+", "", part.strip()).rstrip(".。").strip()
        if item.casefold() not in _NOT_ITEMS and item.casefold().rstrip(".") != "etc":
            items.append(item)
    return items


def _top_level_split(text: str) -> Iterator[str]:
    depth = 0
    start = 0
    for i, char in enumerate(text):
        if char in "([{（【":
            depth += 1
        elif char in ")]}）】":
            depth = max(depth - 1, 0)
        elif char in _SEPARATORS and depth == 0:
            yield text[start:i]
            start = i + 1
    yield text[start:]


def _split_last_and(text: str) -> list[str]:
    """ "b and c" → ["b", "c"], at the last "and"/"or"/"&" outside brackets."""
    depth = 0
    cut: tuple[int, int] | None = None
    for i, char in enumerate(text):
        if char in "([{（【":
            depth += 1
        elif char in ")]}）】":
            depth = max(depth - 1, 0)
        elif depth == 0 and (match := _AND_RE.match(text, i)) is not None:
            cut = (i, match.end())
    if cut is None:
        return [text]
    return [text[: cut[0]], text[cut[1] :]]
