"""The Compatibility Explorer's HTML, without a browser: the matrix, escaping, links, the CSP,
stable bytes, the timeline. (tests/e2e/test_explorer_browser.py drives it in Chromium.)"""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import date, timedelta
from pathlib import Path

from bs4 import BeautifulSoup, Tag

from crawler.export import build_catalog
from crawler.export.site import HistoryPoint, SiteChange, SiteInput, render_site, write_site
from crawler.export.site.cautions import cautions
from crawler.export.site.text import Part, text, url
from crawler.export.site.timeline import MAX_POINTS, build_timeline
from crawler.export.writer import dump_json
from tests.support.explorer import (
    EXPECTED_MATRIX,
    HOSTILE_PLATFORM,
    HOSTILE_PROJECT,
    HOSTILE_RELEASE,
    HOSTILE_TAG,
    HOSTILE_URLS,
    HOSTILE_VERSION,
    PLATFORMS,
    demo_site,
    hostile_site,
)
from tests.support.export import AUDIT_DATE, catalog_items_export

NEXT_DAY = AUDIT_DATE + timedelta(days=1)



def _html(site: object = None, today: date = NEXT_DAY) -> str:
    content = render_site(site or demo_site(), today=today)["index.html"]  # type: ignore[arg-type]
    assert isinstance(content, str)
    return content


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "lxml")


def _card(soup: BeautifulSoup, ident: str) -> Tag:
    card = soup.find("article", id=f"p-{ident}")
    assert isinstance(card, Tag)
    return card


def _dd(card: Tag, term: str) -> str:
    for dt in card.find_all("dt"):
        if dt.get_text() == term:
            return str(dt.find_next_sibling("dd").get_text())
    raise AssertionError(f"no {term!r} in the card")


def test_the_whole_matrix_is_in_the_html_with_table_headers() -> None:
    table = _soup(_html()).find("table", id="matrix")
    assert isinstance(table, Tag)
    heads = table.thead.find_all("th")
    assert [th.get_text() for th in heads] == ["Project", *PLATFORMS]
    assert {th["scope"] for th in heads} == {"col"}
    matrix = {}
    for tr in table.tbody.find_all("tr"):
        assert tr.th["scope"] == "row"
        matrix[tr["data-project"]] = [
            [p["data-status"] for p in td.find_all("p")] for td in tr.find_all("td")
        ]
        # colour is never the only signal: each record's first word is its status, as text
        for p in tr.find_all("p"):
            assert p.b.get_text() == p["data-status"]
    assert matrix == EXPECTED_MATRIX


def test_a_cell_shows_version_range_pins_via_and_dated_evidence() -> None:
    soup = _soup(_html())
    vllm = soup.find("tr", attrs={"data-project": "vLLM"})
    iluvatar = vllm.find_all("td")[PLATFORMS.index("Iluvatar CoreX")]
    record = iluvatar.p
    assert [c.get_text() for c in record.find_all("code")] == [
        ">=0.27.1,<0.28.0", "CoreX runtime >=5.0.0", "ixformer: not found on the page"
    ]  # fmt: skip
    assert record.small.get_text() == "serving · via vLLM Iluvatar plugin"
    link = record.a
    assert link.get_text() == "evidence 2026-11-05"
    assert (
        link["href"] == "https://gitee.com/deep-spark/vllm-iluvatar/raw/release/v0.27.1/README.md"
    )
    tilelang_webgpu = soup.find("tr", attrs={"data-project": "TileLang"}).find_all("td")[-1]
    assert tilelang_webgpu.a["title"] == "the page says “Experimental”"


