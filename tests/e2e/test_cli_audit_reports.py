"""Issue 9, items 3, 4, 5, 8 (last bullet) and 9 (a killed audit's report): regression tests
through the command line, as cron runs it, against the fake GitHub on loopback and a real
database (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from crawler.audit import run_audit
from crawler.cli import cli
from crawler.config import parse_config
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.pages import FakePageServer
from tests.support.audits import changes
from tests.support.ops import command_line_env
from tests.support.regression import repo

TWO = "projects:\n  - name: Alpha\n    repo: org/alpha\n  - name: Beta\n    repo: org/beta\n"


def _two(alpha: tuple[str, ...] = ("v1.0",)) -> GitHubState:
    return GitHubState(repos=[repo("alpha", 1, alpha), repo("beta", 2, ("v2.0",))])


def _names(count: int) -> list[str]:
    return [f"P{i:02d}" for i in range(count)]


def _catalog(names: list[str]) -> str:
    return "projects:\n" + "".join(f"  - name: {n}\n    repo: org/{n.lower()}\n" for n in names)


def _many(names: list[str], tags: tuple[str, ...] = ("v1.0",)) -> GitHubState:
    return GitHubState(repos=[repo(n.lower(), i + 1, tags) for i, n in enumerate(names)])


class Cli:
    """``crawler …`` in a working directory, with the database and the fake GitHub set in the
    environment as a cron job would have them."""

    def __init__(self, workdir: Path, db_url: str, server: FakeGitHub) -> None:
        self.workdir = workdir
        self.db_url = db_url
        self.server = server

    def __call__(self, *args: str) -> Result:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    def report(self, reports: str = "reports") -> dict[str, Any]:
        data: dict[str, Any] = json.loads(
            (self.workdir / reports / "latest" / "report.json").read_text()
        )
        return data

    def markdown(self, reports: str = "reports") -> str:
        return (self.workdir / reports / "latest" / "report.md").read_text()

    def audits(self) -> list[tuple[int, str]]:
        store = Store(self.db_url)
        try:
            return [(a.id, a.status) for a in store.audits()]
        finally:
            store.close()


@pytest.fixture
def run(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cli]:
    command_line_env(monkeypatch, db_url, tmp_path)
    (tmp_path / "sources.yaml").write_text(TWO)
    with FakeGitHub(_two(), unauth_limit=5000) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        yield Cli(tmp_path, db_url, server)


# -- item 3: findings are not lost when the report cannot be written --------------------------


def test_a_report_that_cannot_be_written_fails_the_audit_and_the_next_reports_again(
    run: Cli,
) -> None:
    assert run("audit").exit_code == 0
    run.server.set_state(_two(("v1.0", "v1.1")))
    (run.workdir / "file.txt").write_text("a regular file: nothing can be created under it\n")
    blocked = run("audit", "--reports", "file.txt/sub")
    assert blocked.exit_code == 1
    assert "audit #2 failed: 1 change, 0 flags, 0 errors, 0 deferred" in blocked.stdout
    assert blocked.stderr.splitlines()[-1] == (
        "error: could not write the report under file.txt/sub: Not a directory; nothing was "
        "delivered, and the next audit reports these findings again"
    )
    assert "Traceback" not in blocked.output
    assert run.audits() == [(1, "complete"), (2, "failed")]

    again = run("audit")
    assert again.exit_code == 0
    report = run.report()
    assert report["audit"]["id"] == 3 and report["audit"]["baseline_audit_id"] == 1
    assert changes(report) == [("Alpha", "new_release", "v1.0", "v1.1")]


CHILD = """
import sys, time
from pathlib import Path
import crawler.audit
from crawler.cli import main

real_write = crawler.audit.write_report

def write_then_hang(report, reports_dir):
    target = real_write(report, reports_dir)
    Path({marker!r}).write_text(str(target))
    time.sleep(300)  # killed here: report written, audit not yet recorded
    return target

