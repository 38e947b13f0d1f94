"""`crawler links FILE…` (CI on the catalog page itself): every http(s) link of a Markdown or
HTML file checked against a vendor site on loopback, its JSON shape, its exit status."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli import cli
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
        "summary": {"checked": 3, "ok": 1, "moved": 1, "failing": 1, "error": 0},
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
