"""The files of one export, written as one set.

``crawler export`` writes into folders a pull request can change (a catalog repository): a
symbolic link committed there would make the nightly job write any file it can write. So:

* every target is checked before any is written: one that resolves outside its folder
  (``--out``, ``--site``) through a link is refused, naming the link and where it leads,
  unless the caller allows it (``--follow-links-outside``); a link that stays inside is
  written through, as is the file ``--into`` names (the user named that one);
* every file is written in full first, each to a nameless temporary file in its target's
  folder (Linux ``O_TMPFILE``; elsewhere a hidden named one); only when all are written is each
  renamed into place. A full disk or any failure while writing leaves every file as it was,
  never new and old files mixed, and a kill leaves nothing behind but (without O_TMPFILE)
  hidden temporary files;
* an existing file keeps its mode; a new one gets the mode open() would give.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from crawler.export.integrations import ExportError


class ExportWriteError(Exception):
    """A file of the export could not be written (a full disk, no permission): the files at
    every path are as they were."""


@dataclass(frozen=True)
class OutputFile:
    path: Path  # as the user's options name it
    data: bytes
    within: Path | None  # the folder it must stay in (None: a path the user named itself)


@dataclass
class _Staged:
    named: Path
    target: Path  # the real path written
    fd: int  # a nameless file holding the data (-1 once it has a name)
    temporary: Path | None  # its name, without O_TMPFILE


def write_set(files: Sequence[OutputFile], *, follow_links_outside: bool = False) -> list[Path]:
    """Write every file or none (see the module docstring); the paths written, as named.
    ExportError when a target leads outside its folder, ExportWriteError when one cannot be
    written."""
    targets = [_target(f, follow_links_outside) for f in files]
    staged: list[_Staged] = []
    current = files[0].path if files else Path()
    try:
        for file, target in zip(files, targets, strict=True):
            current = file.path
            staged.append(_stage(file, target))
        for item in staged:  # renames in their own folders: they need no space
            current = item.named
            _commit(item)
    except OSError as exc:
        raise ExportWriteError(
            f"cannot write {current}: {exc.strerror or exc}; nothing was written: every file "
            "of the export is as it was"
        ) from None
    finally:
        for item in staged:
            _discard(item)
    return [f.path for f in files]


def _target(file: OutputFile, follow_links_outside: bool) -> Path:
    """The real path ``file`` writes; ExportError when a link leads it out of its folder."""
    target = Path(os.path.realpath(file.path))
    if file.within is None or follow_links_outside:
        return target
    folder = Path(os.path.realpath(file.within))
    if target != folder and folder not in target.parents:
        raise ExportError([
            f"{file.path} leads outside {file.within} (to {target}) through a symbolic link: "
            "refusing to write through it; remove the link, or pass --follow-links-outside if "
            "the export is meant to write there"
        ])  # fmt: skip
    return target


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _stage(file: OutputFile, target: Path) -> _Staged:
    """``file``'s data in full in a temporary file beside ``target``, not yet in place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()  # as open() would make it: readable for a web server
    try:
        fd = os.open(target.parent, os.O_TMPFILE | os.O_WRONLY, mode)
        staged = _Staged(file.path, target, fd, None)
    except (AttributeError, OSError):  # not Linux, or a filesystem without O_TMPFILE
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        staged = _Staged(file.path, target, fd, Path(name))
    _write_all(staged.fd, file.data, mode)
    return staged


def _write_all(fd: int, data: bytes, mode: int) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fchmod(fd, mode)


def _commit(item: _Staged) -> None:
    """Name the staged file (if nameless) and rename it over its target."""
    if item.temporary is None:
        hidden = f".{item.target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        name = item.target.with_name(hidden)
        try:
            _link_open_file(item.fd, name)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
                raise
            name = _copy_out(item)  # no /proc, or linkat refused: the portable way
        item.temporary = name
    os.close(item.fd)
    item.fd = -1
    os.replace(item.temporary, item.target)
    item.temporary = None


def _copy_out(item: _Staged) -> Path:
    os.lseek(item.fd, 0, os.SEEK_SET)
    data = b""
    while chunk := os.read(item.fd, 1 << 20):
        data += chunk
    fd, name = tempfile.mkstemp(dir=item.target.parent, prefix=f".{item.target.name}.",
                                suffix=".tmp")  # fmt: skip
    try:
        _write_all(fd, data, stat.S_IMODE(os.fstat(item.fd).st_mode))
    finally:
        os.close(fd)
    return Path(name)


def _link_open_file(fd: int, name: Path) -> None:
    """Give the nameless file open as ``fd`` a name: linkat(…, AT_SYMLINK_FOLLOW) on its
    /proc entry (os.link uses linkat, which follows, only when given a directory fd)."""
    directory = os.open(name.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.link(f"/proc/self/fd/{fd}", name.name, src_dir_fd=directory, dst_dir_fd=directory)
    finally:
        os.close(directory)


def _discard(item: _Staged) -> None:
    """What is left of a file not put in place (a failure, or the set stopped)."""
    if item.fd >= 0:
        os.close(item.fd)
        item.fd = -1
    if item.temporary is not None:
        item.temporary.unlink(missing_ok=True)
        item.temporary = None
