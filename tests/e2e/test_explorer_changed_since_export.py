"""The Explorer's "changed" highlight marks what changed since the previous export, and says
since when. It used to mark the exported audit's changes against the audit before it: an
export after two nights forgot the first night's changes, and nothing said since when."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner, Result

from crawler.cli import cli
from crawler_fakes.github import FakeGitHub, GitHubState
from tests.support.ops import command_line_env
from tests.support.regression import repo

SOURCES = """\
projects:
  - name: Alpha
    repo: org/alpha
  - name: Beta
    repo: org/beta
  - name: Gamma
    repo: org/gamma
"""


def _state(alpha: int, beta: int) -> GitHubState:
    """org/alpha and org/beta with that many releases, org/gamma with one, always."""
    tags = ("v1.0", "v1.1", "v1.2")
    return GitHubState(
        repos=[repo("alpha", 1, tags[:alpha]), repo("beta", 2, tags[:beta]),
               repo("gamma", 3, ("v1.0",))]
    )  # fmt: skip


class Nights:
    def __init__(self, workdir: Path, github: FakeGitHub) -> None:
        self.workdir, self.github = workdir, github

    def __call__(self, *args: str) -> Result:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    def audit(self, alpha: int, beta: int) -> None:
        self.github.set_state(_state(alpha, beta))
        assert self("audit").exit_code in (0, 1)

    def export(self, *args: str) -> BeautifulSoup:
        site = self.workdir / "site"
        result = self("export", "--out", str(self.workdir / "export"), "--site", str(site), *args)
        assert result.exit_code == 0, result.output
        return BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")


@pytest.fixture
def nights(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Nights]:
    command_line_env(monkeypatch, db_url, tmp_path)
    with FakeGitHub(_state(1, 1), unauth_limit=5000) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        (tmp_path / "sources.yaml").write_text(SOURCES)
        yield Nights(tmp_path, github)


def _changed(page: BeautifulSoup) -> dict[str, str]:
    """Each highlighted card → its flag's words."""
    return {
        str(card["data-project"]): card.select_one("h4 .flag.changed").get_text()
        for card in page.select("article.card.changed")
    }


def test_the_highlight_marks_what_changed_since_the_previous_export(nights: Nights) -> None:
    nights.audit(1, 1)  # night 1, exported
    first = nights.export()
    day = first.body["data-checked"]
    nights.audit(2, 1)  # night 2: Alpha v1.1, not exported
    nights.audit(2, 2)  # night 3: Beta v1.1, exported
    page = nights.export()
    since = f"changed since {day}"
    assert _changed(page) == {"Alpha": since, "Beta": since}  # Gamma did not change
    title = page.select_one("#changes-title").get_text(" ", strip=True)
    assert title.startswith(f"Changed since the export of audit #1 ({day}): 2 changes")
    # exported again, the same audit keeps the same highlight
    assert _changed(nights.export()) == {"Alpha": since, "Beta": since}
    nights.audit(2, 2)  # night 4: nothing changed since night 3's export
    quiet = nights.export()
    assert _changed(quiet) == {}
    assert quiet.select("#changes") == []
    assert "No change since the export of audit #3" in quiet.get_text(" ")


def test_a_first_export_marks_the_changes_since_the_audit_before_and_says_so(
    nights: Nights,
) -> None:
    nights.audit(1, 1)
    nights.audit(2, 1)  # Alpha v1.1
    page = nights.export()
    (card,) = page.select("article.card.changed")
    assert card["data-project"] == "Alpha"
    title = page.select_one("#changes-title").get_text(" ", strip=True)
    assert title.startswith("Changed since audit #1 (")


def test_a_site_of_an_audit_the_database_no_longer_has_counts_from_the_audit_before(
    nights: Nights,
) -> None:
    """(a pruned audit, or a site folder another database wrote)"""
    nights.audit(1, 1)
    nights.audit(2, 1)  # Alpha v1.1
    site = nights.workdir / "site"
    site.mkdir()
    (site / "catalog.json").write_text('{"audit": {"id": 0, "date": "2026-01-01"}}')
    page = nights.export()
    assert list(_changed(page)) == ["Alpha"]
    title = page.select_one("#changes-title").get_text(" ", strip=True)
    assert title.startswith("Changed since audit #1 (")
