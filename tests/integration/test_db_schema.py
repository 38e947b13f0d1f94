"""The schema guard (issue 9 item 9, issue 11 item 7): a foreign database is left untouched, a
newer schema is refused by name, a fresh database survives two first audits at once, and
``crawler db upgrade|check`` say what they did or found."""

from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
import subprocess
import sys
import time
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, inspect, text

from crawler.cli import cli
from crawler.model import ProjectResult, ProjectSnapshot
from crawler.store import Store

CONFIG = "projects:\n  - name: Alpha\n    repo: org/alpha\n"
OPEN_AT_ONCE = """
import sys, time
from pathlib import Path
from crawler.store import Store
ready, go = Path(sys.argv[2]), Path(sys.argv[3])
ready.touch()
while not go.exists():
    time.sleep(0.01)
try:
    Store(sys.argv[1]).close()
    print("ok")
except Exception as exc:
    print(type(exc).__name__, str(exc).splitlines()[0])
"""


def _head() -> str:
    from alembic.script import ScriptDirectory

    from crawler.store.database import MIGRATIONS

    from alembic.config import Config  # isort: skip

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None
    return head


def _tables(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return sorted(inspect(conn).get_table_names())
    finally:
        engine.dispose()


def _foreign_sqlite(path: Path) -> str:
    conn = sqlite3.connect(path)
    conn.execute("create table notes (id integer primary key, body text)")
    conn.execute("create table users (id integer primary key, name text)")
    conn.execute("insert into notes (body) values ('keep me')")
    conn.commit()
    conn.close()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_foreign_sqlite_file_is_refused_and_left_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other-app.sqlite"
    digest = _foreign_sqlite(other)
    (tmp_path / "sources.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["audit", "--db", f"sqlite:///{other}"])
    assert result.exit_code == 2, result.output
    assert (
        f"Error: cannot open database 'sqlite:///{other}': not a crawler database: it has 2 "
        "table(s) (notes, users) but no crawler schema version. Nothing was changed; point "
        "--db (or CRAWLER_DB_URL) at a new file or an empty schema."
    ) in " ".join(result.output.split())
    assert _tables(f"sqlite:///{other}") == ["notes", "users"]
    assert hashlib.sha256(other.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other-app.sqlite", "sources.yaml"]


def test_foreign_postgresql_schema_is_refused_untouched(db_url: str) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("the SQLite case is the test above")
    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("create table orders (id integer primary key)"))
    engine.dispose()
    with pytest.raises(Exception, match=r"not a crawler database: it has 1 table\(s\) \(orders\)"):
        Store(db_url)
    assert _tables(db_url) == ["orders"]


def test_schema_newer_than_the_code_is_refused_by_name(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store(db_url).close()
    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("update alembic_version set version_num = '0099'"))
    engine.dispose()
    (tmp_path / "sources.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["audit", "--db", db_url])
    assert result.exit_code == 2, result.output
    assert (
        f"the database schema is at revision 0099, newer than this crawler knows (its newest "
        f"is {_head()}): upgrade crawler (or use the crawler version that wrote this database)."
    ) in " ".join(result.output.split())
    checked = CliRunner().invoke(cli, ["db", "check", "--db", db_url])
    assert checked.exit_code == 1
    assert "problem: the database schema is at revision 0099, newer" in checked.output


def test_two_first_opens_of_an_empty_database_do_not_race(db_url: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    ready = [tmp_path / f"ready{i}" for i in range(4)]
    children = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_AT_ONCE, db_url, str(flag), str(go)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for flag in ready
    ]
    deadline = time.monotonic() + 60
    while not all(flag.exists() for flag in ready):
        assert time.monotonic() < deadline, "the children never got ready"
        time.sleep(0.02)
    go.touch()
    outputs = [child.communicate(timeout=120)[0].strip() for child in children]
    assert outputs == ["ok"] * 4
    store = Store(db_url)
    with store.engine.connect() as conn:
        assert conn.scalar(text("select version_num from alembic_version")) == _head()
    assert store.audits() == []
    store.close()


def test_a_new_sqlite_file_opens_while_another_process_writes_to_it(tmp_path: Path) -> None:
    """A second process creating the same new file's schema holds a write lock while the file
    is still in rollback mode: SQLite then refuses the switch to WAL at once, without waiting
    (seen as "cannot open database …: database is locked" from one of two audits started
    together). The open waits for that write to end instead."""
    import threading

    path = tmp_path / "crawler.sqlite"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # the other process, about to create the schema
    ended = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    ended.start()
    try:
        store = Store(f"sqlite:///{path}")
    finally:
        ended.join()
        other.close()
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    store.close()


def test_db_upgrade_reports_from_and_to(db_url: str) -> None:
    from alembic import command

    from crawler.store.migration_guard import alembic_config

    engine = create_engine(db_url)
    with engine.begin() as conn:
        cfg = alembic_config()
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        conn.execute(text("insert into project_sets (id, digest, names) values (1, 'd', '[]')"))
        conn.execute(
            text(
                "insert into audits (id, started_at, finished_at, status, config_path,"
                " project_set_id, stats) values (1, :t, :t, 'complete', 'sources.yaml', 1, '{}')"
            ),
            {"t": datetime(2026, 11, 1, tzinfo=UTC)},
        )
        conn.execute(
            text("insert into http_cache (key, url, body, stored_at) values ('k', 'u', :b, :t)"),
            {"b": zlib.compress(b"x"), "t": datetime(2026, 11, 1, tzinfo=UTC)},
        )
    engine.dispose()
    runner = CliRunner()
    behind = runner.invoke(cli, ["db", "check", "--db", db_url])
    assert behind.exit_code == 1
    assert behind.output.splitlines()[1:] == [
        f"problem: schema at revision 0001, this crawler needs {_head()}: run `crawler db "
        "upgrade` (integrity is checked after that)"
    ]
    first = runner.invoke(cli, ["db", "upgrade", "--db", db_url])
    assert first.exit_code == 0, first.output
    assert first.output.endswith(f": schema upgraded 0001 → {_head()}\n")
    again = runner.invoke(cli, ["db", "upgrade", "--db", db_url])
    assert again.output.endswith(f": schema already at {_head()}\n")
    healthy = runner.invoke(cli, ["db", "check", "--db", db_url])
    assert (healthy.exit_code, healthy.output.splitlines()[1:]) == (0, ["ok: no problems found"])
    store = Store(db_url)  # what was stored at 0001 is still there
    assert [(a.id, a.status) for a in store.audits()] == [(1, "complete")]
    cached = store.get_response("k")
    assert cached is not None and (cached.url, cached.body) == ("u", b"x")
    store.close()


def test_db_check_finds_broken_references_and_stuck_audits(db_url: str) -> None:
    store = Store(db_url)
    now = datetime.now(UTC).replace(microsecond=0)
    done = store.begin_audit("sources.yaml", ["a"], now - timedelta(days=3))
    result = ProjectResult("a", "ok", snapshot=ProjectSnapshot(project="a"))
    store.finish_audit(done, [result], "complete", now, None, {})
    stuck = store.begin_audit("sources.yaml", ["a"], now - timedelta(days=2))
    recent = store.begin_audit("sources.yaml", ["a"], now - timedelta(hours=1))
    store.close()
    _delete_bypassing_foreign_keys(db_url, "delete from snapshots")

    checked = CliRunner().invoke(cli, ["db", "check", "--db", db_url])
    assert checked.exit_code == 1
    iso = (now - timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    assert checked.output.splitlines()[1:] == [
        f"note: audit #{recent} running since {iso}",
        "problem: 1 observations point at missing snapshots: #1",
        "problem: 1 audits stuck 'running' for more than a day (killed; never used as a "
        f"baseline, `crawler prune` removes them once old): #{stuck}",
    ]


def _delete_bypassing_foreign_keys(db_url: str, statement: str) -> None:
    if db_url.startswith("sqlite:///"):
        conn = sqlite3.connect(db_url.removeprefix("sqlite:///"))  # foreign keys off by default
        conn.execute(statement)
        conn.commit()
        conn.close()
        return
    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("set local session_replication_role = replica"))
        conn.execute(text(statement))
    engine.dispose()


def test_db_check_names_the_lock_holder_and_a_stale_lock(db_url: str) -> None:
    from crawler.store.lock import AuditLock

    store = Store(db_url)
    runner = CliRunner()
    with store.audit_lock("crawler audit") as lock:
        assert lock.holder is not None
        held = runner.invoke(cli, ["db", "check", "--db", db_url])
        since = lock.holder.since.isoformat(timespec="seconds").replace("+00:00", "Z")
    assert (held.exit_code, held.output.splitlines()[1:]) == (
        0,
        [
            f"note: audit lock held by crawler audit (pid {os.getpid()} on "
            f"{socket.gethostname()}) since {since}",
            "ok: no problems found",
        ],
    )
    if store.engine.dialect.name == "sqlite":  # a lease that ran out on another host
        long_ago = datetime(2026, 1, 1, tzinfo=UTC)
        frozen = AuditLock(
            store.engine, "frozen", host="elsewhere", heartbeat=False, clock=lambda: long_ago
        )
        frozen.acquire()
        stale = runner.invoke(cli, ["db", "check", "--db", db_url])
        assert stale.output.splitlines()[1] == (
            f"note: stale audit lock of frozen (pid {os.getpid()} on elsewhere) since "
            "2026-01-01T00:00:00Z (the next audit takes it over)"
        )
    store.close()


def test_db_check_of_a_missing_sqlite_file_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.sqlite"
    checked = CliRunner().invoke(cli, ["db", "check", "--db", f"sqlite:///{missing}"])
    assert checked.exit_code == 1
    assert checked.output.splitlines()[1:] == [f"problem: no database file at {missing}"]
    assert list(tmp_path.iterdir()) == []
