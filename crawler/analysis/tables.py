"""Tables, pins and text blocks pulled out of vendor pages and READMEs. Pure: no I/O.

HTML is parsed with BeautifulSoup (lxml). Markdown is rendered to HTML first (markdown-it-py,
CommonMark + pipe tables + raw HTML), so GitHub pipe tables and HTML tables embedded in a README
take the same path. MkDocs tabs and admonitions (``=== "pip"``, ``!!! note``) are unfolded first
(their indented content is the page's content, not a code block), and an inline "tag" no HTML
element is named like (``rfc/<feature-name>``) stays text.

A ``heading:`` names a heading exactly, as a reader would (case, spacing, anchor marks and a
decorating emoji aside); one that is missing is "page layout changed", listing the headings the
page has. A row's identity is the visible text of its key cells (a link target there is ignored).

Cell normalisation (``normalise_cell``), applied to every header and data cell:

* a link renders as ``text <href>``; when its text is empty or equals the href, as ``<href>``;
  the href is kept as written (not resolved), so moving the page does not change every cell;
* an image renders as its ``alt`` text (GitHub renders emoji as ``<img alt=":x:">``), in cells
  and in the page text pins and text blocks read;
* one vocabulary of marks: ✅ ✔ ✓ √ :white_check_mark: → ``yes``; ❌ ✗ ✘ ✖ × ❎ :x: → ``no``;
  🚧 ⚠ 🔜 ⏳ :construction: :warning: → ``in progress`` (variation selectors dropped first;
  √ and × only away from numbers and words, so ``4×200 Gbps`` stays maths); legend marks,
  whose meaning each page gives (🟢 🔵 🟡 🟠 🔴 ❔ ☑ ...), are dropped beside a word
  (``🟢 Functional`` → ``Functional``) and read as their name alone (``green``, ``unknown``,
  ``checked box``);
* a template placeholder (``{{main_vllm_commit}}``) is kept and marked
  ``(template placeholder)``: the page source has no value there;
* footnote markers are removed: ``<sup>`` holding a short marker, ``[1]``, ``[^note]``,
  superscript digits, and trailing ``*``/``†``/``‡``;
* control and format characters (zero-width, bidi overrides, soft hyphen) are stripped,
  whitespace (including ``<br>`` and block boundaries) collapses to one space;
* a cell is capped at ``MAX_CELL_CHARS`` characters (truncated with ``…``).

Header cells get the same treatment (links as plain text); an empty header is ``column N`` and a
repeated one ``Name (2)``. A table is stored in canonical form: identity columns first (in ``key``
order), then the other columns sorted by name, rows sorted by identity (then whole row). So
re-sorted rows, re-ordered columns and re-wrapped text give the same snapshot, byte for byte.
colspan/rowspan repeat the value into each covered cell; rows of nested tables are not the
outer table's rows; empty rows and repeated header rows are skipped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import urlsplit

from bs4 import BeautifulSoup, Tag
from bs4.element import (
    NavigableString,
    PageElement,
    PreformattedString,
    Script,
    Stylesheet,
    TemplateString,
)
from markdown_it import MarkdownIt
from markdown_it.common.html_blocks import block_names
from markdown_it.token import Token
from soupsieve import SelectorSyntaxError

from crawler.analysis.placeholders import mark_placeholder
from crawler.config import DEFAULT_PIN_TEXT_LIMIT, PageSpec
from crawler.model import ExtractedTable, PageSnapshot
from crawler.patterns import PatternTimeout, search

MAX_CELL_CHARS = 500
MAX_ROWS = 2000
MAX_COLUMNS = 100
MAX_SPAN = 100
MAX_TEXT_CHARS = 200_000
MAX_CELL_NODES = 2_000
MAX_TABLES = 200
MAX_HEADINGS_LISTED = 30  # in a "heading not found" error
MAX_HEADING_CHARS = 80

_HEADING_RE = re.compile(r"^h[1-6]$")
_HEADING_BODY = ("table", "div", "p", "ul", "ol", "pre", "section")
# fmt: off
_BLOCK = frozenset({
    "address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt", "figcaption",
    "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "li", "main", "nav",
    "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr",
    "ul",
})
_SKIP = frozenset({"script", "style", "template", "head", "noscript"})
_NON_TEXT = (PreformattedString, Script, Stylesheet, TemplateString)
_MARKS: dict[str, tuple[str, ...]] = {
    "yes": (":white_check_mark:", ":heavy_check_mark:", "✅", "✔", "✓", "🗸"),
    "no": (":negative_squared_cross_mark:", ":heavy_multiplication_x:", ":x:",
           "❌", "❎", "✗", "✘", "✖"),
    "in progress": (":construction:", ":warning:", ":soon:", ":hourglass_flowing_sand:",
                    "🚧", "⚠", "🔜", "⏳"),
}
# √ and × are also maths ("4×200 Gbps", "8 × H100"): a mark only away from numbers and words
_BARE_MARKS = {"√": "yes", "×": "no"}
# Marks whose meaning each page gives in its own legend ("🟢 Functional", "🟡 Planned"): beside
# a word they only colour it and are dropped; alone in a cell they read as their name.
_LEGEND_MARKS = {
    "🟢": "green", "🔵": "blue", "🟡": "yellow", "🟠": "orange", "🔴": "red", "🟣": "purple",
    "🟤": "brown", "⚫": "black", "⚪": "white", "❔": "unknown", "❓": "unknown",
    # beside ✅ a page uses ☑ for less than full support (FlagGems: "partially supported")
    "☑": "checked box", ":ballot_box_with_check:": "checked box",
}
# fmt: on
_MARK_RE = re.compile(
    "|".join(re.escape(m) for ms in _MARKS.values() for m in ms)
    + "|"
    + "|".join(rf"(?<![\w.])(?<![\d.] ){re.escape(m)}(?![\w.])(?! \d)" for m in _BARE_MARKS)
)
_MARK_WORD = {m: word for word, ms in _MARKS.items() for m in ms} | _BARE_MARKS
_LEGEND_RE = re.compile("|".join(map(re.escape, _LEGEND_MARKS)))
_TAG_NAME_RE = re.compile(r"^</?([A-Za-z][A-Za-z0-9-]*)")
# fmt: off
_HTML_ELEMENTS = frozenset(block_names) | frozenset({
    "a", "abbr", "area", "audio", "b", "bdi", "bdo", "big", "br", "button", "canvas", "cite",
    "code", "data", "datalist", "del", "dfn", "em", "embed", "font", "g-emoji", "i", "img",
    "input", "ins", "kbd", "label", "map", "mark", "meter", "noscript", "object", "output",
    "picture", "pre", "progress", "q", "rp", "rt", "ruby", "s", "samp", "script", "select",
    "slot", "small", "source", "span", "strike", "strong", "style", "sub", "sup", "svg",
    "template", "textarea", "time", "tt", "u", "var", "video", "wbr", "math",
})
# fmt: on
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# MkDocs (pymdownx.tabbed / admonition / details): === "Tab", !!! kind "Title", ??? kind
# ("===" alone is a setext heading underline, so a tab needs its quoted title)
_BLOCK_MARKER_RE = re.compile(
    r'^(?:===\+?[ \t]+"([^"]*)"|[!?]{3}\+?[ \t]+([\w-]+)(?:[ \t]+"([^"]*)")?)[ \t]*$'
)
# "🚧 In progress" says it twice: keep one
_MARK_ECHO_RE = re.compile(r"\b(yes|no|in progress)\s+\1\b", re.IGNORECASE)
_FOOTNOTE_RE = re.compile(r"\[\^[\w-]{1,20}\]|\[\d{1,3}\]|[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_TRAILING_MARK_RE = re.compile(r"(?<=\S)\s*[*†‡]+$")
_SUP_MARKER_RE = re.compile(r"^[\[(]?\^?(?:\d{1,3}|[a-z]|[*†‡]{1,3})[\])]?$")
_HEADING_JUNK = "¶#🔗§ "
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]+")  # Unicode Cc: become spaces
# Unicode Cf (zero-width, bidi controls, soft hyphen, tags...) and variation selectors: dropped.
# Spelled out (Unicode 14) so the canonical form does not move with Python's Unicode tables.
_FORMAT_RE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufe0e-\ufe0f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]+"
)


class ExtractionError(ValueError):
    """The page no longer has the shape the spec expects (or is not parseable)."""


@dataclass(frozen=True)
class TableInfo:
    """One table found on a page, for ``crawler page`` to show a maintainer what to pick."""

    index: int
    heading: str | None
    columns: tuple[str, ...]
    row_count: int
    selector: str | None  # a selector that finds it, when the table has an id or class


def _strip_controls(text: str) -> str:
    return _FORMAT_RE.sub("", _CONTROL_RE.sub(" ", text))


def normalise_text(text: str, limit: int | None = None) -> str:
    """Control characters stripped, whitespace collapsed; optionally capped at ``limit``."""
    text = " ".join(_strip_controls(text).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def normalise_cell(text: str) -> str:
    """The canonical form of one cell's rendered text (see the module docstring)."""
    text = _strip_controls(text)
    text = _MARK_RE.sub(lambda m: f" {_MARK_WORD[m.group(0)]} ", text)
    if _LEGEND_RE.search(text):
        bare = _LEGEND_RE.sub(" ", text)
        named = _LEGEND_RE.sub(lambda m: f" {_LEGEND_MARKS[m.group(0)]} ", text)
        text = bare if any(c.isalnum() for c in bare) else named
    text = " ".join(_FOOTNOTE_RE.sub(" ", text).split())
    text = _MARK_ECHO_RE.sub(r"\1", text)
    text = _TRAILING_MARK_RE.sub("", text)
    return normalise_text(mark_placeholder(text), MAX_CELL_CHARS)


