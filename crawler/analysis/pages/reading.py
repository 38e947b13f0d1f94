"""The contract every page form keeps: (text, the page's options) → a ``Reading``, the tables,
pins and text block the page watches, whatever the form. Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from crawler.analysis.pages.cells import ExtractionError, normalise_text
from crawler.analysis.pages.sections import extract_pins
from crawler.config import PageSpec
from crawler.model import ExtractedTable

Pins = tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class Reading:
    """What one page says: the tables, pins and text block its spec watches."""

    tables: tuple[ExtractedTable, ...]
    pins: Pins
    text: str | None


@dataclass(frozen=True)
class ReadContext:
    """What a reading needs beside the page: how much text a pin pattern scans, and the pin
    names of the page's last good reading (``pins: all`` keeps watching a key it had)."""

    pin_text_limit: int
    known_keys: tuple[str, ...] = ()


class PageForm(Protocol):
    """One way of reading a page (one module each: markdown, html, rst, csv, keyvalue)."""

    @property
    def name(self) -> str: ...

    def read(self, body: str, spec: PageSpec, context: ReadContext) -> Reading: ...


def data_file_pins(form: str, body: str, spec: PageSpec, context: ReadContext) -> Pins:
    """Pattern pins over a data file's text as written; a data file has no block to select."""
    if spec.text is not None:
        raise ExtractionError(
            f"'text' selects a block of an HTML-shaped page: a {form} file has none"
        )
    text = normalise_text(body, None)
    return extract_pins(text, spec.pins, text_limit=context.pin_text_limit)
