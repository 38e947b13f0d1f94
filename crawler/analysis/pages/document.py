"""The document model every HTML-shaped page form reads: a BeautifulSoup tree (an HTML page, or
Markdown, MDX and reStructuredText rendered to HTML) whose tables are found and read the same
way whatever the form was. Pure: no I/O.

Headings, sections, the page text and pins: ``sections.py``. A row's identity is the visible
text of its key cells (a link target there is ignored).

Cells are normalised by ``cells.normalise_cell``; header cells get the same treatment (links as
plain text). A header may span several rows (``<thead>`` rows, or leading rows of ``<th>``
only): a column is named by its header cells joined from the top (``SDK version / 1.22``), a
header row is never a data row, and a column added under a group is that one column added. An
empty header is ``column N`` and a repeated one ``Name (2)``. A table is stored in canonical
form: identity columns first (in ``key`` order), then the other columns sorted by name, rows
sorted by identity (then whole row). So re-sorted rows, re-ordered columns and re-wrapped text
give the same snapshot, byte for byte. colspan/rowspan repeat the value into each covered cell;
rows of nested tables are not the outer table's rows; empty rows and repeated header rows are
skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bs4 import BeautifulSoup, Tag

from crawler.analysis.pages.cells import (
    MAX_COLUMNS,
    MAX_ROWS,
    MAX_SPAN,
    MAX_TABLES,
    ExtractionError,
    attribute,
    normalise_cell,
    render_text,
)
from crawler.analysis.pages.sections import HEADING_RE, find_heading, heading_text, select_one
from crawler.model import ExtractedTable


@dataclass(frozen=True)
class Document:
    """A page in the document model; ``problems``: what its parser could not read (the first
    few), to explain a table that is not found."""

    soup: BeautifulSoup
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class TableInfo:
    """One table found on a page, for ``crawler page`` to show a maintainer what to pick."""

    index: int
    heading: str | None
    columns: tuple[str, ...]
    row_count: int
    selector: str | None  # a selector that finds it, when the table has an id or class


def _find_table(soup: BeautifulSoup, selector: str | None, heading: str | None) -> Tag:
    if selector is not None:
        match = select_one(soup, selector)
        table = match if match.name == "table" else match.find("table")
        if not isinstance(table, Tag):
            raise ExtractionError(
                f"page layout changed: selector `{selector}` matched <{match.name}> "
                "with no table at or inside it"
            )
        return table
    if heading is None:
        first = soup.find("table")
        if not isinstance(first, Tag):
            raise ExtractionError("page layout changed: the page has no table")
        return first
    start = find_heading(soup, heading)
    level = int(start.name[1])
    for node in start.next_elements:
        if not isinstance(node, Tag):
            continue
        if HEADING_RE.match(node.name) and int(node.name[1]) <= level:
            break
        if node.name == "table":
            return node
    raise ExtractionError(
        f"page layout changed: no table under heading {heading!r} before the next heading"
    )


def _span(tag: Tag, name: str, cap: int) -> int:
    try:
        value = int(attribute(tag, name).strip() or "1")
    except ValueError:
        return 1
    return min(max(value, 1), cap)


def _table_rows(table: Tag) -> tuple[list[Tag], int]:
    """The table's own rows (never those of a table nested in a cell), and how many of the
    leading ones are its header: the ``<thead>`` rows, else the leading rows of ``<th>`` cells
    only (when some row is not), else the first row."""
    rows: list[Tag] = []
    in_head = 0
    for child in table.children:
        if not isinstance(child, Tag):
            continue
        if child.name == "tr":
            rows.append(child)
        elif child.name in ("thead", "tbody", "tfoot"):
            found = [c for c in child.children if isinstance(c, Tag) and c.name == "tr"]
            if child.name == "thead" and len(rows) == in_head:
                in_head += len(found)
            rows.extend(found)
        if len(rows) > MAX_ROWS + 1:
            raise ExtractionError(f"table has more than {MAX_ROWS} rows: refusing to diff it")
    if in_head:
        return rows, min(in_head, len(rows) - 1) or 1
    leading = 0
    for tr in rows:
        cells = [c for c in tr.children if isinstance(c, Tag) and c.name in ("td", "th")]
        if not cells or any(c.name != "th" for c in cells):
            break
        leading += 1
    return rows, leading if 1 < leading < len(rows) else 1


Cell = tuple[str, str]  # (text with links as ``text <href>``, the visible text alone)


def _cell(cell: Tag, links: bool) -> Cell:
    value = normalise_cell(render_text(cell, links=links))
    if not links or cell.find("a") is None:
        return value, value
    return value, normalise_cell(render_text(cell, links=False))


def _grid(rows: list[Tag], header_rows: int) -> list[list[Cell]]:
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
            value = _cell(cell, index >= header_rows)
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


def _header_names(header: list[list[str]], width: int) -> list[str]:
    """Each column's header cells joined from the top (``SDK version / 1.22``); a cell that
    spans rows (repeated below itself) and empty cells are named once."""
    names = []
    for i in range(width):
        parts: list[str] = []
        for row in header:
            cell = row[i] if i < len(row) else ""
            if cell and (not parts or parts[-1] != cell):
                parts.append(cell)
        names.append(" / ".join(parts))
    return names


def column_names(header: list[str], width: int) -> tuple[str, ...]:
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
    rows, header_rows = _table_rows(table)
    grid = _grid(rows, header_rows)
    if not grid:
        return (), []
    header = [[value for value, _ in row] for row in grid[:header_rows]]
    body = grid[header_rows:]
    width = max(len(r) for r in grid)
    columns = column_names(_header_names(header, width), width)
    return columns, cells_to_rows(header, body, len(columns))


def cells_to_rows(
    header: list[list[str]], body: list[list[Cell]], width: int
) -> list[tuple[Cell, ...]]:
    """The data rows, padded to ``width``: empty rows and repeats of a header row left out."""
    rows = []
    for cells in body:
        padded = tuple(cells + [("", "")] * (width - len(cells)))
        values = [value for value, _ in padded]
        if any(values) and not any(values[: len(h)] == h for h in header):
            rows.append(padded)
    return rows


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
    """One table in canonical form (see ``canonical_table``); with neither a selector nor a
    heading, the page's first table. Errors name the table: ``table 'hw': page layout
    changed: ...``."""
    try:
        columns, cells = _table_cells(_find_table(soup, selector, heading))
        if not columns:
            raise ExtractionError("page layout changed: the table has no rows")
        return canonical_table(name, columns, cells, key)
    except ExtractionError as exc:
        raise ExtractionError(f"table {name!r}: {exc}") from None


def canonical_table(
    name: str, columns: tuple[str, ...], cells: list[tuple[Cell, ...]], key: tuple[str, ...]
) -> ExtractedTable:
    """Identity columns first, then the others by name; rows sorted by identity. With an
    empty ``key``, columns and rows stay in document order."""
    indexes = list(dict.fromkeys(_key_indexes(columns, key)))
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


def _selector_hint(table: Tag) -> str | None:
    ident = attribute(table, "id").strip()
    if ident and re.fullmatch(r"[A-Za-z][\w-]*", ident):
        return f"table#{ident}"
    classes = [c for c in attribute(table, "class").split() if re.fullmatch(r"[A-Za-z][\w-]*", c)]
    return "table." + ".".join(classes) if classes else None


def describe_tables(soup: BeautifulSoup) -> list[TableInfo]:
    """The page's tables (the first ``MAX_TABLES``) in document order, with their heading."""
    infos: list[TableInfo] = []
    heading: Tag | None = None
    for node in soup.descendants:  # one pass: the heading above each table
        if not isinstance(node, Tag):
            continue
        if HEADING_RE.match(node.name):
            heading = node
        elif node.name == "table":
            try:
                columns, rows = table_data(node)
                count = len(rows)
            except ExtractionError:
                columns, count = (), -1
            title = heading_text(heading) if heading is not None else None
            infos.append(TableInfo(len(infos), title, columns, count, _selector_hint(node)))
            if len(infos) == MAX_TABLES:
                break
    return infos