crawler.audit.write_report = write_then_hang
sys.argv = ["crawler", "audit", "--reports", {reports!r}]
main()
"""


def test_a_kill_after_writing_the_report_loses_no_finding(run: Cli) -> None:
    assert run("audit").exit_code == 0
    run.server.set_state(_two(("v1.0", "v1.1")))
    marker = run.workdir / "written"
    script = textwrap.dedent(CHILD).format(marker=str(marker), reports=str(run.workdir / "r"))
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=run.workdir,
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, "the child audit ended before writing its report"
            assert time.monotonic() < deadline, "the child audit never wrote its report"
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    written = json.loads((Path(marker.read_text()) / "report.json").read_text())
    assert written["audit"]["id"] == 2
    assert changes(written) == [("Alpha", "new_release", "v1.0", "v1.1")]
    assert run.audits() == [(1, "complete"), (2, "running")]  # never recorded as finished

    store = Store(run.db_url)
    try:
        config = parse_config(TWO)
        third = run_audit(config, store, run.workdir / "r", env=run.server.env())
    finally:
        store.close()
    assert third.report.as_json()["audit"]["baseline_audit_id"] == 1
    assert changes(third.report) == [("Alpha", "new_release", "v1.0", "v1.1")]


# -- item 4: a failed page is an error in the exit status and the summary ---------------------

PAGE = """\
settings: {{allow_private_addresses: true}}
projects:
  - name: Alpha
    repo: org/alpha
  - name: Vendor
    homepage: https://vendor.example/sdk
    pages:
      - name: support
        url: {site}/support.html
        pins: {{sdk: 'sdk ([0-9.]+)'}}
"""


def test_an_audit_whose_only_problem_is_a_failed_page_exits_1(run: Cli) -> None:
    with FakePageServer() as site:
        (run.workdir / "sources.yaml").write_text(PAGE.format(site=site.base_url))
        site.set_page("/support.html", b"<p>sdk 1.0</p>", charset="utf-8")
        assert run("audit").exit_code == 0
        site.set_page("/support.html", b"<p>down for maintenance</p>", status=503)
        failed = run("audit")
    assert failed.exit_code == 1
    assert "audit #2 partial: 0 changes, 0 flags, 1 error, 0 deferred" in failed.stdout
    report = run.report()
    assert [(e["project"], e["source"], e["error"]) for e in report["errors"]] == [
        ("Vendor", "page:support", f"HTTP 503 from {site.base_url}/support.html")
    ]
    summary = report["summary"]
    assert (summary["errors"], summary["projects_with_errors"]) == (len(report["errors"]), 1)
    # issue 20: a project without a forge whose only page failed read nothing: not checked
    assert (summary["checked"], summary["checked_in_part"]) == (1, 0)
    markdown = run.markdown()
    assert "Every project was checked" not in markdown
    assert "**Not all clear:** 1 project had errors." in markdown
    assert "- **Vendor** not checked (error)" in markdown


# -- item 5: --only reports only what it fetched ----------------------------------------------


def test_only_one_of_twenty_reports_that_one_and_the_next_full_audit_adds_nothing(
    run: Cli,
) -> None:
    names = _names(20)
    (run.workdir / "sources.yaml").write_text(_catalog(names))
    run.server.set_state(_many(names))
    only = run("audit", "--only", "P19")
    assert only.exit_code == 0
    assert "audit #1 complete: 1 change, 0 flags, 0 errors, 0 deferred" in only.stdout
    report = run.report()
    assert (report["summary"]["projects"], report["summary"]["checked"]) == (1, 1)
    assert [(p["name"], p["status"], p["version"]) for p in report["projects"]] == [
        ("P19", "ok", "v1.0")
    ]
    assert changes(report) == [("P19", "project_added", None, "org/p19")]
    markdown = run.markdown()
    assert "1 project, 1 checked" in markdown
    assert "| — |" not in markdown and "P00" not in markdown
    assert [p.path for p in run.server.requests if p.path.startswith("/repos/org/p0")] == []

    full = run("audit")
    assert full.exit_code == 0
    report = run.report()
    assert report["summary"]["projects"] == 20 and report["summary"]["checked"] == 20
    # issue 20: a project is added when first read: the other 19 now, once; P19 not again,
    # nobody removed
    assert changes(report) == [(n, "project_added", None, f"org/{n.lower()}") for n in names[:19]]

    run.server.set_state(_many(names, ("v1.0", "v1.1")))
    assert run("audit", "--only", "P19").exit_code == 0
    assert changes(run.report()) == [("P19", "new_release", "v1.0", "v1.1")]
    assert run("audit").exit_code == 0  # the others' releases were not swallowed
    assert changes(run.report()) == [(n, "new_release", "v1.0", "v1.1") for n in names[:19]]


# -- item 8, last bullet: an emptied or truncated sources.yaml is refused ----------------------


def test_a_file_dropping_most_projects_is_refused_unless_allowed(run: Cli) -> None:
    names = _names(5)
    (run.workdir / "sources.yaml").write_text(_catalog(names))
    run.server.set_state(_many(names))
    assert run("audit").exit_code == 0
    assert run("audit").exit_code == 0
    before = sorted(p.name for p in (run.workdir / "reports").iterdir())

    (run.workdir / "sources.yaml").write_text("projects: []\n")
    emptied = run("audit")
    assert emptied.exit_code == 2
    assert (
        "sources.yaml: lists 0 projects where the last audit tracked 5: 5 would be reported "
        "removed (P00, P01, P02, P03, P04). If that is intended, run with --allow-removals; "
        "otherwise check the file."
    ) in " ".join(emptied.output.split())
    assert "Traceback" not in emptied.output

    (run.workdir / "sources.yaml").write_text(_catalog(names[:2]))  # 3 of 5 dropped: 60%
    truncated = run("audit")
    assert truncated.exit_code == 2
    assert (
        "sources.yaml: lists 2 projects where the last audit tracked 5: 3 would be reported "
        "removed (P02, P03, P04). If that is intended, run with --allow-removals"
    ) in " ".join(truncated.output.split())
    assert run.audits() == [(1, "complete"), (2, "complete")]  # nothing stored
    assert sorted(p.name for p in (run.workdir / "reports").iterdir()) == before

    allowed = run("audit", "--allow-removals")
    assert allowed.exit_code == 0
    assert changes(run.report()) == [
        (n, "project_removed", n, None) for n in ("P02", "P03", "P04")
    ]


# -- item 9: the report of a killed audit ------------------------------------------------------


def test_report_of_a_killed_audit_is_refused_not_borrowed(run: Cli) -> None:
    assert run("audit").exit_code == 0
    store = Store(run.db_url)
    try:  # what a SIGKILL mid-audit leaves behind: a 'running' row and nothing else
        killed = store.begin_audit("sources.yaml", ["Alpha", "Beta"], datetime.now(UTC))
    finally:
        store.close()
    assert killed == 2
    expected = (
        "audit #2 never finished (killed, or still running): it has no report of its own; "
        "the latest finished audit is #1"
    )
    for args in (["report", "2"], ["report", "2", "--stdout"]):
        refused = run(*args)
        assert refused.exit_code == 2
        assert expected in " ".join(refused.output.split())
        assert "Upstream audit" not in refused.output
    assert not [p for p in (run.workdir / "reports").iterdir() if p.name.endswith("-audit2")]
    shown = run("report", "1", "--stdout")  # a finished audit still re-renders
    assert shown.exit_code == 0 and shown.stdout.startswith("# Upstream audit #1 — ")


# -- issue 38 item 5: an audit that checked nothing, or too little, is no quiet night ---------


def _limited_run(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch, names: list[str], limit: int
) -> tuple[Result, dict[str, Any], list[tuple[int, str]]]:
    """One `crawler audit` of ``names`` with GitHub's unauthenticated budget at ``limit``."""
    command_line_env(monkeypatch, db_url, tmp_path)
    # one at a time: the budget goes to whole projects, not to the first request of each
    (tmp_path / "sources.yaml").write_text("github: {concurrency: 1}\n" + _catalog(names))
    with FakeGitHub(_many(names), unauth_limit=limit) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        run = Cli(tmp_path, db_url, server)
        result = run("audit")
        return result, run.report(), run.audits()