def _short_text(tag: Tag, limit: int = 8) -> str | None:
    """The text of a tag with at most ``limit`` descendants (None when it has more)."""
    parts = []
    for n, node in enumerate(tag.descendants):
        if n >= limit:
            return None
        if isinstance(node, NavigableString) and not isinstance(node, _NON_TEXT):
            parts.append(str(node))
    return normalise_text("".join(parts))


def _render(root: Tag, *, links: bool, budget: list[int] | None = None) -> str:
    """Text of ``root`` with links as ``text <href>`` and images as alt text.

    Iterative, and it visits at most ``MAX_CELL_NODES`` nodes (then ends with "…"), so a
    hostile cell holding a huge or deeply nested subtree costs bounded time.
    """
    budget = [MAX_CELL_NODES] if budget is None else budget
    parts: list[str] = []
    stack: list[PageElement | None] = list(reversed(root.contents))
    while stack:
        budget[0] -= 1
        if budget[0] < 0:
            parts.append(" …")
            break
        node = stack.pop()
        if node is None:
            parts.append(" ")
        elif isinstance(node, NavigableString):
            if not isinstance(node, _NON_TEXT):
                parts.append(str(node))
        elif isinstance(node, Tag):
            name = node.name
            if name in _SKIP:
                continue
            if name in ("br", "hr"):
                parts.append(" ")
            elif name == "img":
                parts.append(f" {_attr(node, 'alt')} ")
            elif name in ("sup", "sub") and _SUP_MARKER_RE.match(_short_text(node) or "-"):
                continue
            elif name == "a" and links and _attr(node, "href"):
                href = normalise_text(_attr(node, "href"))
                text = normalise_text(_render(node, links=False, budget=budget))
                parts.append(f"<{href}>" if text in ("", href) else f"{text} <{href}>")
            elif name in _BLOCK:
                stack.append(None)
                stack.extend(reversed(node.contents))
                stack.append(None)
            else:
                stack.extend(reversed(node.contents))
    return "".join(parts)


