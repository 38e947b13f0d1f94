"""CSV and TSV files (ROCm's historical matrix, vLLM TPU's support matrices, llama.cpp's op
tables): one table per file, read by the ``csv`` module. Pure: no I/O.

The first row names the columns (normalised as header cells: an empty one is ``column N``, a
repeated one ``Name (2)``); every cell is normalised as a page's cells are, so a ✅ in a CSV
reads ``yes`` as in a README. A file of more than ``MAX_ROWS`` rows, or with a field past the
``csv`` module's field limit, is an error, never a table cut short.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from crawler.analysis.pages.cells import MAX_COLUMNS, MAX_ROWS, ExtractionError, normalise_cell
from crawler.analysis.pages.document import Cell, canonical_table, cells_to_rows, column_names
from crawler.analysis.pages.reading import ReadContext, Reading, data_file_pins
from crawler.config import PageSpec, TableSpec
from crawler.model import ExtractedTable


@dataclass(frozen=True)
class DelimitedForm:
    """CSV (``,``) or TSV (``\\t``): every table the page watches is the file's one table."""

    name: str
    delimiter: str

    def read(self, body: str, spec: PageSpec, context: ReadContext) -> Reading:
        pins = data_file_pins(self.name, body, spec, context)
        if spec.pin_keys:
            raise ExtractionError(f"pins by key read a KEY=VALUE file, not a {self.name} file")
        return Reading(tuple(self._table(body, table) for table in spec.tables), pins, None)

    def _table(self, body: str, table: TableSpec) -> ExtractedTable:
        if table.items is not None or table.heading is not None or table.selector is not None:
            raise ExtractionError(
                f"table {table.name!r}: a {self.name} file is one table: give it 'key' only "
                "(no 'heading', 'selector' or 'items')"
            )
        return extract_delimited(body, name=table.name, key=table.key, delimiter=self.delimiter)


def read_delimited(body: str, delimiter: str) -> tuple[tuple[str, ...], list[tuple[Cell, ...]]]:
    """(column names, data rows) of a CSV (``,``) or TSV (``\\t``) text."""
    reader = csv.reader(io.StringIO(body.lstrip("\ufeff"), newline=""), delimiter=delimiter)
    grid: list[list[str]] = []
    try:
        for record in reader:
            if len(grid) > MAX_ROWS:
                raise ExtractionError(
                    f"the file has more than {MAX_ROWS} rows: refusing to diff it"
                )
            grid.append([normalise_cell(field) for field in record[:MAX_COLUMNS]])
    except csv.Error as exc:
        raise ExtractionError(f"not a readable CSV file (line {reader.line_num}): {exc}") from None
    if not grid:
        return (), []
    header, body_rows = grid[0], grid[1:]
    width = max(len(row) for row in grid)
    columns = column_names(header, width)
    cells = [[(value, value) for value in row] for row in body_rows]
    return columns, cells_to_rows([header], cells, len(columns))


def extract_delimited(
    body: str, *, name: str, key: tuple[str, ...], delimiter: str
) -> ExtractedTable:
    """The file's one table in canonical form; errors name the table."""
    try:
        columns, cells = read_delimited(body, delimiter)
        if not columns:
            raise ExtractionError("page layout changed: the file is empty")
        return canonical_table(name, columns, cells, key)
    except ExtractionError as exc:
        raise ExtractionError(f"table {name!r}: {exc}") from None
