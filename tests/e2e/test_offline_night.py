"""An offline night is one line per cause, not one per project: with the network down (the
GitHub API on a closed loopback port) twenty identical "no answer" errors were listed one by
one in the report, the notification and the Explorer. Now the errors are grouped by cause,
naming the projects, and the projects the audit tried are told apart from those it did not
attempt, in the same words in all three (crawler.report.words)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner, Result

from crawler.cli import cli
from crawler.notify.message import summary_body
from crawler.report.model import ErrorEntry, Report
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.pages import FakePageServer
from tests.support.ops import command_line_env
from tests.support.regression import repo

NAMES = [f"P{n:02d}" for n in range(20)]
SOURCES = (
    "settings: {allow_private_addresses: true}\n"
    "github: {concurrency: 1, retry_base_delay: 0}\n"
    "projects:\n"
    + "".join(f"  - name: {name}\n    repo: org/{name.lower()}\n" for name in NAMES)
    # a vendor page still answers: the night is partial, and exported
    + "  - name: Vendor\n    homepage: https://vendor.example\n    pages:\n"
    "      - name: notes\n        url: {site}/notes.html\n        pins:\n"
    "          driver: 'driver ([0-9.]+)'\n"
)
TRIED, NOT_TRIED = NAMES[:3], NAMES[3:]  # three in a row got no answer: GitHub is unreachable


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def offline_night(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Night 1 reads the twenty projects; night 2 finds GitHub's port closed."""
    command_line_env(monkeypatch, db_url, tmp_path)
    state = GitHubState(repos=[repo(n.lower(), i + 1, ("v1.0",)) for i, n in enumerate(NAMES)])
    with FakeGitHub(state, unauth_limit=5000) as github, FakePageServer() as site:
        (tmp_path / "sources.yaml").write_text(SOURCES.replace("{site}", site.base_url))
        site.set_page("/notes.html", b"<p>Tested with driver 5.10.</p>")
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        assert _run("audit").exit_code == 0
        monkeypatch.setenv("GITHUB_API_URL", f"http://127.0.0.1:{_closed_port()}")
        assert _run("audit").exit_code == 1
        yield tmp_path


def _section(markdown: str, title: str) -> list[str]:
    part = markdown.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in part.splitlines() if line.strip()]


def test_an_offline_night_is_one_line_per_cause_in_the_report_the_summary_and_the_explorer(
    offline_night: Path,
) -> None:
    latest = offline_night / "reports" / "latest"
    report = Report.from_json((latest / "report.json").read_bytes())
    assert len(report.errors) == 20  # the data keeps one error per project
    tried = (
        "3 projects tried and failed: could not reach 127.0.0.1: connection refused — "
        + ", ".join(TRIED)
    )
    not_tried = (
        "17 projects not attempted: could not reach 127.0.0.1: connection refused — "
        + ", ".join(NOT_TRIED)
    )
    markdown = (latest / "report.md").read_text(encoding="utf-8")
    assert _section(markdown, "Errors") == [
        f"- {tried}; the last good state, if any, is kept",
        f"- {not_tried}; the last good state, if any, is kept",
    ]
    assert _section(markdown, "Not checked, or only in part") == [
        "- **Vendor** checked: no repository to fetch; its pages are watched",
        "- not checked (error): " + ", ".join(NAMES),
    ]
    summary = summary_body(report, None, "report.md")
    assert f"- {tried}; the last good state, if any, is kept" in summary.splitlines()
    assert f"- {not_tried}; the last good state, if any, is kept" in summary.splitlines()
    assert "errors in:" not in summary

    result = _run("export", "--out", "export", "--site", "site")
    assert result.exit_code == 0, result.output
    html = (offline_night / "site" / "index.html").read_text(encoding="utf-8")
    page = BeautifulSoup(html, "html.parser")
    assert [li.get_text(" ", strip=True) for li in page.select("#errors li")] == [
        tried, not_tried
    ]  # fmt: skip

    def checked(name: str) -> str:
        card = page.select_one(f'article.card[data-project="{name}"]')
        assert card is not None
        return " ".join(card.select_one(".not-read").get_text(" ").split())

    assert checked("P00") == "tried and failed in the last audit"
    assert checked("P19") == "not attempted in the last audit"
    catalog = json.loads((offline_night / "site" / "catalog.json").read_text())
    assert catalog["audit"]["id"] == 2
    # read by night 1 minutes ago: their facts are not stale (catalog_stale_after_days), yet
    # each card says the last audit did not read them, as above
    stale = [p["name"] for p in catalog["projects"] if p.get("stale") is True]
    assert stale == []


def test_the_notification_lists_ten_causes_at_most() -> None:
    """Errors of many causes each: the chat message names ten and counts the rest."""
    base = Report.from_json(
        b'{"schema_version": 1, "crawler_version": "0", "audit": {"id": 1, "started_at": '
        b'"2026-12-01T02:00:00Z", "finished_at": null, "status": "partial", '
        b'"baseline_audit_id": null}, "summary": {"projects": 12, "checked": 0, '
        b'"checked_in_part": 0, "errors": 12, "projects_with_errors": 12, "deferred": 0, '
        b'"untracked": 0, "stale": 0, "changes": 0, "flags": 0, "changes_by_kind": {}}, '
        b'"changes": [], "flags": [], "errors": [], "projects": [], "requests": {}}'
    )
    errors = tuple(
        ErrorEntry(f"P{n:02d}", "github", f"https://api.github.com/repos/o/p{n}",
                   f"HTTP 404 from GitHub for o/p{n}")
        for n in range(12)
    )  # fmt: skip
    summary = summary_body(msgspec.structs.replace(base, errors=errors), None, "report.md")
    listed = [line for line in summary.splitlines() if "HTTP 404" in line]
    assert len(listed) == 10
    assert "- … and 2 more errors (other causes)" in summary.splitlines()
