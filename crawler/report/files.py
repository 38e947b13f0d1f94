"""An audit's report on disk: ``reports/<UTC timestamp>-audit<N>/report.{json,md}``, and
``reports/latest``, a symbolic link to the newest audit's folder.

Nothing is ever seen half written, whatever stops the writer (a kill, a full disk):

* a new folder is written under a hidden temporary name and renamed into place whole, so a
  dated folder either holds both files complete or does not exist; a folder whose write failed
  is removed, and the leftovers of a writer that was killed (its PID gone) by the next writer;
* a file added to an existing folder (a re-rendered report, ``delivery.json``) is written to a
  temporary name and renamed;
* ``latest`` is replaced by one rename of a new link over it: there is always a ``latest``,
  the old report's or the new one's. (A ``latest`` directory left by an older crawler is
  replaced once: moved aside, the link renamed in, then removed.)
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from crawler.report.markdown import write_markdown
from crawler.report.model import Report
from crawler.store.process_identity import pid_alive

LATEST = "latest"
_LEFTOVER = re.compile(r"^\..+\.(\d+)\.tmp$")  # .<name>.<pid>.tmp


def report_folder(reports_dir: Path, audit_id: int, started_at: str | datetime) -> Path:
    """reports/<UTC timestamp>-audit<N>: the folder of one audit's report."""
    if isinstance(started_at, datetime):
        started_at = started_at.isoformat().replace("+00:00", "Z")
    return reports_dir / f"{started_at.replace(':', '').replace('-', '')}-audit{audit_id}"


def write_report(report: Report, reports_dir: Path, *, refresh_latest: bool = True) -> Path:
    """Write the report's folder, then (for the audit just run) point ``latest`` at it; the
    folder. OSError when it cannot be written: then no new folder is left and ``latest`` is
    unchanged."""
    target = report_folder(reports_dir, report.audit.id, report.audit.started_at)
    reports_dir.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(reports_dir)
    files: dict[str, Callable[[Path], None]] = {
        "report.json": lambda path: _json(report, path),
        "report.md": lambda path: _markdown(report, path),
    }
    if target.is_dir():  # a re-rendered report: its folder stays, each file is replaced
        for name, write in files.items():
            write_file(target / name, write)
        created = False
    else:
        staging = _temporary(target)
        try:
            staging.mkdir()
            for name, write in files.items():
                write(staging / name)
            os.rename(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        created = True
    if refresh_latest:
        try:
            point_latest(reports_dir, target)
        except BaseException:
            if created:  # the audit is not reported: its folder goes, latest stays as it was
                shutil.rmtree(target, ignore_errors=True)
            raise
    return target


def write_file(path: Path, write: Callable[[Path], object]) -> None:
    """Write ``path`` (``write`` writes the file it is given) through a temporary file beside
    it, renamed over it once complete."""
    staging = _temporary(path)
    try:
        write(staging)
        os.replace(staging, path)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


def point_latest(reports_dir: Path, target: Path) -> None:
    """``reports/latest`` → ``target`` (relative), swapped in by one rename."""
    latest = reports_dir / LATEST
    link = _temporary(latest)
    link.unlink(missing_ok=True)
    os.symlink(target.name, link)
    try:
        if latest.is_dir() and not latest.is_symlink():  # an older crawler's copied folder
            old = reports_dir / f".{LATEST}.old.{os.getpid()}.tmp"
            os.rename(latest, old)
            os.replace(link, latest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(link, latest)
    except BaseException:
        link.unlink(missing_ok=True)
        raise


def _json(report: Report, path: Path) -> None:
    with path.open("wb") as out:
        report.write_json(out)


def _markdown(report: Report, path: Path) -> None:
    with path.open("w", encoding="utf-8") as text:
        write_markdown(report, text)


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _remove_leftovers(reports_dir: Path) -> None:
    """What writers killed mid-write left (hidden, named with their PID, now gone), and the
    staging folder an older crawler used for ``latest``."""
    for entry in reports_dir.iterdir():
        found = _LEFTOVER.match(entry.name)
        if entry.name == ".latest.tmp" or (found and not pid_alive(int(found.group(1)))):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