def test_an_audit_the_spent_rate_limit_deferred_whole_is_partial_and_exits_1(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The primary limit spent until tomorrow: every project deferred. It said `complete …
    reached nothing`, exit 0, and cron mail stayed silent for three days, until `stale`."""
    result, report, audits = _limited_run(tmp_path, db_url, monkeypatch, _names(2), 0)
    assert result.exit_code == 1, result.output
    assert (
        "audit #1 partial: 0 changes, 0 flags, 0 errors, 2 deferred; reached nothing: none of "
        "the 2 projects could be read (every one deferred: a rate limit spent, or a source "
        "that asked to wait)"
    ) in result.stdout
    assert audits == [(1, "partial")]
    assert (report["audit"]["status"], report["summary"]["checked"]) == ("partial", 0)


def test_an_audit_that_checked_under_a_tenth_of_its_projects_is_partial_and_exits_1(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Budget for one project of twenty: the rotation would take twenty nights."""
    result, report, audits = _limited_run(tmp_path, db_url, monkeypatch, _names(20), 4)
    assert result.exit_code == 1, result.output
    assert (
        "audit #1 partial: 1 change, 0 flags, 0 errors, 19 deferred; checked only 1 of 20 "
        'projects (fewer than 10%): see "Not checked"'
    ) in result.stdout
    assert audits == [(1, "partial")]
    assert report["summary"]["checked"] == 1