def test_project_cards_show_latest_ref_licenses_cautions_and_checked_date() -> None:
    soup = _soup(_html())
    vllm = _card(soup, "vllm")
    assert vllm.find(class_="kind").get_text() == "release candidate"
    assert _dd(vllm, "Latest") == "release candidate v0.33.0rc3 (release candidate) · 2026-11-02"
    assert _dd(_card(soup, "tritonbench"), "Latest") == (
        "commit no tagged release; tracked by commit 3b437fd (2026-11-05)"
    )
    assert _dd(_card(soup, "mlc-llm"), "Latest") == (
        "tag no GitHub release; tracked by tag v0.20.0 · 2026-07-23"
    )
    helion = _card(soup, "helion")
    assert _dd(helion, "License") == (
        "NOASSERTION per GitHub; the crawler reads BSD-3-Clause (the exact license text)"
    )
    assert [li.get_text() for li in helion.find(class_="cautions").find_all("li")] == [
        "NOASSERTION per GitHub, although a root license file exists; LICENSE reads as "
        "BSD-3-Clause."
    ]
    tilelang = _card(soup, "tilelang").find(class_="cautions").li
    assert tilelang.get_text() == (
        "LICENSE carries text beyond the MIT terms, from line 4: “For a stated period this "
        "project is also under extra collaboration terms.”"
    )
    assert tilelang.a["href"] == "https://github.com/tile-ai/tilelang/blob/main/LICENSE"
    nixl = _card(soup, "nixl").find(class_="cautions").li.get_text()
    assert nixl == "Bundles separately licensed files: examples/device/ep/LICENSE-DeepEP (MIT)."
    assert _dd(_card(soup, "sglang"), "Checked") == (
        "2026-10-30 not read in the last audit"
    )
    assert not [dt for dt in _card(soup, "triton").find_all("dt") if dt.get_text() == "Checked"]


def test_last_audit_changes_are_listed_and_highlighted() -> None:
    soup = _soup(_html())
    listed = [li.get_text() for li in soup.find(id="changes").find_all("li")]
    assert listed == [
        "new pre-release vLLM: v0.33.0rc2 → v0.33.0rc3 (release candidate) · evidence",
        "no license verdict (NOASSERTION) Helion: NOASSERTION per GitHub; LICENSE reads as "
        "BSD-3-Clause · evidence",
        "support table changed TileLang: backends: WebGPU Unsupported → Experimental · evidence",
    ]
    assert "(checked 2026-11-05)" in soup.find(id="changes-title").get_text()
    changed_rows = [tr["data-project"] for tr in soup.select("#matrix tbody tr.changed")]
    assert changed_rows == ["TileLang", "vLLM"]
    changed_cards = [a["id"] for a in soup.select("article.card.changed")]
    assert changed_cards == ["p-tilelang", "p-helion", "p-vllm"]


def test_stale_banner_is_written_when_the_data_is_already_old_at_build_time() -> None:
    fresh = _soup(_html(today=AUDIT_DATE + timedelta(days=14))).find(id="stale")
    assert fresh.has_attr("hidden")
    old = _soup(_html(today=AUDIT_DATE + timedelta(days=15))).find(id="stale")
    assert not old.has_attr("hidden")
    assert "checked on 2026-11-05, 15 days ago: more than the 14 days" in old.get_text()
    body = _soup(_html()).body
    assert (body["data-checked"], body["data-stale-after-days"]) == ("2026-11-05", "14")


def test_hostile_upstream_strings_are_text_in_html_and_attributes() -> None:
    html = _html(hostile_site())
    soup = _soup(html)
    # no element or attribute came from upstream markup
    assert soup.find_all("img") == []
    assert [svg.parent.parent["data-project"] for svg in soup.find_all("svg")] == [
        "Triton", "TileLang", "vLLM", "SGLang", "TritonBench", "MLC-LLM", HOSTILE_PROJECT
    ]  # only our timelines  # fmt: skip
    assert [s.get("src") for s in soup.find_all("script")] == [None]
    for tag in soup.find_all(True):
        assert not [name for name in tag.attrs if name.lower().startswith("on")], tag.name
    assert "<img" not in html and "<svg onload" not in html and "</code><script>" not in html
    # ... and every hostile string reads back as the same text
    row = soup.find("tr", attrs={"data-project": HOSTILE_PROJECT})
    assert row.find(class_="ref").get_text() == HOSTILE_RELEASE
    platform = soup.find("th", attrs={"data-platform": HOSTILE_PLATFORM})
    assert platform.get_text() == HOSTILE_PLATFORM
    assert row.find("code").get_text() == HOSTILE_VERSION
    card = soup.find("article", attrs={"data-project": HOSTILE_PROJECT})
    assert card.h4.contents[0] == HOSTILE_PROJECT + " "
    versions = card.find("figcaption").details
    assert versions.get_text().endswith(f"{HOSTILE_RELEASE} 2026-11-01 · {HOSTILE_TAG} 2026-09-01")
    assert soup.find("option", attrs={"value": HOSTILE_PLATFORM}).get_text() == HOSTILE_PLATFORM


