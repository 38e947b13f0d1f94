"""Markdown and MDX pages: rendered to HTML by markdown-it-py (CommonMark + pipe tables + raw
HTML), so GitHub pipe tables and HTML tables embedded in a README take the path of an HTML page.
Pure: no I/O.

* MkDocs tabs and admonitions (``=== "pip"``, ``!!! note``) are unfolded first (their indented
  content is the page's content, not a code block); an inline "tag" no HTML element is named
  like (``rfc/<feature-name>``) stays text.
* YAML front matter is not content: its ``title`` is the page's first heading (a page whose
  title lives only there still has a heading to select).
* MyST (Sphinx's Markdown): a ```` ```{list-table} ```` block is a table (``:header-rows:``
  rows are its header, ``:stub-columns:`` its row headers), an admonition block
  (```` ```{note} ````) is content, and a ``(label)=`` target line is dropped.
* MDX: ESM ``import``/``export`` lines and ``{/* comments */}`` are dropped, and so are the tags
  of JSX components (``<Tabs>``, ``<Note />``: named with a capital), keeping what they wrap;
  HTML-named elements (``<span className=...>``) read as HTML.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape
from typing import Any

import yaml
from bs4 import BeautifulSoup, Tag
from markdown_it import MarkdownIt
from markdown_it.common.html_blocks import block_names
from markdown_it.token import Token

from crawler.analysis.pages.cells import MAX_ROWS, ExtractionError
from crawler.analysis.pages.document import Document
from crawler.analysis.pages.sections import bare_heading, heading_text, headings

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
# markdown-it and the document model take some 20 s per MB of list items: a larger page is
# refused rather than read for minutes (an HTML page, parsed by lxml, goes to the page size cap)
MAX_MARKDOWN_CHARS = 2_000_000
_FRONT_MATTER_RE = re.compile(
    r"\A\ufeff?---[ \t]*\n(.{0,65536}?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S
)
_MYST_DIRECTIVE_RE = re.compile(r"^\{([\w-]+)\}(.*)$")
_MYST_TARGET_RE = re.compile(r"^ {0,3}\([\w.:-]{1,200}\)=[ \t]*$", re.M)
_ROW_START_RE = re.compile(r"^[*+-][ \t]", re.M)
_OPTION_RE = re.compile(r"^:([\w-]+):(.*)$")
_ADMONITIONS = frozenset({
    "admonition", "attention", "caution", "danger", "error", "hint", "important", "note",
    "seealso", "tip", "warning", "versionadded", "versionchanged", "deprecated",
})  # fmt: skip
_ESM_RE = re.compile(r"^(?:import|export)\s")
_JSX_COMMENT_RE = re.compile(r"\{/\*.*?\*/\}")
# a component is named with a capital (or dotted: <Tabs.Item>); its attributes may hold {...}
_JSX_TAG_RE = re.compile(r"</?[A-Z][\w.]*(?:\s(?:[^<>{}]|\{[^{}]*\})*)?/?>")


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
    default_fence = md.renderer.rules["fence"]  # type: ignore[attr-defined]

    def fence(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        directive = _MYST_DIRECTIVE_RE.match(token.info.strip())
        if directive is not None:
            name, argument = directive.group(1).lower(), directive.group(2).strip()
            body, settings = _directive_options(token.content)
            if name == "list-table":
                table = _list_table(md, body, settings, argument)
                if table is not None:
                    return table
            elif name in _ADMONITIONS:
                title = f"<p>{escape(argument)}</p>" if argument else ""
                return f"<div>{title}{md.render(body)}</div>"
        return str(default_fence(tokens, idx, options, env))

    md.add_render_rule("fence", fence)
    return md


def _directive_options(content: str) -> tuple[str, dict[str, str]]:
    """A MyST directive's body and its leading ``:name: value`` options."""
    lines = content.split("\n")
    settings: dict[str, str] = {}
    while lines and (option := _OPTION_RE.match(lines[0])) is not None:
        settings[option.group(1).lower()] = option.group(2).strip()
        lines.pop(0)
    return "\n".join(lines), settings


def _count(value: str | None) -> int:
    try:
        return min(max(int(value or "0"), 0), MAX_ROWS)
    except ValueError:
        return 0


