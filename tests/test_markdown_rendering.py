"""A report built from hostile upstream text, rendered by GitHub's own Markdown engine
(cmark-gfm, with its autolink extension) and by markdown-it-py with linkify on: no link but the
crawler's own, no HTML element from upstream, and the raw Markdown still reads like prose."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from bs4 import BeautifulSoup
from cmarkgfm.cmark import Options
from markdown_it import MarkdownIt

from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.config import parse_config
from crawler.fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from crawler.fakes.pages import FakePageServer
from crawler.store import Store

HOSTILE = (
    "see https://evil%2Eexample/login or http://3627734734/x or mail security@evil.example, "
    "www.evil.example/a http://evil．example/x ｗｗｗ.evil.com/b xmpp:bot@evil.example "
    "<https://evil.example/auto> [x](https://evil.example/md) ![i](https://evil.example/i.png) "
    "<img src=x onerror=alert(1)> <b>bold</b> &lt;i&gt; evil.com/c _em_ *em* ~~gone~~ `tick "
    "| cell | break"
)
CELL = (
    'vllm.ai <a href="https://evil.example/cell">docs</a> owner@evil.com '
    "http://[::1]/x <script>alert(1)</script>"
)
ALLOWED_TAGS = {
    "h1", "h2", "h3", "p", "strong", "em", "del", "code", "a", "ul", "li", "table", "thead",
    "tbody", "tr", "th", "td", "blockquote",
}  # fmt: skip

CONFIG = """
settings: {{allow_private_addresses: true}}
projects:
  - name: llama.cpp
    repo: org/llama.cpp
    pages:
      - name: support
        url: {site}/support.html
        tables:
          - name: hardware
            selector: table
            key: [Chip]
  - name: Moved page
    repo: org/other
    pages:
      - name: notes
        url: {site}/moved.html
        text: body
"""


def _state(*releases: FakeRelease) -> GitHubState:
    def repo(name: str, repo_id: int, extra: str) -> FakeRepo:
        return FakeRepo(
            owner="org",
            name=name,
            id=repo_id,
            license_key="mit",
            spdx_id="MIT",
            license_name="MIT License",
            license_text=reference_text("MIT") + extra,
            head_sha="c" * 40,
            head_date="2026-11-01T00:00:00Z",
            releases=list(releases),
        )

    return GitHubState(repos=[repo("llama.cpp", 1, f"\n{HOSTILE}\n"), repo("other", 2, "")])


def _table(cell: str) -> bytes:
    return (
        "<table><tr><th>Chip</th><th>Status</th></tr>"
        f"<tr><td>MLU</td><td>{cell}</td></tr></table>"
    ).encode()


@pytest.fixture
def reports(db_url: str, tmp_path: Path) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """(report.md, report.json) of a first audit and of a second one that sees a new release
    named with hostile text, a hostile table cell and a redirect to a hostile location."""
    first_release = FakeRelease("b4000", "b4000", "2026-11-01T00:00:00Z", "2026-11-01T00:00:00Z")
    new_release = FakeRelease("b4100", HOSTILE, "2026-11-30T08:00:00Z", "2026-11-30T08:00:00Z")
    out: list[tuple[str, dict[str, Any]]] = []
    with FakeGitHub(_state(first_release), unauth_limit=5000) as github, FakePageServer() as site:
        config = parse_config(CONFIG.format(site=site.base_url))
        store = Store(db_url)
        try:
            site.set_page("/support.html", _table("supported"))
            site.set_page("/moved.html", b"<p>notes</p>")
            for round_ in (1, 2):
                if round_ == 2:
                    github.set_state(_state(first_release, new_release))
                    site.set_page("/support.html", _table(CELL))
                    site.redirect("/moved.html", "ftp://www.evil.example/x?to=owner@evil.example")
                folder = tmp_path / "reports"
                run_audit(
                    config, store, folder, env=github.env(),
                    sleep=lambda _s: None,
                )  # fmt: skip
                latest = folder / "latest"
                report = json.loads((latest / "report.json").read_text())
                out.append(((latest / "report.md").read_text(), report))
        finally:
            store.close()
    yield out


def _own_links(report: dict[str, Any]) -> set[str]:
    """Every URL the crawler itself links to: evidence of changes, projects, errors, licenses."""
    urls = {c["evidence_url"] for c in report["changes"]}
    urls |= {p.get("url") for p in report["projects"]}
    urls |= {e["url"] for e in report["errors"]}
    urls |= {(p.get("license_analysis") or {}).get("url") for p in report["projects"]}
    return {u for u in urls if u}


def _render_github(markdown: str) -> str:
    # UNSAFE keeps raw HTML in the output (GitHub then sanitises it): a raw element from the
    # report would show here, not be hidden by the renderer's own filter
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def _render_linkify(markdown: str) -> str:
    engine = MarkdownIt("commonmark", {"html": True, "linkify": True})
    return engine.enable(["table", "strikethrough", "linkify"]).render(markdown)


@pytest.mark.parametrize("render", [_render_github, _render_linkify], ids=["cmark-gfm", "linkify"])
def test_rendered_report_links_only_to_the_crawlers_own_evidence(
    reports: list[tuple[str, dict[str, Any]]], render: Any
) -> None:
    for markdown, report in reports:
        soup = BeautifulSoup(render(markdown), "html.parser")
        hrefs = {a.get("href") for a in soup.find_all("a")}
        own = _own_links(report)
        assert hrefs, "the report links its evidence"
        assert {h for h in hrefs if h not in own} == set()
        assert {tag.name for tag in soup.find_all(True)} <= ALLOWED_TAGS
        assert "evil" not in " ".join(str(h) for h in hrefs)


def test_hostile_text_reaches_the_report_shown_not_linked(
    reports: list[tuple[str, dict[str, Any]]],
) -> None:
    markdown = reports[1][0]
    for word in (
        "`https://evil%2Eexample/login`",
        "`http://3627734734/x`",
        "`security@evil.example,`",
        "`www.evil.example/a`",
        "`http://evil．example/x`",
        "`ｗｗｗ.evil.com/b`",
        "`[x](https://evil.example/md)`",
        "`evil.com/c`",
        "`vllm.ai`",
        "`owner@evil.com`",
        # an error message is quoted whole (issue 20), the URL inside it with it
        "`refusing ftp://www.evil.example/x?to=owner@evil.example: only http:// and https:// "
        "are fetched`",
    ):
        assert word in markdown
    assert r"\<img src=x onerror=alert(1)> \<b>bold\</b> \&lt;i\&gt;" in markdown
    assert r"\_em\_ \*em\* \~\~gone\~\~ \`tick \| cell \| break" in markdown
    soup = BeautifulSoup(_render_github(markdown), "html.parser")
    assert "<img src=x onerror=alert(1)> <b>bold</b> &lt;i&gt;" in soup.get_text()


def test_raw_markdown_reads_like_prose(reports: list[tuple[str, dict[str, Any]]]) -> None:
    first, second = reports[0][0], reports[1][0]
    assert "- **llama.cpp** project added: " in first  # issue 20: no internal names in prose
    assert "| llama.cpp | new release | b4000 → b4100 | 2026-11-30 · “see " in second
    for escaped in (r"\-", r"\.", r"project\_added", r"2026\-11"):
        assert escaped not in first + second