def test_links_are_http_with_noopener_noreferrer_or_the_pages_own() -> None:
    soup = _soup(_html(hostile_site()))
    links = soup.find_all("a")
    assert len(links) > 40
    for link in links:
        href = link["href"]
        if href.startswith("#") or href == "catalog.json":
            assert "rel" not in link.attrs
            continue
        assert re.match(r"https?://", href), href
        assert link["rel"] == ["noopener", "noreferrer"], href
    text = soup.get_text()
    assert HOSTILE_URLS[1] in text  # shown as text, never linked
    assert not [a for a in links if a["href"].startswith(("javascript:", "data:"))]


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_csp_allows_only_the_inline_script_and_style_by_hash() -> None:
    soup = _soup(_html())
    meta = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
    # directive → sources
    policy = dict(part.split(" ", 1) for part in meta["content"].split("; "))
    scripts, styles = soup.find_all("script"), soup.find_all("style")
    assert len(scripts) == 1 and len(styles) == 1
    assert policy == {
        "default-src": "'none'",
        "script-src": f"'sha256-{_sha256(scripts[0].string)}'",
        "style-src": f"'sha256-{_sha256(styles[0].string)}'",
        "img-src": "data:",
        "base-uri": "'none'",
        "form-action": "'none'",
        "object-src": "'none'",
    }
    assert not soup.select("[style]")
    assert "innerHTML" not in scripts[0].string


def test_same_input_gives_the_same_bytes(tmp_path: Path) -> None:
    assert render_site(demo_site(), today=NEXT_DAY) == render_site(demo_site(), today=NEXT_DAY)
    first = write_site(demo_site(), tmp_path / "a", today=NEXT_DAY)
    second = write_site(demo_site(), tmp_path / "b", today=NEXT_DAY)
    assert [p.name for p in first] == ["index.html", "catalog.json"]
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    assert (tmp_path / "a" / "catalog.json").read_text() == dump_json(demo_site().catalog)


def test_timeline_points_for_a_known_history() -> None:
    history = [
        HistoryPoint(date(2026, 1, 1), "release", "v1.0.0"),
        HistoryPoint(date(2026, 1, 21), "release", "v2.0.0"),
        HistoryPoint(date(2026, 1, 11), "release", "v1.5.0rc1", prerelease=True),
    ]
    timeline = build_timeline(history)
    assert timeline is not None
    assert [(p.name, p.x, p.shape) for p in timeline.points] == [
        ("v1.0.0", "14.0", "release"),  # oldest at the left edge (pad 14)
        ("v1.5.0rc1", "180.0", "prerelease"),  # 10 of 20 days: the middle of 14..346
        ("v2.0.0", "346.0", "release"),
    ]
    assert timeline.summary == "3 versions, 2026-01-01 to 2026-01-21"
    same_day = build_timeline([HistoryPoint(date(2026, 1, 1), "tag", "v1")])
    assert same_day is not None and [p.x for p in same_day.points] == ["180.0"]
    assert build_timeline([]) is None


