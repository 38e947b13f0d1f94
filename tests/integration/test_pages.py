"""Vendor pages: extraction, row/cell diff and fetching, over real HTTP on loopback."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from crawler.analysis.pages import ExtractionError, normalise_cell, read_page
from crawler.analysis.pages.document import describe_tables
from crawler.analysis.pages.markdown import parse_html, parse_markdown
from crawler.config import PageSpec, Settings, TableSpec
from crawler.diff.pages import diff_page
from crawler.model import ChangeKind, ExtractedTable, PageSnapshot
from crawler.report.words import change_summary, page_preview
from crawler.upstream.http import MemoryCache
from crawler.upstream.pages import (
    FetchedPage,
    PageFetcher,
    PageFetchError,
    decode_body,
    preview_page_json,
)
from crawler_fakes.pages import FakePageServer
from tests.support import SHARED

CORPUS = SHARED / "corpus"
LOOPBACK = Settings(allow_private_addresses=True)


def respec(spec: PageSpec, **changes: Any) -> PageSpec:
    """A validated copy of ``spec`` with some fields replaced."""
    return PageSpec.model_validate({**spec.model_dump(), **changes})


HW_SPEC = PageSpec(
    name="acme-docs",
    url="https://docs.acme.example/hw.html",
    tables=(TableSpec(name="hardware", heading="Supported Hardware", key=("hardware",)),),
    pins={"vllm": r"vLLM (>=[\d.]+,<[\d.]+)", "corex": r"CoreX runtime (>=\d+(?:\.\d+)*)"},
    text="div.intro",
)
HW_CSS_SPEC = respec(
    HW_SPEC, tables=(TableSpec(name="hardware", selector="div.hw table", key=("Hardware",)),)
)
BASE_ROWS = [
    ("NVIDIA GPU", "supported", "CUDA 12"),
    ("Cambricon MLU", "in progress", "vllm-mlu"),
    ("Ascend NPU", "supported", "vllm-ascend"),
]
INTRO = "Acme Serve runs on the accelerators below. It needs a recent driver."
PIN = "vLLM &gt;=0.27.1,&lt;0.28.0"


def hw_page(
    rows: list[tuple[str, str, str]] = BASE_ROWS,
    *,
    heading: str = "Supported Hardware",
    intro: str = INTRO,
    pin: str = PIN,
    columns: tuple[int, int, int] = (0, 1, 2),
) -> bytes:
    names = ("Hardware", "Status", "Notes")
    head = "".join(f"<th>{names[i]}</th>" for i in columns)
    body = "".join("<tr>" + "".join(f"<td>{r[i]}</td>" for i in columns) + "</tr>" for r in rows)
    return (
        f"<html><head><title>Acme</title></head><body><h1>Acme Serve</h1>"
        f'<div class="intro"><p>{intro}</p></div>'
        f"<h2>Requirements</h2><p>Needs <code>{pin}</code> and CoreX runtime &gt;=5.0.0.</p>"
        f'<h2>{heading}</h2><div class="hw"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div><h2>FAQ</h2><p>None.</p></body></html>"
    ).encode()


@pytest.fixture
def site() -> Iterator[FakePageServer]:
    with FakePageServer() as server:
        yield server


@pytest.fixture
def fetcher() -> Iterator[PageFetcher]:
    with PageFetcher(LOOPBACK, MemoryCache()) as page_fetcher:
        yield page_fetcher


def observe(
    site: FakePageServer, fetcher: PageFetcher, body: bytes, spec: PageSpec = HW_SPEC, **kw: Any
) -> PageSnapshot:
    """Serve ``body`` as the page, fetch it over HTTP and extract what ``spec`` watches."""
    site.set_page("/hw.html", body, kw.pop("content_type", "text/html"), **kw)
    page = fetcher.fetch(site.url("/hw.html"))
    return read_page(spec, page.body, page.content_type, spec.url or page.url)


def table_rows(snapshot: PageSnapshot) -> list[tuple[str, ...]]:
    return list(snapshot.tables[0].rows)


def records(table: ExtractedTable) -> list[dict[str, str]]:
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


# --- diffs over HTTP -----------------------------------------------------------------------


def test_cell_edit_reports_exact_before_and_after(
    site: FakePageServer, fetcher: PageFetcher
) -> None:
    before = observe(site, fetcher, hw_page())
    rows = [r if r[0] != "Cambricon MLU" else (r[0], "supported", r[2]) for r in BASE_ROWS]
    after = observe(site, fetcher, hw_page(rows))
    changes = diff_page("acme", before, after)
    assert len(changes) == 1
    change = changes[0]
    assert change.kind is ChangeKind.TABLE_CHANGED
    assert change.evidence_url == "https://docs.acme.example/hw.html"
    assert change.details == {
        "page": "acme-docs",
        "table": "hardware",
        "key_columns": ["Hardware"],
        "columns_added": [],
        "columns_removed": [],
        "rows_added": [],
        "rows_removed": [],
        "cells_changed": [
            {
                "key": {"Hardware": "Cambricon MLU"},
                "column": "Status",
                "before": "in progress",
                "after": "supported",
            }
        ],
    }
    assert change_summary(change, {}) == (
        "acme-docs: table 'hardware': 1 cell changed "
        "(Cambricon MLU Status: 'in progress' → 'supported')"
    )


def test_row_added_and_row_removed(site: FakePageServer, fetcher: PageFetcher) -> None:
    before = observe(site, fetcher, hw_page())
    rows = [*BASE_ROWS[:2], ("Iluvatar CoreX", "supported", "vllm-iluvatar")]
    after = observe(site, fetcher, hw_page(rows))
    (change,) = diff_page("acme", before, after)
    assert change.details["rows_added"] == [
        {"Hardware": "Iluvatar CoreX", "Status": "supported", "Notes": "vllm-iluvatar"}
    ]
    assert change.details["rows_removed"] == [
        {"Hardware": "Ascend NPU", "Status": "supported", "Notes": "vllm-ascend"}
    ]
    assert change.details["cells_changed"] == []
    assert "1 row added (Iluvatar CoreX); 1 row removed (Ascend NPU)" in change_summary(change, {})


def test_rows_resorted_and_columns_reordered_are_not_changes(
    site: FakePageServer, fetcher: PageFetcher
) -> None:
    before = observe(site, fetcher, hw_page())
    after = observe(site, fetcher, hw_page(list(reversed(BASE_ROWS)), columns=(2, 0, 1)))
    # canonical form: identity column first, the others by name; rows by identity
    assert before.tables[0].columns == ("Hardware", "Notes", "Status")
    assert table_rows(before) == sorted((hw, notes, status) for hw, status, notes in BASE_ROWS)
    assert after == before
    assert diff_page("acme", before, after) == []


def test_rewrapped_paragraph_and_cells_are_not_changes(
    site: FakePageServer, fetcher: PageFetcher
) -> None:
    before = observe(site, fetcher, hw_page())
    wrapped_rows = [
        (f"\n  {a.replace(' ', chr(10) + '   ')}  ", f" {b}\t", c) for a, b, c in BASE_ROWS
    ]
    wrapped_intro = INTRO.replace(" the ", "\n    the ").replace(". ", ".\n\n  ")
    after = observe(
        site, fetcher, hw_page(wrapped_rows, intro=wrapped_intro, pin=PIN.replace(" ", "\n  "))
    )
    assert after == before
    assert diff_page("acme", before, after) == []


def test_table_moved_under_new_heading(site: FakePageServer, fetcher: PageFetcher) -> None:
    before = observe(site, fetcher, hw_page(), HW_CSS_SPEC)
    moved = hw_page(heading="Accelerator Support Matrix")
    after = observe(site, fetcher, moved, HW_CSS_SPEC)
    assert diff_page("acme", before, after) == []
    with pytest.raises(ExtractionError, match="heading 'Supported Hardware' not found"):
        observe(site, fetcher, moved, HW_SPEC)


def test_selector_and_identity_column_errors_explain_the_layout_change() -> None:
    spec = respec(
        HW_SPEC, tables=(TableSpec(name="t", selector="div.gone table", key=("Hardware",)),)
    )
    with pytest.raises(ExtractionError, match=r"selector `div.gone table` matched nothing"):
        read_page(spec, hw_page().decode(), "text/html", "https://x/hw.html")
    spec = respec(
        HW_SPEC, tables=(TableSpec(name="t", heading="Supported Hardware", key=("Chip",)),)
    )
    with pytest.raises(ExtractionError) as exc:
        read_page(spec, hw_page().decode(), "text/html", "https://x/hw.html")
    assert str(exc.value) == (
        "table 't': page layout changed: identity column 'Chip' not in table columns "
        "['Hardware', 'Status', 'Notes']"
    )
    spec = respec(HW_SPEC, text="div.nope")
    with pytest.raises(ExtractionError, match=r"text selector `div\.nope` matched nothing"):
        read_page(spec, hw_page().decode(), "text/html", "https://x/hw.html")


def test_pin_bumped(site: FakePageServer, fetcher: PageFetcher) -> None:
    before = observe(site, fetcher, hw_page())
    assert dict(before.pins) == {"vllm": ">=0.27.1,<0.28.0", "corex": ">=5.0.0"}
    after = observe(site, fetcher, hw_page(pin="vLLM &gt;=0.28.0,&lt;0.29.0"))
    (change,) = diff_page("acme", before, after)
    assert change.kind is ChangeKind.PIN_CHANGED
    assert (change.before, change.after) == (">=0.27.1,<0.28.0", ">=0.28.0,<0.29.0")
    assert change.details == {"page": "acme-docs", "pin": "vllm"}
    assert change_summary(change, {}) == (
        "acme-docs: pin 'vllm' '>=0.27.1,<0.28.0' → '>=0.28.0,<0.29.0'"
    )


def test_pin_absent_is_none_and_disappearing_is_a_change(
    site: FakePageServer, fetcher: PageFetcher
) -> None:
    before = observe(site, fetcher, hw_page())
    after = observe(site, fetcher, hw_page(pin="vLLM (any)"))
    assert dict(after.pins)["vllm"] is None
    (change,) = diff_page("acme", before, after)
    assert (change.kind, change.before, change.after) == (
        ChangeKind.PIN_CHANGED, ">=0.27.1,<0.28.0", None,
    )  # fmt: skip


def test_watched_text_block_change_has_a_word_diff(
    site: FakePageServer, fetcher: PageFetcher
) -> None:
    before = observe(site, fetcher, hw_page())
    after = observe(site, fetcher, hw_page(intro=INTRO.replace("recent", "2026")))
    (change,) = diff_page("acme", before, after)
    assert change.kind is ChangeKind.PAGE_CHANGED
    assert change.details["hunks"] == [{"op": "replace", "before": "recent", "after": "2026"}]
    assert change.details["diff"] == (
        "… accelerators below. It needs a [-recent-] {+2026+} driver. …"
    )


def test_column_added_is_reported_once_not_per_cell() -> None:
    page = hw_page().decode()
    wider = page.replace("<th>Notes</th>", "<th>Notes</th><th>Since</th>").replace(
        "</td></tr>", "</td><td>v1</td></tr>"
    )
    before = read_page(HW_SPEC, page, "text/html", "https://x/hw.html")
    after = read_page(HW_SPEC, wider, "text/html", "https://x/hw.html")
    (change,) = diff_page("acme", before, after)
    assert change.details["columns_added"] == ["Since"]
    assert change.details["cells_changed"] == [] and change.details["rows_added"] == []
    assert change_summary(change, {}) == "acme-docs: table 'hardware': 1 column added (Since)"


# --- fetching --------------------------------------------------------------------------------


def test_not_modified_reuses_cached_body(site: FakePageServer, fetcher: PageFetcher) -> None:
    site.set_page("/hw.html", hw_page(), "text/html", charset="utf-8")
    first = fetcher.fetch(site.url("/hw.html"))
    second = fetcher.fetch(site.url("/hw.html"))
    assert (first.status, first.from_cache) == (200, False)
    assert (second.status, second.from_cache) == (304, True)
    assert second.body == first.body == hw_page().decode()
    assert second.content_type == "text/html"
    log = site.requests
    assert [(r.status, r.conditional) for r in log] == [(200, False), (304, True)]
    assert log[1].headers["if-none-match"].startswith('"')


def test_not_modified_by_last_modified(site: FakePageServer, fetcher: PageFetcher) -> None:
    stamp = "Mon, 30 Nov 2026 10:00:00 GMT"
    site.set_page("/lm.html", b"<p>x</p>", etag=False, last_modified=stamp)
    fetcher.fetch(site.url("/lm.html"))
    assert fetcher.fetch(site.url("/lm.html")).from_cache
    assert site.requests[-1].headers["if-modified-since"] == stamp


def test_page_over_size_cap_is_refused(site: FakePageServer) -> None:
    settings = Settings(allow_private_addresses=True, page_size_limit=2048)
    site.set_page("/big.html", b"<p>" + b"x" * 5000 + b"</p>")
    site.set_page("/stream.html", b"<p>" + b"y" * 5000 + b"</p>", send_length=False)
    site.set_page("/small.gz", b"<p>" + b"z" * 1000 + b"</p>", gzip=True)
    with PageFetcher(settings, MemoryCache()) as fetcher:
        with pytest.raises(PageFetchError, match="5007 bytes, over the page size limit of 2048"):
            fetcher.fetch(site.url("/big.html"))
        with pytest.raises(PageFetchError, match="larger than the page size limit of 2048"):
            fetcher.fetch(site.url("/stream.html"))
        assert fetcher.fetch(site.url("/small.gz")).body.count("z") == 1000


def test_legacy_charsets_are_decoded(site: FakePageServer, fetcher: PageFetcher) -> None:
    table = "<h2>Supported Hardware</h2><table><tr><th>Hardware</th><th>Status</th></tr>{}</table>"
    spec = PageSpec(
        name="p",
        url="https://x/p.html",
        tables=(TableSpec(name="t", heading="Supported Hardware", key=("Hardware",)),),
    )
    latin = table.format("<tr><td>Café Überboard</td><td>unterstützt – ok</td></tr>")
    site.set_page("/cp.html", latin.encode("windows-1252"), charset="windows-1252")
    gb = "<html><head><meta charset='gb2312'></head><body>" + table.format(
        "<tr><td>寒武纪 MLU</td><td>支持</td></tr>"
    )
    site.set_page("/gb.html", gb.encode("gb2312"))
    sjis = '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">' + table.format(
        "<tr><td>富士通</td><td>対応</td></tr>"
    )
    site.set_page("/sj.html", sjis.encode("shift_jis"))
    site.set_page("/bare.html", latin.encode("windows-1252"))  # no declaration: cp1252 fallback
    got = {}
    for path in ("/cp.html", "/gb.html", "/sj.html", "/bare.html"):
        page = fetcher.fetch(site.url(path))
        got[path] = read_page(spec, page.body, page.content_type, spec.url or "").tables[0].rows
    assert got["/cp.html"] == (("Café Überboard", "unterstützt – ok"),)
    assert got["/gb.html"] == (("寒武纪 MLU", "支持"),)
    assert got["/sj.html"] == (("富士通", "対応"),)
    assert got["/bare.html"] == got["/cp.html"]
    assert decode_body("\ufeffcafé".encode("utf-16-le"), "text/html; charset=latin1")[0] == "café"


def test_loopback_refused_without_permission(
    site: FakePageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CRAWLER_ALLOW_PRIVATE_ADDRESSES", raising=False)
    site.set_page("/hw.html", hw_page())
    with PageFetcher(Settings(), MemoryCache()) as fetcher:
        with pytest.raises(PageFetchError) as exc:
            fetcher.fetch(site.url("/hw.html"))
        assert "loopback" in str(exc.value)
        assert "allow_private_addresses" in str(exc.value)
        assert "CRAWLER_ALLOW_PRIVATE_ADDRESSES=1" in str(exc.value)
        with pytest.raises(PageFetchError, match="only http:// and https://"):
            fetcher.fetch("file:///etc/passwd")
    assert site.requests == []
    monkeypatch.setenv("CRAWLER_ALLOW_PRIVATE_ADDRESSES", "1")
    with PageFetcher(Settings(), MemoryCache()) as fetcher:
        assert fetcher.fetch(site.url("/hw.html")).status == 200


def test_redirect_to_private_address_refused_at_the_hop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRAWLER_ALLOW_PRIVATE_ADDRESSES", raising=False)
    real = socket.getaddrinfo

    def resolve(host: str, *args: Any, **kwargs: Any) -> Any:
        if host == "docs.vendor.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 80))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(302, headers={"Location": "http://169.254.169.254/latest/"})

    client = httpx.Client(transport=httpx.MockTransport(handler))
    fetcher = PageFetcher(Settings(), MemoryCache(), client=client)
    with pytest.raises(PageFetchError, match=r"169\.254\.169\.254, a link-local address"):
        fetcher.fetch("http://docs.vendor.example/hw")
    assert seen == ["http://docs.vendor.example/hw"]


def test_redirects_followed_and_capped(site: FakePageServer, fetcher: PageFetcher) -> None:
    site.set_page("/final.html", b"<p>here</p>")
    site.redirect("/moved", "/final.html", 301)
    page = fetcher.fetch(site.url("/moved"))
    assert (page.body, page.url, page.final_url) == (
        "<p>here</p>", site.url("/moved"), site.url("/final.html"),
    )  # fmt: skip
    for n in range(7):
        site.redirect(f"/loop{n}", f"/loop{n + 1}")
    with pytest.raises(PageFetchError, match="more than 5 redirects"):
        fetcher.fetch(site.url("/loop0"))


def test_http_errors_carry_status_and_never_tokens(
    site: FakePageServer, fetcher: PageFetcher
) -> None:
    site.set_page("/down.html", b"oops", status=503)
    with pytest.raises(PageFetchError) as exc:
        fetcher.fetch(site.url("/down.html?access_token=s3cr3t-T0KEN"))
    assert exc.value.status == 503
    assert "HTTP 503" in str(exc.value) and "s3cr3t-T0KEN" not in str(exc.value)
    with pytest.raises(PageFetchError) as exc:
        fetcher.fetch(site.url("/nope").replace("http://", "http://bot:hunter2pass@"))
    assert exc.value.status == 404
    assert "hunter2pass" not in str(exc.value)


def test_timeout_is_a_fetch_error(site: FakePageServer) -> None:
    site.set_page("/slow.html", b"<p>slow</p>", delay=1.0)
    settings = Settings(allow_private_addresses=True, timeout=0.2)
    with PageFetcher(settings, MemoryCache()) as f, pytest.raises(PageFetchError) as exc:
        f.fetch(site.url("/slow.html"))
    assert "timed out after 0.2s" in str(exc.value)


def test_fetch_many_bounds_concurrency_per_host(site: FakePageServer) -> None:
    for n in range(6):
        site.set_page(f"/p{n}.html", f"<p>{n}</p>".encode(), delay=0.15)
    urls = [site.url(f"/p{n}.html") for n in range(6)] + [site.url("/missing")]
    with PageFetcher(LOOPBACK, MemoryCache()) as fetcher:
        results = fetcher.fetch_many(urls)
    assert list(results) == urls
    assert [r.body for r in results.values() if isinstance(r, FetchedPage)] == [
        f"<p>{n}</p>" for n in range(6)
    ]
    missing = results[site.url("/missing")]
    assert isinstance(missing, PageFetchError) and missing.status == 404
    assert site.max_in_flight == LOOPBACK.per_host_concurrency == 2


# --- extraction ------------------------------------------------------------------------------


def test_malformed_html_still_extracted() -> None:
    html = (
        "<h2>Supported Hardware<h2x><table><tr><th>Hardware<th>Status"
        "<tr><td>NVIDIA <b>GPU<td>supported<tr><td>Cambricon MLU<td>in progress</table"
    )
    spec = respec(HW_SPEC, pins={}, text=None)
    snapshot = read_page(spec, html, "text/html", "https://x/hw.html")
    assert table_rows(snapshot) == [("Cambricon MLU", "in progress"), ("NVIDIA GPU", "supported")]


def test_nesting_ten_thousand_deep_does_not_crash() -> None:
    table = "<table><tr><th>Hardware</th></tr><tr><td>S60</td></tr></table>"
    deep = "<h2>Supported Hardware</h2>" + "<div>" * 10_000 + table + "</div>" * 10_000
    spec = respec(HW_SPEC, pins={"x": r"(S\d+)"}, text=None)
    snapshot = read_page(spec, deep, "text/html", "https://x/hw.html")
    assert table_rows(snapshot) == [("S60",)] and snapshot.pins == (("x", "S60"),)
    tables = "<table><tr><td>" * 10_000 + "x"
    css = respec(HW_CSS_SPEC, tables=(TableSpec(name="t", selector="table", key=("Hardware",)),))
    with pytest.raises(ExtractionError):  # the outer table's only cell is another table
        read_page(css, tables, "text/html", "https://x/hw.html")
    assert len(describe_tables(parse_html(tables).soup)) == 200
    md = ">" * 10_000 + " deep\n\n" + "- " * 5_000 + "x\n"
    parse_markdown(md)  # markdown-it caps nesting (drops what is deeper)


def test_markdown_pipe_table_and_html_table_in_markdown(
    site: FakePageServer, fetcher: PageFetcher
) -> None:
    readme = (
        "# vLLM Iluvatar plugin\n\n## Requirements\n\n"
        "| Component | Version |\n|---|---|\n"
        "| vLLM | `>=0.27.1,<0.28.0` |\n| CoreX runtime | >=5.0.0 |\n\n"
        "## Supported Hardware\n\n"
        "<table>\n<tr><th>Hardware</th><th>Status</th></tr>\n"
        "<tr><td>BI-V150</td><td>:white_check_mark:</td></tr>\n"
        "<tr><td>MR-V100</td><td>🚧</td></tr>\n</table>\n\n## FAQ\n"
    )
    spec = PageSpec(
        name="iluvatar",
        url="https://gitee.example/deep-spark/vllm-iluvatar/raw/README",
        tables=(
            TableSpec(name="req", heading="requirements", key=("Component",)),
            TableSpec(name="hw", heading="Supported Hardware", key=("Hardware",)),
        ),
        pins={"vllm": r"vLLM (>=[\d.]+,<[\d.]+)", "corex": r"CoreX runtime (>=\d+(?:\.\d+)*)"},
    )
    site.set_page("/README", readme.encode(), "text/plain", charset="utf-8")
    page = fetcher.fetch(site.url("/README"))
    snapshot = read_page(spec, page.body, page.content_type, spec.url or "")
    req, hw = snapshot.tables
    assert req.rows == (("CoreX runtime", ">=5.0.0"), ("vLLM", ">=0.27.1,<0.28.0"))
    assert hw.rows == (("BI-V150", "yes"), ("MR-V100", "in progress"))
    assert dict(snapshot.pins) == {"vllm": ">=0.27.1,<0.28.0", "corex": ">=5.0.0"}
    # the same file by path, no content type: a .md path means Markdown
    by_path = respec(spec, url=None, repo="deep-spark/x", path="README.md")
    assert read_page(by_path, readme, None, "https://x/blob").tables == snapshot.tables


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("✅", "yes"),
        ("✔️ Yes", "yes"),
        ("✓", "yes"),
        ("☑", "checked box"),  # a page's legend says what it means (FlagGems: partial)
        (":white_check_mark:", "yes"),
        ("❌", "no"),
        ("✗", "no"),
        ("✘", "no"),
        (":x:", "no"),
        ("🚧", "in progress"),
        ("⚠️", "in progress"),
        ("🔜 Q3", "in progress Q3"),
        ("Supported[1]", "Supported"),
        ("Supported¹", "Supported"),
        ("Supported*", "Supported"),
        ("Supported [^note]", "Supported"),
        ("a\u200bb\x07c\u202e", "ab c"),
        ("  many \n\t spaces  ", "many spaces"),
    ],
)
def test_cell_normalisation(raw: str, expected: str) -> None:
    assert normalise_cell(raw) == expected


def test_html_cells_links_images_footnotes_and_caps() -> None:
    long = "x" * 800
    html = (
        "<table><tr><th>Hardware<sup>1</sup></th><th>Status</th><th>Docs</th></tr>"
        '<tr><td>Ascend<br>NPU</td><td><img class="emoji" alt=":white_check_mark:" src="e.png">'
        '</td><td><a href="https://docs.example/ascend">install\n guide</a></td></tr>'
        '<tr><td>Kunlun<sup><a href="#fn2">2</a></sup></td><td><g-emoji>❌</g-emoji></td>'
        '<td><a href="https://github.com/baidu/vLLM-Kunlun">https://github.com/baidu/vLLM-Kunlun'
        f"</a></td></tr><tr><td>Big</td><td>{long}</td><td></td></tr></table>"
    )
    spec = respec(
        HW_CSS_SPEC,
        tables=(TableSpec(name="t", selector="table", key=("hardware",)),),
        pins={},
        text=None,
    )
    (table,) = read_page(spec, html, "text/html", "https://x/hw.html").tables
    assert records(table) == [
        {"Hardware": "Ascend NPU", "Status": "yes",
         "Docs": "install guide <https://docs.example/ascend>"},
        {"Hardware": "Big", "Status": "x" * 499 + "…", "Docs": ""},
        {"Hardware": "Kunlun", "Status": "no", "Docs": "<https://github.com/baidu/vLLM-Kunlun>"},
    ]  # fmt: skip


def test_spans_duplicates_and_nested_tables() -> None:
    html = (
        "<table><tr><th>Vendor</th><th>Chip</th><th>Status</th></tr>"
        '<tr><td rowspan="2">Enflame</td><td>S60</td><td>yes</td></tr>'
        "<tr><td>T20</td><td><table><tr><td>inner</td></tr></table></td></tr>"
        '<tr><td colspan="2">Other</td><td>no</td></tr></table>'
    )
    spec = PageSpec(
        name="p", url="https://x/", tables=(TableSpec(name="t", selector="table", key=("Vendor",)),)
    )
    (table,) = read_page(spec, html, "text/html", "https://x/").tables
    assert table.rows == (
        ("Enflame", "S60", "yes"),
        ("Enflame", "T20", "inner"),
        ("Other", "Other", "no"),
    )
    edited = html.replace("<td>S60</td><td>yes</td>", "<td>S60</td><td>no</td>")
    after = read_page(spec, edited, "text/html", "https://x/")
    before = PageSnapshot(name="p", url="https://x/", tables=(table,))
    (change,) = diff_page("p", before, after)
    assert change.details["cells_changed"] == [
        {"key": {"Vendor": "Enflame"}, "column": "Status", "before": "yes", "after": "no"}
    ]


# --- preview (crawler page) -------------------------------------------------------------------


def test_preview_lists_tables_then_shows_one(tmp_path: Path, site: FakePageServer) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        "## Plugins\n\n| Accelerator | Package |\n|---|---|\n| Cambricon MLU | `vllm-mlu` |\n"
        "| Ascend NPU | `vllm-ascend` |\n\n## Other\n\n| A | B |\n|---|---|\n| 1 | 2 |\n"
    )
    found = preview_page_json(
        str(readme), table_selector=None, heading=None, key=(), settings=LOOPBACK
    )
    listing = page_preview(found, str(readme), None, None)
    assert '[0] under "Plugins", 2 rows: Accelerator | Package' in listing
    assert '[1] under "Other", 1 row: A | B' in listing
    one = preview_page_json(
        str(readme), table_selector=None, heading="Plugins", key=("accelerator",), settings=LOOPBACK
    )
    shown = page_preview(one, str(readme), None, "Plugins")
    assert shown.splitlines()[1:] == [
        "Accelerator   | Package",
        "--------------+------------",
        "Ascend NPU    | vllm-ascend",
        "Cambricon MLU | vllm-mlu",
    ]
    site.set_page("/hw.html", hw_page())
    data = preview_page_json(
        site.url("/hw.html"), table_selector="div.hw table", heading=None, key=("Hardware",),
        settings=LOOPBACK, pins={"vllm": r"vLLM (>=[\d.]+,<[\d.]+)"},
    )  # fmt: skip
    assert data["table"]["rows"][0] == {"Hardware": "Ascend NPU", "Status": "supported",
                                        "Notes": "vllm-ascend"}  # fmt: skip
    assert data["pins"] == {"vllm": ">=0.27.1,<0.28.0"}
    json.dumps(data)


# --- the real READMEs (skipped when the corpus is absent) -------------------------------------

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")


@needs_corpus
def test_corpus_torch_gcu_version_compatibility() -> None:
    body = (CORPUS / "sunnygui-L__torch-gcu" / "README.md").read_text(encoding="utf-8")
    spec = PageSpec(
        name="torch-gcu",
        repo="EnflameTechnology/torch-gcu",
        path="README.md",
        tables=(
            TableSpec(name="matrix", heading="Version Compatibility", key=("PyTorch Version",)),
            TableSpec(
                name="sdk", heading="TopsRider SDK Compatibility", key=("torch_gcu version",)
            ),
            TableSpec(name="hw", heading="Hardware Support", key=("Product Model",)),
        ),
        pins={"wheel": r"torch_gcu-([\d.]+)-"},
    )
    snap = read_page(spec, body, None, "https://github.com/EnflameTechnology/torch-gcu")
    matrix, sdk, hw = snap.tables
    assert matrix.columns == ("PyTorch Version", "Python Version")
    assert matrix.rows == (("2.10.0", "3.9, 3.10, 3.12"),)
    assert sdk.key_columns == ("torch_gcu Version",)
    assert records(sdk) == [
        {"TopsRider Version": "v3.7.1", "torch_gcu Version": "2.10.0",
         "PyTorch Version": "2.10.0", "Branch": "main"}
    ]  # fmt: skip
    assert records(hw) == [
        {"Product Series": "Enflame CloudBlazer Inference", "Product Model": "S60"}
    ]
    assert snap.pins == (("wheel", "2.10.0"),)


@needs_corpus
def test_corpus_vllm_hardware_plugins_table_and_its_removal() -> None:
    folder = CORPUS / "vllm-project__vllm"
    spec = PageSpec(
        name="vllm-install",
        repo="vllm-project/vllm",
        path="docs/getting_started/installation/README.md",
        tables=(TableSpec(name="plugins", heading="Hardware Plugins", key=("Accelerator",)),),
    )
    url = (
        "https://github.com/vllm-project/vllm/blob/main/docs/getting_started/installation/README.md"
    )
    table_version = (folder / "docs__getting_started__installation__README.md").read_text()
    (plugins,) = read_page(spec, table_version, None, url).tables
    assert plugins.columns == ("Accelerator", "PyPI / package", "Repository")
    assert len(plugins.rows) == 9
    assert ("Cambricon MLU", "vllm-mlu", "<https://github.com/Cambricon/vllm-mlu>") in plugins.rows
    assert plugins.rows[0] == (
        "Ascend NPU", "vllm-ascend", "<https://github.com/vllm-project/vllm-ascend>",
    )  # fmt: skip
    link_only = (folder / "docs__getting_started__installation__README.at-010f1fc.md").read_text()
    with pytest.raises(ExtractionError, match="no table under heading 'Hardware Plugins'"):
        read_page(spec, link_only, None, url)


@needs_corpus
def test_corpus_tilelang_backend_support_levels() -> None:
    body = (CORPUS / "tile-ai__tilelang" / "README.md").read_text(encoding="utf-8")
    spec = PageSpec(
        name="tilelang",
        repo="tile-ai/tilelang",
        path="README.md",
        tables=(
            TableSpec(name="backends", heading="Platform and Backend Support", key=("Backend",)),
        ),
    )
    (table,) = read_page(spec, body, None, "https://github.com/tile-ai/tilelang").tables
    levels = {row["Backend"]: row["Support level"] for row in records(table)}
    assert levels == {
        "AMD ROCm/HIP": "Supported", "Apple Metal": "Supported", "Huawei Ascend": "Ecosystem",
        "LLVM CPU": "Experimental", "MetaX MACA": "Ecosystem", "Moore Threads MUSA": "Ecosystem",
        "NVIDIA CUDA": "Primary", "NVIDIA CuTe DSL": "Experimental", "WebGPU": "Experimental",
    }  # fmt: skip
    ascend = next(row for row in records(table) if row["Backend"] == "Huawei Ascend")
    assert ascend["Notes"] == (
        "Developed in tilelang-ascend <https://github.com/tile-ai/tilelang-ascend> and the "
        "MLIR-based tilelang-mlir-ascend <https://github.com/tile-ai/tilelang-mlir-ascend>."
    )


@pytest.mark.parametrize(
    ("cell", "expected"),
    [("🚧 In progress", "in progress"), ("✅ Yes", "yes"), ("✅ supported", "yes supported")],
)
def test_a_mark_and_its_own_word_count_once(cell: str, expected: str) -> None:
    assert normalise_cell(cell) == expected
