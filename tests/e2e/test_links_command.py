"""`crawler links FILE…` (CI on the catalog page itself): every http(s) link of a Markdown or
HTML file checked against a vendor site on loopback, its JSON shape, its exit status."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli import cli
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.github_state import FakeRepo
from crawler_fakes.pages import FakePageServer


@pytest.fixture
def site() -> Iterator[FakePageServer]:
    with FakePageServer() as server:
        server.set_page("/docs/support.html", b"<p>support</p>")
        server.redirect("/old/matrix.html", "/new/matrix.html", 301)
        server.set_page("/new/matrix.html", b"<p>matrix</p>")
        yield server


def _files(site: FakePageServer, tmp_path: Path) -> tuple[Path, Path, Path]:
    config = tmp_path / "sources.yaml"
    config.write_text(
        "settings: {private_networks: ['127.0.0.0/8']}\n"
        f"projects:\n  - name: Site\n    homepage: {site.url('/')}\n",
        encoding="utf-8",
    )
    page = tmp_path / "catalog.md"
    page.write_text(
        "# Catalog\n\n"
        f"| Project | Docs |\n|---|---|\n| Kit | [support]({site.url('/docs/support.html')}) |\n"
        f"\nThe matrix: <{site.url('/old/matrix.html')}#cuda>, and a relative [file](./x.md).\n"
        f"\n[gone]: {site.url('/gone.html')}\nSee [gone][gone].\n",
        encoding="utf-8",
    )
    html = tmp_path / "index.html"
    html.write_text(
        f'<html><body>\n<p><a href="{site.url("/docs/support.html")}">again</a></p>\n'
        f'<a href="{site.url("/gone.html")}">gone</a></body></html>\n',
        encoding="utf-8",
    )
    return config, page, html


def test_a_markdown_and_an_html_file_are_checked_link_by_link(
    site: FakePageServer, tmp_path: Path
) -> None:
    config, page, html = _files(site, tmp_path)
    result = CliRunner().invoke(
        cli, ["links", "--config", str(config), "--json", str(page), str(html)]
    )
    assert result.exit_code == 1, result.output  # one link failed
    data = json.loads(result.output)
    assert data == {
        "links": [
            {"url": site.url("/docs/support.html"), "outcome": "ok", "status": 200,
             "moved_to": None, "reason": "", "where": [f"{page}:5", f"{html}:2"]},
            {"url": site.url("/old/matrix.html"), "outcome": "moved", "status": 200,
             "moved_to": site.url("/new/matrix.html"), "reason": "", "where": [f"{page}:7"]},
            {"url": site.url("/gone.html"), "outcome": "failing", "status": 404,
             "moved_to": None, "reason": "HTTP 404", "where": [f"{page}:10", f"{html}:3"]},
        ],
        "summary": {"checked": 3, "ok": 1, "moved": 1, "archived": 0, "failing": 1, "error": 0},
    }  # fmt: skip
    text = CliRunner().invoke(cli, ["links", "--config", str(config), str(page)])
    assert text.exit_code == 1
    assert text.output.splitlines() == [
        f"{page}:7: {site.url('/old/matrix.html')}: moved permanently to "
        f"{site.url('/new/matrix.html')}",
        f"{page}:10: {site.url('/gone.html')}: failed: HTTP 404",
        "3 links checked: 1 ok, 1 moved, 1 failed, 0 could not be checked",
    ]


def test_all_links_answering_is_exit_zero(site: FakePageServer, tmp_path: Path) -> None:
    config, _, _ = _files(site, tmp_path)
    page = tmp_path / "ok.md"
    page.write_text(f"[a]({site.url('/docs/support.html')})\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["links", "--config", str(config), str(page)])
    assert (result.exit_code, result.output) == (
        0, "1 link checked: 1 ok, 0 moved, 0 failed, 0 could not be checked\n",
    )  # fmt: skip


def test_repository_pages_are_asked_of_the_forge_api(tmp_path: Path) -> None:
    """A repository's own page on a forge (here the fake GitHub, its pages on its own host as
    GitHub Enterprise serves them) is asked of its API, not fetched: renamed is moved (to the
    page under its new name), archived is said, a missing one failed. Before, they were asked
    over HTTP: an archived repository read as ok."""
    state = GitHubState(repos=[
        FakeRepo(owner="old-org", name="renamed", id=2, moved_to="new-org/renamed"),
        FakeRepo(owner="org", name="frozen", id=3, archived=True),
    ])  # fmt: skip
    with FakeGitHub(state, unauth_limit=100) as github:
        github.web_url = web = github.base_url
        page = tmp_path / "catalog.md"
        page.write_text(
            f"- [renamed]({web}/old-org/renamed)\n- [frozen]({web}/org/frozen)\n"
            f"- [gone]({web}/org/gone)\n",
            encoding="utf-8",
        )
        result = CliRunner().invoke(
            cli, ["links", "--allow-private", "--json", str(page)], env=github.env()
        )
        asked = [r.path for r in github.requests]
    assert result.exit_code == 1, result.output  # the missing one failed
    data = json.loads(result.stdout)
    assert [(i["url"], i["outcome"], i["status"], i["moved_to"], i["reason"])
            for i in data["links"]] == [
        (f"{web}/old-org/renamed", "moved", 200, f"{web}/new-org/renamed", ""),
        (f"{web}/org/frozen", "archived", 200, None, ""),
        (f"{web}/org/gone", "failing", 404, None, "the forge's API has no repository org/gone"),
    ]  # fmt: skip
    assert data["summary"] == {
        "checked": 3, "ok": 0, "moved": 1, "archived": 1, "failing": 1, "error": 0
    }  # fmt: skip
    assert asked == [  # the API only, a request each: no page was fetched
        "/repos/old-org/renamed", "/repositories/2", "/repos/org/frozen", "/repos/org/gone"
    ]
