"""A page form is a module, as a forge is: one contract, (text, the page's options) → the
tables, pins and text the page watches, so the diff, the integration records, ``crawler page``
and the Explorer never depend on the form. Pure: no I/O.

* document forms (``markdown``, ``mdx``, ``html``, ``rst``) parse into the document model
  (``document.py``): tables by heading or selector, lists and enumerations as tables
  (``items.py``), pins by pattern over the page text, a text block by selector;
* data forms: ``csv`` and ``tsv`` are one table each (``csv.py``); ``keyvalue`` files are pins
  by key (``keyvalue.py``); ``text`` (any other file: Python, TOML) has pattern pins only;
  patterns read their text as it is.

The contract (``reading.py``): ``read(body, spec, context) → Reading``.

The form is ``form:`` when given, else the file's extension (of ``path:``, or of the URL's
path), else the content type the server gave, else HTML.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from soupsieve import SelectorSyntaxError

from crawler.analysis.pages.cells import MAX_TEXT_CHARS, ExtractionError
from crawler.analysis.pages.csv import DelimitedForm
from crawler.analysis.pages.document import Document, extract_table
from crawler.analysis.pages.items import extract_items
from crawler.analysis.pages.keyvalue import KeyValueForm, PlainTextForm
from crawler.analysis.pages.markdown import parse_html, parse_markdown, parse_mdx
from crawler.analysis.pages.reading import PageForm, ReadContext, Reading
from crawler.analysis.pages.rst import parse_rst
from crawler.analysis.pages.sections import extract_pins, page_text, section_text
from crawler.config import PageSpec, TableSpec
from crawler.config.pages import TextSection
from crawler.model import ExtractedTable

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
class DocumentForm:
    """A form read through the document model (Markdown, MDX, HTML, reStructuredText): its
    module parses the page, then tables, lists, pins and the text block are found alike."""

    name: str
    parse: Callable[[str], Document]

    def read(self, body: str, spec: PageSpec, context: ReadContext) -> Reading:
        if spec.pin_keys:
            raise ExtractionError(
                f"pins by key (pins: all, or a list of keys) read a KEY=VALUE file: this page "
                f"is read as {self.name}; set 'form: keyvalue' if it is one"
            )
        document = self.parse(body)
        tables = tuple(_document_table(document, table) for table in spec.tables)
        text = page_text(document.soup, None)
        pins = extract_pins(text, spec.pins, text_limit=context.pin_text_limit)
        return Reading(tables, pins, _text_block(document, spec.text))


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
    "markdown": DocumentForm("markdown", parse_markdown),
    "mdx": DocumentForm("mdx", parse_mdx),
    "html": DocumentForm("html", parse_html),
    "rst": DocumentForm("rst", parse_rst),
    "csv": DelimitedForm("csv", ","),
    "tsv": DelimitedForm("tsv", "\t"),
    "keyvalue": KeyValueForm(),
    "text": PlainTextForm(),
}