def test_long_history_keeps_the_newest_points() -> None:
    history = [
        HistoryPoint(date(2020, 1, 1) + timedelta(days=7 * i), "release", f"v{i}")
        for i in range(MAX_POINTS + 10)
    ]
    timeline = build_timeline(history)
    assert timeline is not None
    assert [p.name for p in timeline.points][:2] == ["v10", "v11"]
    assert len(timeline.points) == MAX_POINTS
    assert timeline.summary.startswith(f"the newest {MAX_POINTS} of {MAX_POINTS + 10} versions")


def test_timeline_svg_in_the_card() -> None:
    card = _card(_soup(_html()), "vllm")
    svg = card.find("svg")
    paths = [(p["class"], p["d"]) for p in svg.find_all("path")]
    # 2026-04-10 .. 2026-11-02: 206 days over 332 px from x=14; e.g. 06-25 is day 76: 136.5
    releases = "M14.0 24h0M136.5 24h0M239.6 24h0"
    prereleases = "M317.0 24h0M331.5 24h0M346.0 24h0"
    assert paths == [
        (["release"], releases),
        (["prerelease"], prereleases),
        (["hole"], prereleases),  # a white centre: pre-releases are rings
    ]
    assert svg["aria-label"] == "Release timeline of vLLM: 6 versions, 2026-04-10 to 2026-11-02"
    details = card.find("figcaption").details
    assert details.summary.get_text() == (
        "Timeline: 6 versions, 2026-04-10 to 2026-11-02; newest v0.33.0rc3"
    )
    assert details.get_text()[len(details.summary.get_text()) :] == (
        "v0.33.0rc3 (release candidate) 2026-11-02 · v0.33.0rc2 (release candidate) "
        "2026-10-24 · v0.33.0rc1 (release candidate) 2026-10-15 · v0.32.0 2026-08-28 · "
        "v0.31.0 2026-06-25 · "
        "v0.30.0 2026-04-10"
    )
    tags = _card(_soup(_html()), "mlc-llm").find("svg").find_all("path")
    assert [(p["class"], p["d"]) for p in tags] == [(["tag"], "M14.0 24h0M346.0 24h0")]


def test_filters_offer_every_platform_project_layer_and_status() -> None:
    form = _soup(_html()).find("form", id="filters")
    options = {
        select["name"]: [o["value"] for o in select.find_all("option")]
        for select in form.find_all("select")
    }
    assert options == {
        "platform": ["", *PLATFORMS],
        "project": ["", "TileLang", "vLLM", "SGLang", "torch-gcu"],
        "layer": ["", "framework", "kernel programming", "serving"],
        "status": ["", "upstream", "official plugin", "vendor integration", "community plugin",
                   "in progress", "unverified"],
    }  # fmt: skip
    assert form.has_attr("hidden")  # shown by the script: no dead controls without it


def test_a_change_for_an_unknown_project_and_a_bad_url_are_listed_without_a_link() -> None:
    site = demo_site(changes=[SiteChange("Gone", "project_removed", "removed", "ftp://x/y")])
    item = _soup(_html(site)).find(id="changes").li
    assert item.get_text() == "project removed Gone: removed"
    assert item.find("a") is None


def test_cautions_for_other_forge_verdicts_and_altered_text() -> None:
    root = {"path": "COPYING", "role": "root", "url": "https://gitlab.com/o/r/-/blob/main/COPYING"}
    differs = {"forge_verdict": "MIT", "detected_spdx_ids": ["Apache-2.0"], "files": [root]}
    assert [_plain(c) for c in cautions(differs, "GitLab")] == [
        "MIT per GitLab; COPYING reads as Apache-2.0."
    ]
    unknown = {"forge_verdict": "NOASSERTION", "detected_spdx_ids": [], "files": [root]}
    assert [_plain(c) for c in cautions(unknown, "Gitee")] == [
        "NOASSERTION per Gitee, and the text of COPYING is not recognised."
    ]
    altered = {
        "forge_verdict": "BSD-3-Clause",
        "detected_spdx_ids": ["BSD-3-Clause"],
        "files": [root],
        "extra_text": {
            "path": "COPYING",
            "line": 9,
            "text": "Neither the name of X\u202e nor",
            "altered": True,
        },
    }
    (caution,) = cautions(altered, "GitLab")
    assert _plain(caution) == (
        "COPYING alters the BSD-3-Clause terms, from line 9: “Neither the name of X nor”"
    )
    assert caution[0].href == root["url"]
    assert (
        cautions({"forge_verdict": "MIT", "detected_spdx_ids": ["MIT"], "files": [root]}, "X") == ()
    )


