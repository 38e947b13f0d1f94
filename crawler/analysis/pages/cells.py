"""One cell's (or list item's) text in the canonical form every page form stores, and the
caps every reader shares. Pure: no I/O.

Cell normalisation (``normalise_cell``), applied to every header, data cell and list item:


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
  superscript digits, and trailing ``*``/``†``/``‡`` (not a version wildcard: ``== 4.57.*``);
* control and format characters (zero-width, bidi overrides, soft hyphen) are stripped,
  whitespace (including ``<br>`` and block boundaries) collapses to one space;
* a cell is capped at ``MAX_CELL_CHARS`` characters (truncated with ``…``).

"""

from __future__ import annotations

import re
from collections.abc import Collection

from bs4 import Tag
from bs4.element import (
    NavigableString,
    PageElement,
    PreformattedString,
    Script,
    Stylesheet,
    TemplateString,
)

from crawler.analysis.placeholders import mark_placeholder

MAX_CELL_CHARS = 500
MAX_ROWS = 2000
MAX_COLUMNS = 100
MAX_SPAN = 100
MAX_TEXT_CHARS = 200_000
MAX_CELL_NODES = 2_000
MAX_TABLES = 200
MAX_HEADINGS_LISTED = 30  # in a "heading not found" error
MAX_HEADING_CHARS = 80

# fmt: off
_BLOCK = frozenset({
    "address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt", "figcaption",
    "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "li", "main", "nav",
    "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr",
    "ul",
})
_SKIP = frozenset({"script", "style", "template", "head", "noscript"})
NON_TEXT = (PreformattedString, Script, Stylesheet, TemplateString)
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
# "🚧 In progress" says it twice: keep one
_MARK_ECHO_RE = re.compile(r"\b(yes|no|in progress)\s+\1\b", re.IGNORECASE)
_FOOTNOTE_RE = re.compile(r"\[\^[\w-]{1,20}\]|\[\d{1,3}\]|[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_TRAILING_MARK_RE = re.compile(r"(?<=\S)(?<!\.)\s*[*†‡]+$")  # "4.57.*" is a wildcard, kept
_SUP_MARKER_RE = re.compile(r"^[\[(]?\^?(?:\d{1,3}|[a-z]|[*†‡]{1,3})[\])]?$")
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
        if isinstance(node, NavigableString) and not isinstance(node, NON_TEXT):
            parts.append(str(node))
    return normalise_text("".join(parts))


def render_text(
    root: Tag, *, links: bool, budget: list[int] | None = None, skip: Collection[int] = ()
) -> str:
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
            if not isinstance(node, NON_TEXT):
                parts.append(str(node))
        elif isinstance(node, Tag):
            name = node.name
            if name in _SKIP or id(node) in skip:
                continue
            if name in ("br", "hr"):
                parts.append(" ")
            elif name == "img":
                parts.append(f" {attribute(node, 'alt')} ")
            elif name in ("sup", "sub") and _SUP_MARKER_RE.match(_short_text(node) or "-"):
                continue
            elif name == "a" and links and attribute(node, "href"):
                href = normalise_text(attribute(node, "href"))
                text = normalise_text(render_text(node, links=False, budget=budget))
                parts.append(f"<{href}>" if text in ("", href) else f"{text} <{href}>")
            elif name in _BLOCK:
                stack.append(None)
                stack.extend(reversed(node.contents))
                stack.append(None)
            else:
                stack.extend(reversed(node.contents))
    return "".join(parts)


def attribute(tag: Tag, name: str) -> str:
    value = tag.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)
