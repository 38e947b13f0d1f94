"""Stable files: keys sorted, two-space indent, UTF-8, trailing newline; written atomically.

The same ``ExportInput`` gives the same bytes, so one upstream change is one small hunk.
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from crawler.export.catalog import build_catalog
from crawler.export.inputs import ExportInput
from crawler.export.integrations import ExportError
from crawler.export.snapshot_md import render_snapshot
from crawler.export.validate import validate_catalog

SNAPSHOT_FILE = "snapshot.md"
CATALOG_FILE = "catalog.json"
SCHEMA_FILE = "catalog.schema.json"


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_text(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # as open() would have made it: readable for a web server
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def write_export(export: ExportInput, out_dir: Path) -> list[Path]:
    """Write snapshot.md, catalog.json and catalog.schema.json into ``out_dir``; their paths.
    Nothing is written when the export has a problem."""
    files = export_files(export)
    paths = []
    for name, text in files.items():
        write_text(out_dir / name, text)
        paths.append(out_dir / name)
    return paths
