"""The notification names what waits, not only how many.

On night 4 of a week with nothing acknowledged, the notification said "12 pending since …"
and named the three newest: the releases that had waited longest (night 2's) were not in it,
nor what they replaced. It lists the pending changes oldest first (project, kind, before →
after, the day first seen) up to the message's cap, then "and N more" with the report's link;
the catalog issue (the fake GitHub's) lists them all.
Through the command line, a JSON webhook on loopback (Apprise), the fake GitHub, and a real
database (SQLite and PostgreSQL); the nights are days apart (``a_day_passes``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crawler.cli import cli
from crawler.notify.message import MAX_LISTED
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, FakeRepo, GitHubState
from tests.support.audits import a_day_passes
from tests.support.ops import TOKEN, WebhookReceiver
from tests.support.regression import repo

COUNT = MAX_LISTED + 2  # more than the message lists


def _name(n: int) -> str:
    return f"P{n:02d}"


def _state(*tags: str) -> GitHubState:
    catalog = FakeRepo(owner="org", name="catalog", id=99, head_sha=None, license_text=None)
    return GitHubState(
        repos=[*(repo(_name(n).lower(), n, tags) for n in range(1, COUNT + 1)), catalog]
    )


SOURCES = (
    "notify:\n  when: always\n"
    "  report_url: https://ci.example/reports/{report_dir}/report.md\n"
    "  github_issue: {repo: org/catalog, labels: [catalog-audit]}\n"
    "projects:\n"
    + "".join(
        f"  - name: {_name(n)}\n    repo: org/{_name(n).lower()}\n" for n in range(1, COUNT + 1)
    )
)


@pytest.fixture
def week(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRAWLER_DB_URL", db_url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    for name in ("GH_TOKEN", "CRAWLER_ISSUE_REPO", "CRAWLER_REPORT_URL"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "sources.yaml").write_text(SOURCES)
    with FakeGitHub(_state("v1.0"), token=TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        yield github


def _night(db_url: str) -> dict[str, Any]:
    store = Store(db_url)
    try:
        a_day_passes(store)  # the stored nights move a day into the past: tonight is a day on
    finally:
        store.engine.dispose()
    result = CliRunner().invoke(cli, ["audit"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(Path("reports/latest/report.json").read_text())
    return report


def test_night_four_names_night_twos_releases_oldest_first_with_their_versions(
    week: FakeGitHub, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with WebhookReceiver() as hook:
        monkeypatch.setenv("CRAWLER_NOTIFY", f"json://127.0.0.1:{hook.port}/")
        _night(db_url)  # night 1: A
        week.set_state(_state("v1.0", "v1.1"))  # night 2 on: B, a release of every project
        for _night_number in (2, 3, 4):
            report = _night(db_url)
        message = hook.json_bodies()[-1]["message"]
        (issue,) = week.issues.issues("org/catalog")

    today = datetime.now(UTC).date()
    night_two = (today - timedelta(days=2)).isoformat()
    assert report["changes"] == []  # nights 3 and 4 saw nothing new
    assert {p["first_seen"] for p in report["pending"]} == {night_two}
    lines = message.splitlines()
    heading = next(i for i, line in enumerate(lines) if line.startswith("**Pending"))
    assert lines[heading] == (
        f"**Pending until the catalog takes them** (0 new tonight, {COUNT} pending since "
        f"{night_two}), oldest first:"
    )
    listed = lines[heading + 1 : heading + 1 + MAX_LISTED]
    assert listed == [
        f"- **{_name(n)}** new release: v1.0 → v1.1 (first seen {night_two})"
        for n in range(1, MAX_LISTED + 1)
    ]
    (folder,) = Path("reports").glob("*-audit4")
    report_dir = folder.name
    assert lines[heading + 1 + MAX_LISTED] == (
        f"- … and 2 more: [full report](<https://ci.example/reports/{report_dir}/report.md>)"
    )
    # the catalog issue's body (the report) lists them all, each with what it replaced
    rows = [line for line in issue.body.splitlines() if line.startswith(f"| {night_two} | P")]
    assert [row.split(" | ")[1] for row in rows] == [_name(n) for n in range(COUNT, 0, -1)]
    assert all("| new release | v1.0 → v1.1 |" in row for row in rows), rows
    # and its comment for night 4 is the message
    assert issue.comments[-1].body.endswith(message)
