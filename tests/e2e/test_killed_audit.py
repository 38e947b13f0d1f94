"""An audit killed at any point leaves the database consistent and the next audit honest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from crawler.audit import run_audit
from crawler.config import parse_config
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, FaultPlan, GitHubState, mit_repo, release_on

NAMES = ["p0", "p1", "p2", "p3", "p4", "p5"]
CONFIG = "projects:\n" + "".join(f"  - name: {n}\n    repo: org/{n}\n" for n in NAMES)


def _state(newest: str) -> GitHubState:
    releases = [release_on("v1", "2026-10-01T00:00:00Z")]
    if newest == "v2":
        releases.append(release_on("v2", "2026-11-01T00:00:00Z"))
    return GitHubState(
        repos=[
            mit_repo("org", n, i + 1, list(releases), head_sha=f"{i:040d}")
            for i, n in enumerate(NAMES)
        ]
    )


def test_kill_mid_audit_then_recover(db_url: str, tmp_path: Path) -> None:
    config_path = tmp_path / "sources.yaml"
    config_path.write_text(CONFIG)
    with FakeGitHub(_state("v1"), unauth_limit=5000) as server:
        store = Store(db_url)
        config = parse_config(CONFIG)
        first = run_audit(config, store, tmp_path / "r", env=server.env())
        assert first.status == "complete"

        server.set_state(_state("v2"))
        server.reset_log()
        server.faults = FaultPlan(rates={"delay": 1.0}, delay=0.3)  # every answer is slow
        env = {**os.environ, "GITHUB_API_URL": server.base_url, "CRAWLER_DB_URL": db_url}
        env.pop("GITHUB_TOKEN", None)
        env.pop("GH_TOKEN", None)
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "crawler",
                "audit",
                "--config",
                str(config_path),
                "--reports",
                str(tmp_path / "r"),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while len([r for r in server.requests if "/repos/org/p2" in r.path]) == 0:
            assert time.monotonic() < deadline, "the child audit never reached p2"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)  # mid-audit: some projects fetched, none recorded
        child.wait(timeout=10)

        killed = store.audits()[-1]
        assert (killed.id, killed.status, killed.finished_at) == (2, "running", None)
        assert store.baseline_for().id == 1  # type: ignore[union-attr]
        assert store.audit_results(2) == ({}, [])

        server.faults = None
        third = run_audit(config, store, tmp_path / "r", env=server.env())
        store.close()
    assert third.report.as_json()["audit"]["baseline_audit_id"] == 1
    assert [
        (c["project"], c["kind"], c["before"], c["after"])
        for c in third.report.as_json()["changes"]
    ] == [(n, "new_release", "v1", "v2") for n in NAMES]
