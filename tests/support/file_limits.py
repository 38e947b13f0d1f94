"""A `crawler` command in a child process that may write no file past a size (RLIMIT_FSIZE):
a full disk for real, without one. "full": a write past the limit fails (EFBIG, "File too
large"), as on a full disk; "kill": the process is killed by SIGXFSZ in the middle of it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

CHILD = """
import resource, signal, sys
limit, killed = int(sys.argv[1]), sys.argv[2] == "kill"
if killed:  # Python ignores SIGXFSZ: as a kill, the default action ends the process mid-write
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from crawler.cli import main
sys.argv = ["crawler", *sys.argv[3:]]
main()
"""


def crawler_limited(
    limit: int,
    how: Literal["full", "kill"],
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``crawler ARGS`` writing no file past ``limit`` bytes."""
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(limit), how, *args],
        cwd=cwd, env=dict(env) if env is not None else None, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