def _plain(parts: tuple[Part, ...]) -> str:
    return "".join(part.text for part in parts)


def test_only_http_urls_become_links_and_text_is_one_safe_line() -> None:
    assert url("https://example.org/a?b=c#d") == "https://example.org/a?b=c#d"
    assert url("HTTP://example.org") == "HTTP://example.org"
    for bad in (
        "javascript:alert(1)",
        "data:text/html,x",
        "//example.org",
        "ftp://x",
        "https://exa mple.org",
        "https://example.org/\x00",
        "https://x/" + "a" * 2048,
        None,
        7,
    ):
        assert url(bad) is None, bad
    assert text("v1.0\u202e\u200b\x1b[31mred\nline two") == "v1.0 red line two"
    assert text(None) == "" and text("  ") == "" and text("—") == "—"
    assert text("x" * 300) == "x" * 199 + "…"


def test_a_catalog_without_integrations_says_so() -> None:
    catalog = dict(demo_site().catalog, integrations=[], platforms=[])
    soup = _soup(_html(demo_site(catalog=catalog)))
    assert soup.find(id="empty").get_text().startswith("The catalog has no integration records")
    assert soup.select("#matrix tbody tr") == []
    assert len(soup.select("article.card")) == 11
    assert _soup(_html()).find(id="empty") is None


def test_cards_are_grouped_by_layer_riding_cards_link_their_host_others_say_why() -> None:
    """Issue 34: the page's layers group the cards (the catalog's layer order, items of no
    layer last), the lede counts how the items are followed."""
    catalog = build_catalog(catalog_items_export())
    soup = _soup(_html(SiteInput(catalog=catalog, checked_on=AUDIT_DATE)))
    groups = [
        (section["data-layer"], [a["data-project"] for a in section.find_all("article")])
        for section in soup.select("section.layer")
    ]
    assert groups == [
        ("kernel programming", ["Triton", "TileLang"]),
        ("serving", ["vLLM", "SGLang", "vLLM V1 engine", "SGLang router"]),
        ("platform sdk", ["Neuware", "DTK"]),
        ("", ["Helion", "NIXL", "vLLM Ascend", "torch-gcu", "TritonBench", "MLC-LLM",
              "vLLM Iluvatar plugin"]),
    ]  # fmt: skip
    assert [h.get_text() for h in soup.select("h3.layer-title")] == [
        "Kernel programming (2)", "Serving engines (4)", "Platform SDKs (2)", "Other items (7)"
    ]  # fmt: skip
    assert [o["value"] for o in soup.select("select[name=layer] option")] == [
        "", "framework", "kernel programming", "serving", "platform sdk"
    ]  # the records' layers and the items', in the catalog's order
    rider = _card(soup, "vllm-v1-engine")
    assert _dd(rider, "Part of") == "vLLM: its release and license facts"
    assert rider.find("dd").a["href"] == "#p-vllm"
    assert _dd(rider, "Latest").startswith("release candidate part of vLLM: v0.33.0rc3")
    closed = _card(soup, "neuware")
    assert [dt.get_text() for dt in closed.find_all("dt")] == ["Not trackable", "Homepage"]
    assert _dd(closed, "Not trackable") == "closed SDK; no version list of its own"
    assert closed.find("a")["href"] == "https://developer.cambricon.com"
    assert "untracked" in closed["class"]
    assert "15 items: 11 tracked, 2 part of another item, 2 not trackable." in soup.select_one(
        ".lede"
    ).get_text()
