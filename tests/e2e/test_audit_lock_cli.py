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

import pytest
from sqlalchemy import text

from crawler.audit import run_audit
from crawler.config import parse_config
from crawler.store import Store
from crawler.store.process_identity import boot_id, process_start
from crawler_fakes.github import FakeGitHub, GitHubState, mit_repo, release_on
from tests.support.lock_rows import lingering_session, write_holder

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


@pytest.mark.skipif(process_start(1) is None, reason="no /proc/1/stat to read")
def test_a_restarted_scheduler_takes_over_its_former_self_and_catches_up(
    db_url: str, tmp_path: Path
) -> None:
    """Issue 38 item 1: a container restarted after an OOM kill runs `crawler schedule` as
    PID 1 again. The lock row its former self left (PID 1, an earlier start) no longer passes
    for a live holder: the catch-up audit runs at start instead of being skipped for the
    15-minute lease (on PostgreSQL, the former self's lingering session is ended)."""
    (tmp_path / "sources.yaml").write_text(CONFIG)
    store = Store(db_url)
    with FakeGitHub(_state(), unauth_limit=5000) as server:
        run_audit(parse_config(CONFIG), store, tmp_path / "reports", env=server.env(None))
        with store.engine.begin() as conn:  # that audit ran two days ago: a tick was missed
            conn.execute(text("update audits set started_at = :t"), {"t": "2026-01-01 03:00:00"})
        started = process_start(1)
        assert started is not None
        write_holder(store, pid=1, started=started - 100, boot=boot_id())
        stderr_path = tmp_path / "stderr"
        with lingering_session(store), stderr_path.open("w") as stderr:
            child = subprocess.Popen(
                [sys.executable, "-m", "crawler", "schedule", "--cron", "0 3 * * *"],
                cwd=tmp_path,
                env=_env(db_url, server.base_url),
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )


            def ended() -> bool:
                audits = store.audits()
                caught_up = len(audits) == 2 and audits[1].status != "running"
                return caught_up or "skipping" in stderr_path.read_text()

            try:
                _wait_for(ended, "the catch-up audit (or its skipping)")
            finally:
                child.terminate()
                out = child.communicate(timeout=30)[0]
    log = stderr_path.read_text()
    assert "skipping this run" not in log, log
    assert "took over the audit lock of crawler schedule (pid 1 on " in log
    assert "missed the audit due 2026-01-02T03:00:00Z (last audit 2026-01-01" in out
    assert [(a.id, a.status) for a in store.audits()] == [(1, "complete"), (2, "complete")]
    store.close()
