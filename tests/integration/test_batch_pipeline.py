"""The audit fetches the next batch while it records this one (issue 23): the sources never wait
on the database, so a catalog of many batches keeps its requests going while each batch is
compared and written. Shown with a database that is slow to write: another connection holds the
write lock from the moment the first batch's query reaches GitHub, so that batch's recording
waits; the second batch's query must still reach GitHub before the lock is let go. Done one
batch after the other, the audit would ask for nothing until the lock was let go (8 s later)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url

from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from tests.support.audits import github_config

TOKEN = "ghp_pipeline_test_token_0123456789"
LOCK_HELD_AT_MOST = 8.0  # seconds: under SQLite's busy timeout (10 s), the audit's writes wait


def _repo(index: int) -> FakeRepo:
    repo = FakeRepo(owner="org", name=f"p{index}", id=500 + index)
    repo.license_key, repo.spdx_id, repo.license_name = "mit", "MIT", "MIT License"
    repo.license_text = reference_text("MIT", f"2024 Org {index}")
    tag = f"v1.{index}.0"
    repo.releases.append(FakeRelease(tag, tag, "2026-11-01T00:00:00Z", "2026-11-01T00:00:00Z"))
    repo.head_sha, repo.head_date = f"{index:x}" * 40, "2026-11-02T00:00:00Z"
    return repo


def _write_lock(db_url: str) -> tuple[Callable[[], None], Callable[[], None]]:
    """(take, let go) of a lock that makes every write of the audit wait, reads not."""
    if db_url.startswith("sqlite"):
        path = make_url(db_url).database
        assert path is not None
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)

        def take() -> None:
            conn.execute("BEGIN IMMEDIATE")

        def let_go() -> None:
            conn.execute("COMMIT")
            conn.close()

        return take, let_go
    engine = create_engine(db_url)
    connection = engine.connect()

    def take_pg() -> None:
        connection.exec_driver_sql("LOCK TABLE snapshots, observations IN EXCLUSIVE MODE")

    def let_go_pg() -> None:
        connection.commit()
        connection.close()
        engine.dispose()

    return take_pg, let_go_pg


@pytest.fixture
def server() -> Iterator[FakeGitHub]:
    with FakeGitHub(GitHubState([_repo(i) for i in range(4)]), token=TOKEN) as fake:
        yield fake


def test_the_next_batch_is_fetched_while_this_one_is_recorded(
    db_url: str, tmp_path: Path, server: FakeGitHub
) -> None:
    store = Store(db_url)
    take, let_go = _write_lock(db_url)
    events: list[str] = []
    asked = threading.Event()

    def release() -> None:
        asked.wait(LOCK_HELD_AT_MOST)
        events.append("lock let go")
        let_go()

    def on_request(method: str, path: str, body: bytes) -> None:
        if path != "/graphql" or b"CrawlerBatch" not in body:
            return
        names = {v for k, v in json.loads(body)["variables"].items() if k.startswith("n")}
        if names == {"p0", "p1"}:  # the first batch: from now on, every write waits
            take()
            events.append("lock taken")
            threading.Thread(target=release, daemon=True).start()
        elif names == {"p2", "p3"}:
            events.append("second batch asked")
            asked.set()

    server.on_request = on_request
    try:
        outcome = run_audit(github_config(4), store, tmp_path / "reports",
                            env=server.env(TOKEN), sleep=lambda _s: None,
                            batch_size=2)  # fmt: skip
    finally:
        server.on_request = None
        store.close()
    assert events == ["lock taken", "second batch asked", "lock let go"]
    report = outcome.report.as_json()
    validate_report(report)
    assert outcome.status == "complete" and report["summary"]["checked"] == 4
    assert [(p["name"], p["version"]) for p in report["projects"]] == [
        (f"p{i}", f"v1.{i}.0") for i in range(4)
    ]
    assert [(c["project"], c["kind"]) for c in report["changes"]] == [
        (f"p{i}", "project_added") for i in range(4)
    ]
    again = Store(db_url)
    try:  # every project recorded once: the next audit's baseline holds all four
        assert sorted(again.states_as_of(outcome.audit_id)) == ["p0", "p1", "p2", "p3"]
    finally:
        again.close()
