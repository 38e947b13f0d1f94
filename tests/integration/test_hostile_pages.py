"""One hostile or broken vendor page fails only itself, quickly, with a message (issue 9)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.analysis.pages import read_page
from crawler.audit import run_audit
from crawler.config import PageSpec, Settings, TableSpec, parse_config
from crawler.store import Store
from crawler.upstream.http import MemoryCache
from crawler.upstream.pages import PageFetcher, PageFetchError, decode_body
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from crawler_fakes.pages import FakePageServer

LOOPBACK = Settings(allow_private_addresses=True)
TABLE = "<table><tr><th>Chip</th><th>Status</th></tr><tr><td>MLU</td><td>supported</td></tr>"
SPEC = PageSpec(
    name="p", url="https://x/p.html", tables=(TableSpec(name="t", selector="table", key=("Chip",)),)
)
# codecs Python knows that are no text encoding, or cannot decode arbitrary bytes
NOT_CHARSETS = [
    "hex", "rot13", "base64", "zip", "bz2", "uu", "quopri", "idna", "punycode", "undefined",
    "unicode_escape", "raw_unicode_escape",
]  # fmt: skip


@pytest.fixture
def site() -> Iterator[FakePageServer]:
    with FakePageServer() as server:
        yield server


@pytest.mark.parametrize("label", NOT_CHARSETS)
def test_a_non_text_charset_label_is_ignored_like_an_absent_one(label: str) -> None:
    body = "<p>café \\u00e9 a\\\\b</p>".encode()
    expected = ("<p>café \\u00e9 a\\\\b</p>", "utf-8")
    assert decode_body(body, f"text/html; charset={label}") == expected
    assert decode_body(f'<meta charset="{label}">'.encode() + body, None)[1] == "utf-8"
    latin = "<p>Überboard</p>".encode("cp1252")  # not UTF-8: the windows-1252 fallback still runs
    assert decode_body(latin, f"text/html; charset={label}") == ("<p>Überboard</p>", "cp1252")


def test_a_page_served_as_charset_hex_is_fetched_and_extracted(site: FakePageServer) -> None:
    site.set_page("/hex.html", TABLE.encode(), charset="hex")
    site.set_page("/meta.html", b'<meta charset="rot13">' + TABLE.encode())
    with PageFetcher(LOOPBACK, MemoryCache()) as fetcher:
        for path in ("/hex.html", "/meta.html"):
            page = fetcher.fetch(site.url(path))
            assert page.charset == "utf-8"
            snapshot = read_page(SPEC, page.body, page.content_type, page.url)
            assert snapshot.tables[0].rows == (("MLU", "supported"),)


def test_bad_urls_are_page_errors() -> None:
    with PageFetcher(LOOPBACK, MemoryCache()) as fetcher:
        with pytest.raises(PageFetchError) as bad_port:
            fetcher.fetch("http://127.0.0.1:99999/")
        with pytest.raises(PageFetchError) as bad_host:
            fetcher.fetch("http://user:hunter22@[::1")
    assert str(bad_port.value) == "invalid URL http://127.0.0.1:99999/: Port out of range 0-65535"
    assert str(bad_host.value) == "invalid URL http://[::1: Invalid IPv6 URL"


def test_a_server_dripping_header_lines_is_cut_off_at_the_request_deadline(
    site: FakePageServer,
) -> None:
    # 40 header lines 0.1 s apart: each arrives well inside the 5 s read timeout, so only a
    # deadline for the whole request stops it (the server gives up when the client hangs up)
    site.set_page("/slow.html", TABLE.encode(), drip_headers=(40, 0.1))
    site.set_page("/fast.html", TABLE.encode())
    settings = Settings(allow_private_addresses=True, timeout=5, request_deadline=0.5)
    with PageFetcher(settings, MemoryCache()) as fetcher:
        with pytest.raises(PageFetchError) as exc:
            fetcher.fetch(site.url("/slow.html"))
        assert fetcher.fetch(site.url("/fast.html")).status == 200  # the next page is unaffected
    assert str(exc.value) == (
        f"{site.url('/slow.html')} took longer than the request deadline of 0.5s "
        "(settings.request_deadline)"
    )


def test_a_dripping_body_is_cut_off_by_the_same_deadline(site: FakePageServer) -> None:
    # headers at once, then 16 bytes every 0.1 s: about 0.9 s for the whole body
    site.set_page("/slow-body.html", TABLE.encode(), drip_body=0.1)
    settings = Settings(allow_private_addresses=True, timeout=5, request_deadline=0.25)
    with PageFetcher(settings, MemoryCache()) as fetcher, pytest.raises(PageFetchError) as exc:
        fetcher.fetch(site.url("/slow-body.html"))
    assert "took longer than the request deadline of 0.25s" in str(exc.value)


def test_request_deadline_defaults_to_a_minute() -> None:
    assert Settings().request_deadline == 60.0
    assert Settings().pin_text_limit == 1_000_000


def test_an_audit_with_a_charset_hex_page_reports_the_others_and_the_page(
    db_url: str, tmp_path: Path
) -> None:
    """The issue's reproduction: one page served as charset=hex used to end the audit failed."""
    stamp = "2026-11-01T00:00:00Z"
    state = GitHubState(
        repos=[
            FakeRepo(owner="org", name=name, id=n, head_sha=str(n) * 40, head_date=stamp,
                     releases=[FakeRelease("v1", "v1", stamp, stamp)])
            for n, name in ((1, "alpha"), (2, "beta"))
        ]
    )  # fmt: skip
    config_text = (
        "settings: {{allow_private_addresses: true}}\nprojects:\n"
        "  - name: Alpha\n    repo: org/alpha\n    pages:\n      - name: support\n"
        "        url: {site}/hex.html\n"
        "        tables: [{{name: t, selector: table, key: [Chip]}}]\n"
        "  - name: Beta\n    repo: org/beta\n"
    )
    with FakeGitHub(state, unauth_limit=5000) as github, FakePageServer() as site:
        site.set_page("/hex.html", TABLE.encode(), charset="hex")
        store = Store(db_url)
        try:
            outcome = run_audit(
                parse_config(config_text.format(site=site.base_url)), store, tmp_path / "r",
                env=github.env(), sleep=lambda _s: None,
            )  # fmt: skip
        finally:
            store.close()
    report = outcome.report.as_json()
    assert (outcome.status, report["errors"]) == ("complete", [])
    assert [(p["name"], p["status"], p["version"]) for p in report["projects"]] == [
        ("Alpha", "ok", "v1"),
        ("Beta", "ok", "v1"),
    ]
