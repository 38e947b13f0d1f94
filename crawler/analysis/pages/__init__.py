"""Reading watched pages, whatever form they take: Markdown (with MyST blocks), MDX, HTML,
reStructuredText, CSV/TSV and KEY=VALUE files (one module each, ``forms.py`` for the contract
and the choice). Pure: no I/O.

``read_page`` is what the audit calls; ``preview`` is what ``crawler page`` shows.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from crawler.analysis.pages.cells import ExtractionError, normalise_cell
from crawler.analysis.pages.csv import read_delimited
from crawler.analysis.pages.document import TableInfo, describe_tables
from crawler.analysis.pages.forms import FORMS, DocumentForm, form_of
from crawler.analysis.pages.keyvalue import read_settings
from crawler.analysis.pages.reading import ReadContext
from crawler.config import DEFAULT_PIN_TEXT_LIMIT, PageSpec, TableSpec
from crawler.model import PageSnapshot

__all__ = ["ExtractionError", "form_of", "normalise_cell", "preview", "read_page"]


def read_page(
    spec: PageSpec,
    body: str,
    content_type: str | None,
    url: str,
    *,
    pin_text_limit: int = DEFAULT_PIN_TEXT_LIMIT,
    earlier: PageSnapshot | None = None,
) -> PageSnapshot:
    """Everything ``spec`` watches on one page; ExtractionError when the layout moved, and for
    anything unexpected while reading this one page (it must not end the audit). ``earlier``:
    the page's last good reading (under ``pins: all``, a key it had that the file no longer
    sets reads as not found, rather than no longer being watched)."""
    form = FORMS[form_of(spec.form, spec.path or url, content_type)]
    known = tuple(name for name, _ in earlier.pins) if earlier is not None else ()
    try:
        reading = form.read(body, spec, ReadContext(pin_text_limit, known))
    except ExtractionError:
        raise
    except RecursionError:
        raise ExtractionError("document is too deeply nested to extract from") from None
    except Exception as exc:  # a parser or library failure on hostile input: this page only
        raise ExtractionError(f"cannot extract from the page: {type(exc).__name__}: {exc}") from exc
    return PageSnapshot(
        name=spec.name, url=url, tables=reading.tables, pins=reading.pins, text=reading.text
    )


def preview(
    body: str,
    form_name: str,
    table: TableSpec | None,
    pins: dict[str, str] | None,
    pin_text_limit: int,
) -> dict[str, Any]:
    """What ``crawler page --json`` prints for one page: the tables it has (or, for a KEY=VALUE
    file, its keys), or the rows of the one ``table`` chooses; and the pins asked for."""
    form = FORMS[form_name]
    data: dict[str, Any] = {"form": form_name, "markdown": form_name in ("markdown", "mdx")}
    if table is None and form_name == "keyvalue":
        data["keys"] = read_settings(body)
    elif table is None and form_name == "text":
        data["tables"] = []  # pattern pins only
    elif table is None and isinstance(form, DocumentForm):
        data["tables"] = [asdict(info) for info in describe_tables(form.parse(body).soup)]
    elif table is None:
        columns, rows = read_delimited(body, "\t" if form_name == "tsv" else ",")
        data["tables"] = [asdict(TableInfo(0, None, columns, len(rows), None))]
    tables = (table,) if table is not None else ()
    if tables or pins:
        spec = PageSpec(name="preview", url="https://preview.invalid", tables=tables,
                        pins=pins or {}, form=form_name)  # type: ignore[arg-type]  # fmt: skip
        reading = form.read(body, spec, ReadContext(pin_text_limit))
        for read, chosen in zip(reading.tables, tables, strict=True):
            data["table"] = {
                "selector": chosen.selector,
                "heading": chosen.heading,
                "items": chosen.items,
                "labels": list(chosen.labels),
                "columns": list(read.columns),
                "key_columns": list(read.key_columns),
                "rows": [dict(zip(read.columns, row, strict=True)) for row in read.rows],
            }
        if pins:
            data["pins"] = dict(reading.pins)
    return data
