"""A page form is a module, as a forge is: one contract, (text, the page's options) → the
tables, pins and text the page watches, so the diff, the integration records, ``crawler page``
and the Explorer never depend on the form. Pure: no I/O.

* document forms (``markdown``, ``mdx``, ``html``, ``rst``) parse into the document model
  (``document.py``): tables by heading or selector, lists and enumerations as tables
  (``items.py``), pins by pattern over the page text, a text block by selector;
* data forms: ``csv`` and ``tsv`` are one table each (``csv.py``); ``keyvalue`` files are pins
  by key (``keyvalue.py``); patterns read their text as it is.

The form is ``form:`` when given, else the file's extension (of ``path:``, or of the URL's
path), else the content type the server gave, else HTML.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from soupsieve import SelectorSyntaxError

from crawler.analysis.pages.cells import MAX_TEXT_CHARS, ExtractionError, normalise_text
from crawler.analysis.pages.csv import extract_delimited
from crawler.analysis.pages.document import (
    Document,
    extract_pins,
    extract_table,
    page_text,
    section_text,
)
from crawler.analysis.pages.items import extract_items
from crawler.analysis.pages.keyvalue import extract_keys
from crawler.analysis.pages.markdown import parse_html, parse_markdown, parse_mdx
from crawler.analysis.pages.rst import parse_rst
from crawler.config import PageSpec, TableSpec
from crawler.config.pages import TextSection
from crawler.model import ExtractedTable

Pins = tuple[tuple[str, str | None], ...]

# fmt: off
_EXTENSIONS = {
    ".md": "markdown", ".markdown": "markdown", ".txt": "markdown", ".mdx": "mdx",
    ".rst": "rst", ".rest": "rst", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
    ".properties": "keyvalue", ".env": "keyvalue",
    ".html": "html", ".htm": "html", ".xhtml": "html",
}
_MEDIA_TYPES = {
    "text/markdown": "markdown", "text/x-markdown": "markdown", "text/plain": "markdown",
    "text/mdx": "mdx", "text/x-rst": "rst", "text/prs.fallenstein.rst": "rst",
    "text/csv": "csv", "text/tab-separated-values": "tsv",
}
# fmt: on


def form_of(explicit: str | None, location: str | None, content_type: str | None) -> str:
    """The form a page is read as (see the module docstring)."""
    if explicit:
        return explicit
    path = urlsplit(location or "").path
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    return _MEDIA_TYPES.get(mime, "html")


@dataclass(frozen=True)
class Reading:
    """What one page says: the tables, pins and text block its spec watches."""

    tables: tuple[ExtractedTable, ...]
    pins: Pins
    text: str | None


@dataclass(frozen=True)
class PageForm:
    """One way of reading a page: ``read`` gives what a spec watches, ``outline`` what
    ``crawler page`` lists before anything is chosen."""

    name: str
    parse: Callable[[str], Document] | None  # a document form; None for a data form

    def read(
        self, body: str, spec: PageSpec, pin_text_limit: int, known_keys: tuple[str, ...] = ()
    ) -> Reading:
        if self.parse is None:
            return self._read_data(body, spec, pin_text_limit, known_keys)
        document = self.parse(body)
        tables = tuple(_document_table(document, table) for table in spec.tables)
        if spec.pin_keys:
            raise ExtractionError(
                f"pins by key (pins: all, or a list of keys) read a KEY=VALUE file: this page "
                f"is read as {self.name}; set 'form: keyvalue' if it is one"
            )
        pins = extract_pins(page_text(document.soup, None), spec.pins, text_limit=pin_text_limit)
        return Reading(tables, pins, _text_block(document, spec.text))

    def _read_data(
        self, body: str, spec: PageSpec, pin_text_limit: int, known_keys: tuple[str, ...]
    ) -> Reading:
        if spec.text is not None:
            raise ExtractionError(
                f"'text' selects a block of an HTML-shaped page: a {self.name} file has none"
            )
        text = normalise_text(body, None)
        pins = extract_pins(text, spec.pins, text_limit=pin_text_limit)
        if self.name == "keyvalue":
            if spec.tables:
                raise ExtractionError("a KEY=VALUE file holds pins, not tables: use 'pins'")
            keys = extract_keys(body, spec.pin_keys, known_keys) if spec.pin_keys else ()
            return Reading((), tuple(sorted((*pins, *keys))), None)
        if spec.pin_keys:
            raise ExtractionError(f"pins by key read a KEY=VALUE file, not a {self.name} file")
        delimiter = "\t" if self.name == "tsv" else ","
        tables = tuple(_data_table(body, table, self.name, delimiter) for table in spec.tables)
        return Reading(tables, pins, None)


def _document_table(document: Document, table: TableSpec) -> ExtractedTable:
    try:
        if table.items is not None:
            return extract_items(
                document.soup,
                name=table.name,
                kind=table.items,
                selector=table.selector,
                heading=table.heading,
                labels=table.labels,
            )
        return extract_table(
            document.soup,
            name=table.name,
            selector=table.selector,
            heading=table.heading,
            key=table.key,
        )
    except ExtractionError as exc:
        if not document.problems:
            raise
        problems = "; ".join(document.problems)
        raise ExtractionError(f"{exc} (the page's markup has errors: {problems})") from None


def _data_table(body: str, table: TableSpec, form: str, delimiter: str) -> ExtractedTable:
    if table.items is not None or table.heading is not None or table.selector is not None:
        raise ExtractionError(
            f"table {table.name!r}: a {form} file is one table: give it 'key' only "
            "(no 'heading', 'selector' or 'items')"
        )
    return extract_delimited(body, name=table.name, key=table.key, delimiter=delimiter)


def _text_block(document: Document, selector: str | TextSection | None) -> str | None:
    if selector is None:
        return None
    if isinstance(selector, TextSection):
        return section_text(document.soup, selector.heading)
    try:
        block = document.soup.select_one(selector)
    except (SelectorSyntaxError, ValueError, NotImplementedError) as exc:
        raise ExtractionError(f"invalid CSS selector `{selector}`: {exc}") from None
    if block is None:
        raise ExtractionError(f"page layout changed: text selector `{selector}` matched nothing")
    return page_text(block, MAX_TEXT_CHARS)


FORMS: dict[str, PageForm] = {
    "markdown": PageForm("markdown", parse_markdown),
    "mdx": PageForm("mdx", parse_mdx),
    "html": PageForm("html", parse_html),
    "rst": PageForm("rst", parse_rst),
    "csv": PageForm("csv", None),
    "tsv": PageForm("tsv", None),
    "keyvalue": PageForm("keyvalue", None),
}
