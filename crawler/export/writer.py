"""Stable files: keys sorted, two-space indent, UTF-8, trailing newline; written atomically.

The same ``ExportInput`` gives the same bytes, so one upstream change is one small hunk.
"""

from __future__ import annotations

import errno
import json
import os
import stat
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


class ExportWriteError(Exception):
    """A file of the export could not be written (a full disk, no permission): the file at
    that path is as it was."""


def write_text(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file.

    A symlink is written through (its target is replaced, the link stays); an existing file
    keeps its mode, a new one gets the mode open() would give. On Linux the temporary file is
    nameless until the moment it is renamed (O_TMPFILE), so a kill leaves nothing beside a
    curated catalog that ``git add`` would pick up. ExportWriteError when it cannot be written.
    """
    target = Path(os.path.realpath(path))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_umask()  # as open() would make it: readable for a web server
        _replace(target, text.encode("utf-8"), mode)
    except OSError as exc:
        raise ExportWriteError(
            f"cannot write {path}: {exc.strerror or exc}; the file there is unchanged"
        ) from None


def _replace(target: Path, data: bytes, mode: int) -> None:
    try:
        fd = os.open(target.parent, os.O_TMPFILE | os.O_WRONLY, mode)
    except (AttributeError, OSError):  # not Linux, or a filesystem without O_TMPFILE
        fd = -1
    if fd >= 0:
        staging = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            _write_all(fd, data, mode)
            _link_open_file(fd, staging)  # named only for the rename that follows
            linked = True
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
                raise
            linked = False  # no /proc, or linkat refused: write it again the portable way
        finally:
            os.close(fd)
        if linked:
            _rename(staging, target)
            return
    handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        _write_all(handle, data, mode)
    except BaseException:
        os.close(handle)
        Path(tmp).unlink(missing_ok=True)
        raise
    os.close(handle)
    _rename(Path(tmp), target)


def _link_open_file(fd: int, name: Path) -> None:
    """Give the nameless file open as ``fd`` a name: linkat(…, AT_SYMLINK_FOLLOW) on its
    /proc entry (os.link uses linkat, which follows, only when given a directory fd)."""
    directory = os.open(name.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.link(f"/proc/self/fd/{fd}", name.name, src_dir_fd=directory, dst_dir_fd=directory)
    finally:
        os.close(directory)


def _write_all(fd: int, data: bytes, mode: int) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fchmod(fd, mode)


def _rename(staging: Path, target: Path) -> None:
    try:
        os.replace(staging, target)
    except BaseException:
        staging.unlink(missing_ok=True)
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