def _list_table(md: MarkdownIt, body: str, settings: dict[str, str], title: str) -> str | None:
    """A ``{list-table}``'s two-level list as an HTML table (None when it holds no list)."""
    outer = BeautifulSoup(md.render(_first_rows(body)), "lxml").find(["ul", "ol"])
    if not isinstance(outer, Tag):
        return None
    header_rows, stubs = _count(settings.get("header-rows")), _count(settings.get("stub-columns"))
    head: list[str] = []
    rows: list[str] = []
    for item in outer.find_all("li", recursive=False, limit=MAX_ROWS + 2):
        inner = item.find(["ul", "ol"], recursive=False)
        cells = inner.find_all("li", recursive=False) if isinstance(inner, Tag) else []
        header = len(head) < header_rows
        html = "".join(
            f"<{tag}>{cell.decode_contents()}</{tag}>"
            for n, cell in enumerate(cells)
            for tag in ("th" if header or n < stubs else "td",)
        )
        (head if header else rows).append(f"<tr>{html}</tr>")
    caption = f"<caption>{escape(title)}</caption>" if title else ""
    return f"<table>{caption}<thead>{''.join(head)}</thead><tbody>{''.join(rows)}</tbody></table>\n"


def _first_rows(body: str) -> str:
    """The list-table's body up to one row more than a table may hold (the reader then refuses
    it), so a hostile block of a million rows is not rendered whole first."""
    for starts, match in enumerate(_ROW_START_RE.finditer(body), 1):
        if starts > MAX_ROWS + 2:
            return body[: match.start()]
    return body


def _front_matter(text: str) -> tuple[str, str | None]:
    """The page without its YAML front matter, and the front matter's ``title``."""
    match = _FRONT_MATTER_RE.match(text)
    if match is None:
        return text, None
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        data = None
    title = data.get("title") if isinstance(data, dict) else None
    return text[match.end() :], title.strip() if isinstance(title, str) and title.strip() else None


def _with_title(document: Document, title: str | None) -> Document:
    """The front matter's title as the first heading, unless the page repeats it as one."""
    soup = document.soup
    if title is None or any(heading_text(h) == bare_heading(title) for h in headings(soup)):
        return document
    heading = soup.new_tag("h1")
    heading.string = title
    (soup.body or soup).insert(0, heading)
    return document


def _drop_myst_targets(text: str) -> str:
    return _MYST_TARGET_RE.sub("", text)


def _drop_jsx(text: str) -> str:
    """MDX's JavaScript left out: ESM lines, ``{/* comments */}`` and component tags."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        marker = _FENCE_RE.match(line)
        if fence is not None or marker is not None:
            if fence is None and marker is not None:
                fence = marker.group(1)
            elif marker is not None and fence is not None and marker.group(1).startswith(fence):
                fence = None
            out.append(line)
            continue
        if _ESM_RE.match(line):
            continue
        out.append(_JSX_TAG_RE.sub("", _JSX_COMMENT_RE.sub("", line)))
    return "\n".join(out)


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


def parse_markdown(body: str) -> Document:
    """A Markdown page (with MyST blocks) as the document model; hostile input raises cleanly."""
    _check_size(body, "Markdown")
    text, title = _front_matter(body)
    return _with_title(_soup(_render(_unfold_blocks(_drop_myst_targets(text)))), title)


def parse_mdx(body: str) -> Document:
    """An MDX page: Markdown once its JavaScript is left out."""
    _check_size(body, "MDX")
    text, title = _front_matter(body)
    return _with_title(_soup(_render(_unfold_blocks(_drop_jsx(text)))), title)


def _check_size(body: str, form: str) -> None:
    if len(body) > MAX_MARKDOWN_CHARS:
        raise ExtractionError(
            f"the {form} page is {len(body):,} characters, over the {MAX_MARKDOWN_CHARS:,} "
            "the reader parses"
        )


def parse_html(body: str) -> Document:
    return _soup(body)


def _render(text: str) -> str:
    try:
        return str(_markdown().render(text.replace("\x00", "\ufffd")))
    except RecursionError:
        raise ExtractionError("document is too deeply nested to parse") from None


def _soup(html: str) -> Document:
    try:
        return Document(BeautifulSoup(html.replace("\x00", "\ufffd"), "lxml"))
    except RecursionError:
        raise ExtractionError("document is too deeply nested to parse") from None
