"""The report on disk (issue 38 item 4): ``reports/latest`` is always there, swapped by one
rename; a dated folder is whole or absent, whatever stops its writer (a kill, a full disk);
and a night whose report could not be written opens nothing pending (item 2).

Real processes (a full disk is a file size limit, RLIMIT_FSIZE: the write fails with EFBIG,
or the process is killed by SIGXFSZ in the middle of it), the fake GitHub on loopback, real
databases."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from crawler.audit import AuditOutcome, run_audit
from crawler.config import parse_config
from crawler.report.model import Report
from crawler.store import Store
from crawler.store.process_identity import pid_alive
from crawler_fakes.github import FakeGitHub
from tests.support.file_limits import crawler_limited
from tests.support.ops import PROJECTS, upstream

# larger than the audit's temporary spool file and report.md, smaller than report.json
REPORT_LIMIT = 3000


def _audit(store: Store, server: FakeGitHub, reports: Path) -> AuditOutcome:
    return run_audit(parse_config(PROJECTS), store, reports, env=server.env(None))


def _visible(reports: Path) -> list[str]:
    return sorted(p.name.split("-", 1)[-1] for p in reports.iterdir())


def _dead_pid() -> int:
    return next(pid for pid in range(4_000_000, 4_100_000) if not pid_alive(pid))


def test_latest_is_a_link_swapped_in_and_an_older_latest_folder_is_replaced(
    tmp_path: Path,
) -> None:
    reports = tmp_path / "reports"
    (reports / "latest").mkdir(parents=True)  # as an older crawler left it: a copied folder
    (reports / "latest" / "report.json").write_text("{}")
    (reports / ".latest.tmp").mkdir()  # its staging folder, left by a kill
    leftover = reports / f".20260101T000000Z-audit9.{_dead_pid()}.tmp"  # a killed writer's
    leftover.mkdir()
    (leftover / "report.json").write_text('{"trunc')
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
        first = _audit(store, server, reports)
        assert first.report_dir is not None
        assert os.readlink(reports / "latest") == first.report_dir.name
        assert sorted(p.name for p in reports.iterdir()) == [first.report_dir.name, "latest"]
        server.set_state(upstream("v1.0", "v1.1"))
        second = _audit(store, server, reports)
    store.close()
    assert second.report_dir is not None
    assert os.readlink(reports / "latest") == second.report_dir.name
    latest = Report.from_json((reports / "latest" / "report.json").read_bytes())
    assert (latest.audit.id, [c.after for c in latest.changes]) == (2, ["v1.1"])
    assert _visible(reports) == ["audit1", "audit2", "latest"]


def _limited(db_url: str, server: FakeGitHub, workdir: Path, how: str) -> tuple[int, str]:
    """``crawler audit`` in a child that may write files of REPORT_LIMIT bytes at most."""
    env = {**os.environ, "CRAWLER_DB_URL": db_url, "GITHUB_API_URL": server.base_url}
    env.pop("GITHUB_TOKEN", None)
    env.pop("GH_TOKEN", None)
    run = crawler_limited(
        REPORT_LIMIT, "kill" if how == "kill" else "full", ["audit", "--reports", "reports"],
        cwd=workdir, env=env,
    )  # fmt: skip
    return run.returncode, run.stderr


@pytest.fixture
def pg_url(db_url: str) -> str:
    """A file size limit stands in for a full disk: SQLite's own file would hit it before the
    report does, so these run on PostgreSQL (the database is not on the limited disk)."""
    if not db_url.startswith("postgresql"):
        pytest.skip("the file size limit would stop SQLite's own writes first")
    return db_url


def _first_night(db_url: str, server: FakeGitHub, workdir: Path) -> tuple[Store, Path]:
    (workdir / "sources.yaml").write_text(PROJECTS)
    store = Store(db_url)
    first = _audit(store, server, workdir / "reports")
    assert first.report_dir is not None
    server.set_state(upstream("v1.0", "v1.1"))
    return store, first.report_dir


def _third_night(store: Store, server: FakeGitHub, workdir: Path) -> dict[str, Any]:
    third = _audit(store, server, workdir / "reports")
    store.close()
    assert third.report_dir is not None
    assert os.readlink(workdir / "reports" / "latest") == third.report_dir.name
    return third.report.as_json()


def test_a_full_reports_disk_leaves_no_folder_and_latest_unchanged(
    pg_url: str, tmp_path: Path
) -> None:
    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
        store, first = _first_night(pg_url, server, tmp_path)
        code, stderr = _limited(pg_url, server, tmp_path, "full")
        assert code == 1, stderr
        assert stderr.splitlines()[-1] == (
            "error: could not write the report under reports: File too large; nothing was "
            "delivered, and the next audit reports these findings again"
        )
        reports = tmp_path / "reports"
        assert sorted(p.name for p in reports.iterdir()) == [first.name, "latest"]
        assert os.readlink(reports / "latest") == first.name
        report = _third_night(store, server, tmp_path)
    # item 2: the night whose report failed opened nothing pending: tonight's is new
    assert [(c["project"], c["after"]) for c in report["changes"]] == [("Alpha", "v1.1")]
    assert [(p["value"], p["first_audit"], p["new"]) for p in report["pending"]] == [
        ("v1.1", 3, True)
    ]


def test_a_kill_while_writing_the_report_leaves_latest_and_no_dated_folder(
    pg_url: str, tmp_path: Path
) -> None:
    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
        store, first = _first_night(pg_url, server, tmp_path)
        code, stderr = _limited(pg_url, server, tmp_path, "kill")
        assert code == -signal.SIGXFSZ, stderr  # killed in the middle of report.json
        reports = tmp_path / "reports"
        visible = [p.name for p in reports.iterdir() if not p.name.startswith(".")]
        assert sorted(visible) == [first.name, "latest"]
        assert os.readlink(reports / "latest") == first.name
        assert [p.name.endswith(".tmp") for p in reports.iterdir() if p.name[0] == "."] == [True]
        report = _third_night(store, server, tmp_path)  # its writer removes the leftover
    assert sorted(p.name for p in (tmp_path / "reports").iterdir())[-1] == "latest"
    assert _visible(tmp_path / "reports") == ["audit1", "audit3", "latest"]
    assert [(c["project"], c["after"]) for c in report["changes"]] == [("Alpha", "v1.1")]


def test_a_report_that_could_not_be_written_opens_nothing_pending(
    db_url: str, tmp_path: Path
) -> None:
    """Issue 38 item 2 (the documented full-reports-disk path): the pending changes were
    stored before the report was written, so the next night said "0 new tonight"."""
    store = Store(db_url)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the reports folder should be")
    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
        _audit(store, server, tmp_path / "reports")
        server.set_state(upstream("v1.0", "v1.1"))
        failed = _audit(store, server, blocked)
        assert (failed.status, failed.report_dir) == ("failed", None)
        report = _audit(store, server, tmp_path / "reports").report.as_json()
    store.close()
    assert [(p["value"], p["first_audit"], p["new"]) for p in report["pending"]] == [
        ("v1.1", 3, True)
    ]
    assert report["summary"]["changes"] == 1