def _attr(tag: Tag, name: str) -> str:
    value = tag.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)


def is_markdown(location: str | None, content_type: str | None) -> bool:
    """Markdown when the path ends .md/.markdown or the server says text/markdown|text/plain."""
    if content_type:
        mime = content_type.split(";", 1)[0].strip().lower()
        if mime in ("text/markdown", "text/x-markdown", "text/plain"):
            return True
    path = urlsplit(location or "").path.lower()
    return path.endswith((".md", ".markdown"))


def _html_inline(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """Raw inline HTML as written, except a tag no HTML element is named like
    (``rfc/<feature-name>``): that is text the author meant to show, and shows."""
    content = tokens[idx].content
    match = _TAG_NAME_RE.match(content)
    if match is not None and match.group(1).lower() not in _HTML_ELEMENTS:
        return escape(content)
    return content


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.add_render_rule("html_inline", _html_inline)
    return md


def _unfold_blocks(text: str) -> str:
    """MkDocs tabs (``=== "pip"``) and admonitions (``!!! note``, ``??? tip``) hold their
    content indented by four spaces, which CommonMark would read as a code block; the rendered
    page shows the content, so the marker becomes its title paragraph and the content is
    dedented (nested blocks too). Fenced code is left alone."""
    lines = text.split("\n")
    out: list[str] = []
    fence: str | None = None
    depth = 0  # indentation levels of the enclosing blocks, in units of four spaces
    for line in lines:
        body = line
        if depth:
            if not line.strip():
                out.append("")
                continue
            level = 0
            while level < depth and (body.startswith("    ") or body.startswith("\t")):
                body = body[1:] if body.startswith("\t") else body[4:]
                level += 1
            depth = level
        marker = _FENCE_RE.match(body)
        if fence is not None:
            if (
                marker is not None
                and marker.group(1)[0] == fence[0]
                and len(marker.group(1)) >= len(fence)
            ):
                fence = None
            out.append(body)
            continue
        if marker is not None:
            fence = marker.group(1)
            out.append(body)
            continue
        block = _BLOCK_MARKER_RE.match(body)
        if block is not None:
            title = block.group(1) or block.group(3) or block.group(2) or ""
            out.extend(["", f"<p>{escape(title.strip())}</p>", ""])
            depth += 1
            continue
        out.append(body)
    return "\n".join(out)


def parse_document(body: str, *, markdown: bool) -> BeautifulSoup:
    """Parse HTML (or Markdown rendered to HTML) into a soup; hostile input raises cleanly."""
    body = body.replace("\x00", "\ufffd")
    try:
        if markdown:
            body = _markdown().render(_unfold_blocks(body))
        return BeautifulSoup(body, "lxml")
    except RecursionError:
        raise ExtractionError("document is too deeply nested to parse") from None


def _bare_heading(text: str) -> str:
    """A heading as a reader names it: whitespace collapsed, and the decoration around it
    (anchor marks ``¶ # 🔗 §``, a leading or trailing emoji or symbol) left out."""
    text = normalise_text(text)
    start, end = 0, len(text)
    while start < end and (text[start] in _HEADING_JUNK or _decoration(text[start])):
        start += 1
    while end > start and (text[end - 1] in _HEADING_JUNK or _decoration(text[end - 1])):
        end -= 1
    return text[start:end]


def _decoration(char: str) -> bool:
    return unicodedata.category(char) in ("So", "Sk", "Mn", "Zs", "Cf")


def _heading_text(tag: Tag) -> str:
    block = tag.find(_HEADING_BODY)
    if block is None:
        return _bare_heading(_render(tag, links=False))
    # an unclosed heading swallowed what follows it: its title is the text before that
    parts: list[str] = []
    for node in tag.descendants:
        if node is block:
            break
        if isinstance(node, NavigableString) and not isinstance(node, _NON_TEXT):
            parts.append(str(node))
    return _bare_heading(" ".join(parts))


def _find_heading(soup: BeautifulSoup, heading: str) -> Tag:
    """The heading whose text is ``heading`` (case and whitespace aside): never a heading
    that merely contains it, which would silently pick another section's table."""
    target = _bare_heading(heading).casefold()
    headings = [h for h in soup.find_all(_HEADING_RE) if isinstance(h, Tag)]
    texts = [_heading_text(h) for h in headings]
    for tag, text in zip(headings, texts, strict=True):
        if text.casefold() == target:
            return tag
    shown = [repr(normalise_text(t, MAX_HEADING_CHARS)) for t in dict.fromkeys(texts) if t]
    listing = ", ".join(shown[:MAX_HEADINGS_LISTED])
    if len(shown) > MAX_HEADINGS_LISTED:
        listing += f", +{len(shown) - MAX_HEADINGS_LISTED} more"
    raise ExtractionError(
        f"page layout changed: heading {heading!r} not found; "
        + (f"the page's headings: {listing}" if listing else "the page has no headings")
    )


def _find_table(soup: BeautifulSoup, selector: str | None, heading: str | None) -> Tag:
    if selector is not None:
        try:
            match = soup.select_one(selector)
        except (SelectorSyntaxError, ValueError, NotImplementedError) as exc:
            raise ExtractionError(f"invalid CSS selector `{selector}`: {exc}") from None
        if match is None:
            raise ExtractionError(f"page layout changed: selector `{selector}` matched nothing")
        table = match if match.name == "table" else match.find("table")
        if not isinstance(table, Tag):
            raise ExtractionError(
                f"page layout changed: selector `{selector}` matched <{match.name}> "
                "with no table at or inside it"
            )
        return table
    if heading is None:
        raise ExtractionError("a table needs a selector or a heading")
    start = _find_heading(soup, heading)
    level = int(start.name[1])
    for node in start.next_elements:
        if not isinstance(node, Tag):
            continue
        if _HEADING_RE.match(node.name) and int(node.name[1]) <= level:
            break
        if node.name == "table":
            return node
    raise ExtractionError(
        f"page layout changed: no table under heading {heading!r} before the next heading"
    )


def _span(tag: Tag, name: str, cap: int) -> int:
    try:
        value = int(_attr(tag, name).strip() or "1")
    except ValueError:
        return 1
    return min(max(value, 1), cap)


def _table_rows(table: Tag) -> list[Tag]:
    """The table's own rows (never those of a table nested in a cell)."""
    rows: list[Tag] = []
    for child in table.children:
        if not isinstance(child, Tag):
            continue
        if child.name == "tr":
            rows.append(child)
        elif child.name in ("thead", "tbody", "tfoot"):
            rows.extend(c for c in child.children if isinstance(c, Tag) and c.name == "tr")
        if len(rows) > MAX_ROWS + 1:
            raise ExtractionError(f"table has more than {MAX_ROWS} rows: refusing to diff it")
    return rows


Cell = tuple[str, str]  # (text with links as ``text <href>``, the visible text alone)


def _cell(cell: Tag, links: bool) -> Cell:
    value = normalise_cell(_render(cell, links=links))
    if not links or cell.find("a") is None:
        return value, value
    return value, normalise_cell(_render(cell, links=False))


def _grid(rows: list[Tag]) -> list[list[Cell]]:
    """Normalised cells, row by row, with colspan/rowspan expanded (values repeated)."""
    grid: list[list[Cell]] = []
    pending: dict[int, tuple[Cell, int]] = {}  # column -> (value, rows still to cover)

    def take(out: list[Cell], col: int) -> None:
        value, left = pending.pop(col)
        out.append(value)
        if left > 1:
            pending[col] = (value, left - 1)

    for index, tr in enumerate(rows):
        out: list[Cell] = []
        for cell in tr.children:
            if not isinstance(cell, Tag) or cell.name not in ("td", "th"):
                continue
            while len(out) in pending:
                take(out, len(out))
            value = _cell(cell, index > 0)
            rowspan = _span(cell, "rowspan", MAX_ROWS)
            for _ in range(_span(cell, "colspan", MAX_SPAN)):
                if len(out) >= MAX_COLUMNS:
                    break
                if rowspan > 1:
                    pending[len(out)] = (value, rowspan - 1)
                out.append(value)
        for col in sorted(c for c in pending if c >= len(out)):
            out.extend([("", "")] * (col - len(out)))
            take(out, col)
        grid.append(out[:MAX_COLUMNS])
    return grid


def _columns(header: list[str], width: int) -> tuple[str, ...]:
    names: list[str] = []
    seen: dict[str, int] = {}
    for i in range(width):
        name = (header[i] if i < len(header) else "") or f"column {i + 1}"
        seen[name.casefold()] = seen.get(name.casefold(), 0) + 1
        names.append(name if seen[name.casefold()] == 1 else f"{name} ({seen[name.casefold()]})")
    return tuple(names)


def table_data(table: Tag) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """(column names, data rows in document order) of one <table>."""
    columns, rows = _table_cells(table)
    return columns, [tuple(value for value, _ in row) for row in rows]


def _table_cells(table: Tag) -> tuple[tuple[str, ...], list[tuple[Cell, ...]]]:
    grid = _grid(_table_rows(table))
    if not grid:
        return (), []
    header = [value for value, _ in grid[0]]
    body = grid[1:]
    columns = _columns(header, max([len(header), *(len(r) for r in body)]))
    rows = []
    for cells in body:
        padded = tuple(cells + [("", "")] * (len(columns) - len(cells)))
        values = [value for value, _ in padded]
        if any(values) and values[: len(header)] != header:
            rows.append(padded)
    return columns, rows


def _key_indexes(columns: tuple[str, ...], key: tuple[str, ...]) -> list[int]:
    folded = [c.casefold() for c in columns]
    indexes = []
    for name in key:
        wanted = normalise_cell(name).casefold()
        if wanted not in folded:
            raise ExtractionError(
                f"page layout changed: identity column {name!r} not in table columns "
                f"{list(columns)}"
            )
        indexes.append(folded.index(wanted))
    return indexes


def extract_table(
    soup: BeautifulSoup,
    *,
    name: str,
    selector: str | None = None,
    heading: str | None = None,
    key: tuple[str, ...] = (),
) -> ExtractedTable:
    """One table in canonical form: identity columns first, then the others by name; rows
    sorted by identity. With an empty ``key``, columns and rows stay in document order.
    Errors name the table: ``table 'hw': page layout changed: ...``."""
    try:
        columns, cells = _table_cells(_find_table(soup, selector, heading))
        if not columns:
            raise ExtractionError("page layout changed: the table has no rows")
        indexes = list(dict.fromkeys(_key_indexes(columns, key)))
    except ExtractionError as exc:
        raise ExtractionError(f"table {name!r}: {exc}") from None
    # a row is who it is by the key cells' visible text: a link target there (a URL losing
    # its trailing '#') must not turn a row into a removed row and an added one
    rows = [
        tuple(plain if i in indexes else value for i, (value, plain) in enumerate(row))
        for row in cells
    ]
    if indexes:
        rest = [i for i in range(len(columns)) if i not in indexes]
        order = indexes + sorted(rest, key=lambda i: (columns[i].casefold(), columns[i]))
        columns = tuple(columns[i] for i in order)
        rows = sorted(tuple(row[i] for i in order) for row in rows)
    return ExtractedTable(
        name=name,
        key_columns=columns[: len(indexes)],
        columns=columns,
        rows=tuple(rows),
    )


def page_text(soup: BeautifulSoup | Tag, limit: int | None = MAX_TEXT_CHARS) -> str:
    """The normalised text of a page or block, whitespace collapsed; an image reads as its
    alt text, as in a cell (a row of vendor logos names the vendors)."""
    parts: list[str] = []
    for node in soup.descendants:
        if isinstance(node, NavigableString):
            if not isinstance(node, _NON_TEXT):
                parts.append(str(node))
        elif isinstance(node, Tag) and node.name == "img":
            parts.append(_attr(node, "alt"))
    return normalise_text(" ".join(parts), limit)


def extract_pins(
    soup: BeautifulSoup, pins: dict[str, str], *, text_limit: int = DEFAULT_PIN_TEXT_LIMIT
) -> tuple[tuple[str, str | None], ...]:
    """(name, first group of the pattern's first match in the page text, or None), by name.

    A pattern scans the first ``text_limit`` characters, within ``patterns.MATCH_TIMEOUT``;
    a pin not found in a page cut short, or a pattern out of time, is an ExtractionError (the
    page's last good extraction is kept) rather than a pin that vanished."""
    text = page_text(soup, None)
    scanned = text[:text_limit]
    values: list[tuple[str, str | None]] = []
    for pin, pattern in sorted(pins.items()):
        subject = f"the page text ({len(scanned):,} characters)"
        try:
            match = search(pattern, scanned, subject=subject)
        except PatternTimeout as exc:
            raise ExtractionError(f"pin {pin!r}: {exc}") from exc
        except ValueError as exc:
            raise ExtractionError(f"pin {pin!r}: invalid regular expression: {exc}") from None
        if match is None and len(text) > text_limit:
            raise ExtractionError(
                f"pin {pin!r}: not found in the first {text_limit:,} characters of the page "
                f"text ({len(text):,} in all): raise settings.pin_text_limit in sources.yaml "
                "if the page is legitimate"
            )
        value = match.group(1) if match and match.re.groups else None
        values.append((pin, None if value is None else normalise_text(mark_placeholder(value))))
    return tuple(values)


def extract_page(
    spec: PageSpec,
    body: str,
    content_type: str | None,
    url: str,
    *,
    pin_text_limit: int = DEFAULT_PIN_TEXT_LIMIT,
) -> PageSnapshot:
    """Everything ``spec`` watches on one page; ExtractionError when the layout moved, and for
    anything unexpected while reading this one page (it must not end the audit)."""
    try:
        return _extract_page(spec, body, content_type, url, pin_text_limit)
    except ExtractionError:
        raise
    except Exception as exc:  # a parser or library failure on hostile input: this page only
        raise ExtractionError(f"cannot extract from the page: {type(exc).__name__}: {exc}") from exc


def _extract_page(
    spec: PageSpec, body: str, content_type: str | None, url: str, pin_text_limit: int
) -> PageSnapshot:
    markdown = is_markdown(spec.path, None) or is_markdown(url, content_type)
    try:
        soup = parse_document(body, markdown=markdown)
        tables = tuple(
            extract_table(soup, name=t.name, selector=t.selector, heading=t.heading, key=t.key)
            for t in spec.tables
        )
        pins = extract_pins(soup, spec.pins, text_limit=pin_text_limit)
        text = None
        if spec.text is not None:
            try:
                block = soup.select_one(spec.text)
            except (SelectorSyntaxError, ValueError, NotImplementedError) as exc:
                raise ExtractionError(f"invalid CSS selector `{spec.text}`: {exc}") from None
            if block is None:
                raise ExtractionError(
                    f"page layout changed: text selector `{spec.text}` matched nothing"
                )
            text = page_text(block)
    except RecursionError:
        raise ExtractionError("document is too deeply nested to extract from") from None
    return PageSnapshot(name=spec.name, url=url, tables=tables, pins=pins, text=text)


def _selector_hint(table: Tag) -> str | None:
    ident = _attr(table, "id").strip()
    if ident and re.fullmatch(r"[A-Za-z][\w-]*", ident):
        return f"table#{ident}"
    classes = [c for c in _attr(table, "class").split() if re.fullmatch(r"[A-Za-z][\w-]*", c)]
    return "table." + ".".join(classes) if classes else None


def describe_tables(soup: BeautifulSoup) -> list[TableInfo]:
    """The page's tables (the first ``MAX_TABLES``) in document order, with their heading."""
    infos: list[TableInfo] = []
    heading: Tag | None = None
    for node in soup.descendants:  # one pass: the heading above each table
        if not isinstance(node, Tag):
            continue
        if _HEADING_RE.match(node.name):
            heading = node
        elif node.name == "table":
            try:
                columns, rows = table_data(node)
                count = len(rows)
            except ExtractionError:
                columns, count = (), -1
            title = _heading_text(heading) if heading is not None else None
            infos.append(TableInfo(len(infos), title, columns, count, _selector_hint(node)))
            if len(infos) == MAX_TABLES:
                break
    return infos
