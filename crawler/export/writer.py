"""Stable files: keys sorted, two-space indent, UTF-8, trailing newline; written atomically.

The same ``ExportInput`` gives the same bytes, so one upstream change is one small hunk.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from crawler.export.catalog import build_catalog
from crawler.export.export_input import ExportInput
from crawler.export.file_set import ExportWriteError as ExportWriteError  # re-exported
from crawler.export.file_set import OutputFile, write_set
from crawler.export.integrations import ExportError
from crawler.export.snapshot_md import render_snapshot
from crawler.export.validate import validate_catalog

SNAPSHOT_FILE = "snapshot.md"
CATALOG_FILE = "catalog.json"
SCHEMA_FILE = "catalog.schema.json"


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_text(path: Path, text: str) -> None:
    """Write one file the user named (``--into``) through a nameless temporary file renamed
    into place (crawler.export.file_set): a reader never sees half a file, a kill leaves nothing
    beside it, a symlinked file is written through to its target, its mode is kept.
    ExportWriteError when it cannot be written."""
    write_set([OutputFile(path, text.encode("utf-8"), None)])


def write_json(path: Path, data: Any) -> None:
    write_text(path, dump_json(data))


def schema_text() -> str:
    return resources.files("crawler.export").joinpath(SCHEMA_FILE).read_text("utf-8")


def export_files(export: ExportInput) -> dict[str, str]:
    """File name → content of the export. ExportError lists every problem (unmapped cells,
    id clashes, and, as a safeguard, anything the validator rejects in the built catalog)."""
    catalog = build_catalog(export)
    problems = validate_catalog(catalog, today=export.audit_date)
    if problems:
        raise ExportError([f"catalog.json {p}" for p in problems])
    return {
        SNAPSHOT_FILE: render_snapshot(export),
        CATALOG_FILE: dump_json(catalog),
        SCHEMA_FILE: schema_text(),
    }


def export_output(export: ExportInput, out_dir: Path) -> list[OutputFile]:
    """snapshot.md, catalog.json and catalog.schema.json, as files of ``out_dir`` to write."""
    return [
        OutputFile(out_dir / name, text.encode("utf-8"), out_dir)
        for name, text in export_files(export).items()
    ]


def write_export(
    export: ExportInput, out_dir: Path, *, follow_links_outside: bool = False
) -> list[Path]:
    """Write snapshot.md, catalog.json and catalog.schema.json into ``out_dir``, as one set;
    their paths. Nothing is written when the export has a problem."""
    return write_set(export_output(export, out_dir), follow_links_outside=follow_links_outside)
