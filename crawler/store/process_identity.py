"""What identifies a process beyond its PID, so that a lock holder that is gone is known as gone.

A PID is reused: a restarted container runs ``crawler`` as PID 1 again, on the same host name,
and a lock row saying "pid 1 on this host" then names the new process, which is alive. What the
row also records tells them apart: the process's start time (``/proc/<pid>/stat`` field 22,
clock ticks since boot) and the boot's id (``/proc/sys/kernel/random/boot_id``). Read straight
from ``/proc`` (a dozen lines, no dependency); where there is no ``/proc`` both are None and
only the PID is compared, as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")
_START_FIELD = 22  # starttime, in stat(5)'s numbering (pid is 1, comm 2, state 3)


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists on this host (signal 0 checks, sends nothing)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, belongs to another user
        return True
    return True


def process_start(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot; None when it cannot be read."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # "pid (comm) state ...": comm may hold spaces and parentheses, so split after the last ')'
    fields = stat.rpartition(")")[2].split()
    index = _START_FIELD - 3  # the fields after comm start at number 3
    if len(fields) <= index or not fields[index].isdigit():
        return None
    return int(fields[index])


def boot_id() -> str | None:
    """This boot's id (changes at every boot of the host); None when it cannot be read."""
    try:
        text = (_PROC / "sys" / "kernel" / "random" / "boot_id").read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return None
    return text.strip()[:36] or None


@dataclass(frozen=True)
class ProcessIdentity:
    pid: int
    started: int | None  # clock ticks since boot
    boot: str | None

    @staticmethod
    def current() -> ProcessIdentity:
        pid = os.getpid()
        return ProcessIdentity(pid, process_start(pid), boot_id())


def gone_because(holder: ProcessIdentity, here: str | None = None) -> str | None:
    """Why the process ``holder`` (recorded on this host) no longer runs, or None when it may:
    the host booted since, its PID is free, or its PID is now another process's (started at
    another moment). ``here`` is this boot's id (read when not given)."""
    here = boot_id() if here is None else here
    if holder.boot is not None and here is not None and holder.boot != here:
        return "the host has restarted since (another boot id)"
    if not pid_alive(holder.pid):
        return f"process {holder.pid} is gone"
    if holder.started is not None:
        now = process_start(holder.pid)
        if now is not None and now != holder.started:
            return (
                f"process {holder.pid} is another process now (started at another moment: its "
                "PID was reused, as by a restarted container's PID 1)"
            )
    return None
