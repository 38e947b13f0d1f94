"""Two audits on one database from the command line (issue 11 item 3): one runs, the other
says who holds the lock since when and exits 3; a scheduled run skips its tick. Real processes,
the fake GitHub on loopback, a real SQLite file and a real PostgreSQL schema.

Only crawler's public entry points are imported, so these fail by behaviour on code without
the lock."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from crawler.store import Store
from crawler_fakes.github import FakeGitHub, GitHubState, mit_repo, release_on

HOST = socket.gethostname()
ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
NAMES = ["p0", "p1", "p2", "p3"]
CONFIG = "projects:\n" + "".join(f"  - name: {n}\n    repo: org/{n}\n" for n in NAMES)
HOLDER_SCRIPT = """
import sys, time
from crawler.store import Store
store = Store(sys.argv[1])
lock = store.audit_lock("nightly cron")
lock.acquire()
print(lock.holder.since.isoformat(timespec="seconds").replace("+00:00", "Z"), flush=True)
time.sleep(600)
"""


def _state() -> GitHubState:
    v1 = release_on("v1", "2026-10-01T00:00:00Z")
    return GitHubState(
        repos=[mit_repo("org", n, i + 1, [v1], head_sha=f"{i:040d}") for i, n in enumerate(NAMES)]
    )


def _wait_for(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _env(db_url: str, api_url: str) -> dict[str, str]:
    env = {**os.environ, "CRAWLER_DB_URL": db_url, "GITHUB_API_URL": api_url}
    env.pop("GITHUB_TOKEN", None)
    env.pop("GH_TOKEN", None)
    return env


def test_two_audits_started_together_one_runs_the_other_exits_3(
    db_url: str, tmp_path: Path
) -> None:
    (tmp_path / "sources.yaml").write_text(CONFIG)
    with FakeGitHub(_state(), unauth_limit=5000, latency=0.3) as server:  # slow: overlap
        command = [sys.executable, "-m", "crawler", "audit", "--config", "sources.yaml"]
        env = _env(db_url, server.base_url)
        outputs = [tmp_path / f"stderr{i}" for i in (0, 1)]
        children = []
        for path in outputs:
            with path.open("w") as stderr:
                children.append(
                    subprocess.Popen(
                        command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=stderr
                    )
                )
        try:
            _wait_for(lambda: any(c.poll() is not None for c in children), "one audit to end")
            server.latency = 0.0  # the loser has answered: let the winner finish
            codes = [c.wait(timeout=120) for c in children]
        finally:
            for child in children:
                if child.poll() is None:
                    child.kill()
                    child.wait()
    assert sorted(codes) == [0, 3]
    winner, loser = (0, 1) if codes[0] == 0 else (1, 0)
    message = outputs[loser].read_text().splitlines()[-1]
    assert re.fullmatch(
        rf"error: another audit is running on this database: crawler audit "
        rf"\(pid {children[winner].pid} on {re.escape(HOST)}\) since {ISO}; "
        r"not starting another \(exit status 3\)",
        message,
    ), message
    store = Store(db_url)
    assert [(a.id, a.status) for a in store.audits()] == [(1, "complete")]
    store.close()


def test_scheduled_run_skips_while_another_audit_holds_the_lock(
    db_url: str, tmp_path: Path
) -> None:
    (tmp_path / "sources.yaml").write_text(CONFIG)
    store = Store(db_url)  # the schema exists before the holder starts
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER_SCRIPT, db_url], stdout=subprocess.PIPE, text=True
    )
    stderr_path = tmp_path / "stderr"
    try:
        assert holder.stdout is not None
        since = holder.stdout.readline().strip()
        with FakeGitHub(_state(), unauth_limit=5000) as server, stderr_path.open("w") as stderr:
            child = subprocess.Popen(
                [sys.executable, "-m", "crawler", "schedule", "--run-now"],
                cwd=tmp_path,
                env=_env(db_url, server.base_url),
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
            try:
                _wait_for(
                    lambda: "this run\n" in stderr_path.read_text() or bool(store.audits()),
                    "the scheduled run to skip (or run)",
                )
            finally:
                child.terminate()
                child.wait(timeout=10)
    finally:
        holder.kill()
        holder.wait(timeout=10)
    errors = [line for line in stderr_path.read_text().splitlines() if "error" in line]
    assert errors == [
        f"error: another audit is running on this database: nightly cron (pid {holder.pid} "
        f"on {HOST}) since {since}; skipping this run"
    ]
    assert store.audits() == []
    store.close()
