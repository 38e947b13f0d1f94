"""The Compatibility Explorer in a real browser: Debian's Chromium driven by Playwright, the
site opened from file://. Skipped with the reason when no Chromium is installed, except under
CI (the CI environment variable set), where that is a failure: .ci/run installs Chromium.

Every page is watched: a console error, an uncaught exception, a CSP violation, a dialog or a
request that is not for a local file fails the test.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crawler.config import load_config
from crawler.export.site import SiteInput, write_site
from tests.support import ROOT
from tests.support.browser import READ_MATRIX, Watched, chromium, open_watched
from tests.support.catalog import TOKEN, WRITTEN_SGLANG, Catalog, needs_catalog
from tests.support.explorer import (
    EXPECTED_MATRIX,
    HOSTILE_PLATFORM,
    HOSTILE_PROJECT,
    HOSTILE_RELEASE,
    HOSTILE_VERSION,
    PLATFORMS,
    demo_site,
    hostile_site,
    many_projects_site,
)
from tests.support.export import AUDIT_DATE

ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def _site(root: Path, name: str, site: SiteInput) -> str:
    write_site(site, root / name, today=AUDIT_DATE + timedelta(days=1))
    return (root / name / "index.html").as_uri()


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _site(tmp_path_factory.mktemp("explorer"), "demo", demo_site())


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    """``open_page(url, javascript=True, now=None) -> Watched``, each in a fresh context."""
    contexts = []

    def opener(url: str, *, javascript: bool = True, now: datetime | None = None) -> Watched:
        context = browser.new_context(
            viewport={"width": 1400, "height": 900}, java_script_enabled=javascript
        )
        contexts.append(context)
        return open_watched(context, url, javascript=javascript, now=now)

    yield opener
    for context in contexts:
        context.close()


def _visible_rows(page: Any) -> list[str]:
    return list(page.evaluate(READ_MATRIX)["rows"])


def test_matrix_shows_the_expected_status_in_every_cell(open_page: Any, demo_url: str) -> None:
    watched = open_page(demo_url)
    matrix = watched.page.evaluate(READ_MATRIX)
    assert matrix == {"heads": ["Project", *PLATFORMS], "rows": EXPECTED_MATRIX}
    assert watched.page.inner_text("#count") == "Showing 4 of 4 projects"
    watched.check()


def test_platform_and_status_filters_show_the_matching_rows_and_keep_them_in_the_url(
    open_page: Any, demo_url: str
) -> None:
    watched = open_page(demo_url)
    page = watched.page
    page.select_option("select[name=platform]", "Huawei Ascend")
    assert page.evaluate(READ_MATRIX) == {
        "heads": ["Project", "Huawei Ascend"],
        "rows": {
            "TileLang": [["official plugin"]],
            "vLLM": [["official plugin", "official plugin"]],
            "SGLang": [["upstream"]],
        },
    }
    page.select_option("select[name=status]", "official plugin")
    assert page.evaluate(READ_MATRIX) == {
        "heads": ["Project", "Huawei Ascend"],
        "rows": {
            "TileLang": [["official plugin"]],
            "vLLM": [["official plugin", "official plugin"]],
        },
    }
    assert page.evaluate("location.hash") == "#platform=Huawei%20Ascend&status=official%20plugin"
    assert page.inner_text("#count") == "Showing 2 of 2 matching projects (4 in all)"
    page.click("button[type=reset]")
    page.wait_for_function(
        "() => document.querySelectorAll('#matrix tbody tr:not([hidden])').length == 4"
    )
    assert page.evaluate(READ_MATRIX)["rows"] == EXPECTED_MATRIX
    assert page.evaluate("location.hash") == ""
    watched.check()


def test_a_shared_url_restores_the_filters_and_follows_hash_changes(
    open_page: Any, demo_url: str
) -> None:
    watched = open_page(demo_url + "#platform=Cambricon%20MLU&status=in%20progress")
    page = watched.page
    assert page.input_value("select[name=platform]") == "Cambricon MLU"
    assert page.input_value("select[name=status]") == "in progress"
    assert page.evaluate(READ_MATRIX) == {
        "heads": ["Project", "Cambricon MLU"],
        "rows": {"SGLang": [["in progress"]]},
    }
    page.evaluate("location.hash = '#status=upstream&q=nvidia'")
    page.wait_for_function(
        "() => document.querySelector('select[name=status]').value === 'upstream'"
    )
    assert page.input_value("select[name=platform]") == ""
    assert page.input_value("input[name=q]") == "nvidia"
    assert page.evaluate(READ_MATRIX) == {
        "heads": ["Project", "NVIDIA GPU"],
        "rows": {"TileLang": [["upstream"]], "SGLang": [["upstream"]]},
    }
    page.evaluate("location.hash = '#layer=framework&project=torch-gcu'")
    page.wait_for_function("() => document.querySelector('select[name=layer]').value")
    assert page.evaluate(READ_MATRIX) == {
        "heads": ["Project", "Enflame GCU"],
        "rows": {"torch-gcu": [["vendor integration"]]},
    }
    page.evaluate("location.hash = '#platform=No%20such%20chip'")  # unknown: no filter
    page.wait_for_function("() => !document.querySelector('select[name=layer]').value")
    assert page.evaluate(READ_MATRIX)["rows"] == EXPECTED_MATRIX
    watched.check()


def test_search_matches_a_project_or_a_record_and_filters_the_project_cards(
    open_page: Any, demo_url: str
) -> None:
    watched = open_page(demo_url)
    page = watched.page
    page.fill("input[name=q]", "iluvatar")
    page.wait_for_function("() => location.hash === '#q=iluvatar'")
    assert page.evaluate(READ_MATRIX)["rows"] == {
        "vLLM": [["community plugin"]],
        "SGLang": [["in progress"]],
    }
    cards = page.eval_on_selector_all(
        "article.card", "cards => cards.filter(c => !c.hidden).map(c => c.dataset.project)"
    )
    # issue 20: the cards follow the matrix (vLLM, SGLang) and match their own text too
    assert cards == ["vLLM", "SGLang", "vLLM Iluvatar plugin"]
    page.fill("input[name=q]", "no such thing")
    page.wait_for_function("() => !document.getElementById('nomatch').hidden")
    assert page.evaluate(READ_MATRIX)["rows"] == {}
    watched.check()


def test_every_evidence_link_is_http_with_noopener_noreferrer(
    open_page: Any, demo_url: str
) -> None:
    watched = open_page(demo_url)
    links = watched.page.eval_on_selector_all(
        "a[href]", "links => links.map(a => [a.getAttribute('href'), a.rel, a.protocol])"
    )
    external = [link for link in links if not link[0].startswith("#") and link[0] != "catalog.json"]
    assert len(external) > 40
    assert {(protocol in ("http:", "https:"), rel) for _, rel, protocol in external} == {
        (True, "noopener noreferrer")
    }
    cells = watched.page.eval_on_selector_all("#matrix td a", "links => links.map(a => a.href)")
    assert len(cells) == 13 and all(href.startswith("https://") for href in cells)
    watched.check()


def test_hostile_upstream_text_is_shown_as_text_and_runs_nothing(
    open_page: Any, tmp_path: Path
) -> None:
    watched = open_page(_site(tmp_path, "hostile", hostile_site()))
    page = watched.page
    row = page.locator("#matrix tbody tr").filter(has_text=HOSTILE_RELEASE)
    assert row.locator(".ref").inner_text() == HOSTILE_RELEASE
    assert row.locator("code").inner_text() == HOSTILE_VERSION
    assert page.locator("#matrix thead th").nth(8).inner_text() == HOSTILE_PLATFORM
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    page.hover(f'#matrix tbody tr[data-project="{HOSTILE_PROJECT}"] th a')
    page.select_option("select[name=platform]", HOSTILE_PLATFORM)
    assert page.evaluate(READ_MATRIX)["rows"] == {HOSTILE_PROJECT: [["community plugin"]]}
    assert page.evaluate("[typeof window.__pwned, document.scripts.length]") == ["undefined", 1]
    hrefs = page.eval_on_selector_all("a", "links => links.map(a => a.protocol)")
    assert set(hrefs) == {"https:", "file:"}
    watched.check()


def test_the_policy_blocks_inline_handlers_and_remote_scripts(
    open_page: Any, demo_url: str
) -> None:
    watched = open_page(demo_url)
    page = watched.page
    page.evaluate(
        """() => {
          const div = document.createElement('div');
          div.setAttribute('onclick', 'window.__ran = "handler"');
          document.body.append(div);
          div.click();
          const script = document.createElement('script');
          script.src = 'https://example.invalid/x.js';
          document.head.append(script);
        }"""
    )
    page.wait_for_function("() => window.__violations.length >= 2")
    assert page.evaluate("typeof window.__ran") == "undefined"
    assert sorted(page.evaluate("window.__violations")) == [
        "script-src-attr inline",
        "script-src-elem https://example.invalid/x.js",
    ]
    # the script was refused before any fetch; the browser logged both as console errors
    assert watched.failed_requests == [("https://example.invalid/x.js", "csp")]
    assert len(watched.problems) == 3
    assert watched.problems[2] == "network request: https://example.invalid/x.js"
    assert all("Content Security Policy" in p for p in watched.problems[:2])


def test_keyboard_reaches_and_changes_the_filters_and_moves_between_cells(
    open_page: Any, demo_url: str
) -> None:
    watched = open_page(demo_url)
    page = watched.page
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name") == "platform":
            break
    else:
        pytest.fail("Tab never reached the platform filter")
    page.keyboard.press("ArrowDown")
    page.wait_for_function("() => location.hash === '#platform=AMD%20Instinct'")
    assert page.evaluate(READ_MATRIX)["rows"] == {"SGLang": [["upstream"]]}
    page.keyboard.press("ArrowUp")
    page.wait_for_function("() => location.hash === ''")
    page.focus("#matrix tbody tr:first-child th a")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    focused = page.evaluate(
        "[document.activeElement.tagName, document.activeElement.cellIndex,"
        " document.activeElement.parentElement.dataset.project]"
    )
    assert focused == ["TD", 2, "vLLM"]
    page.keyboard.press("Home")
    assert page.evaluate("document.activeElement.tagName") == "TH"
    watched.check()


def test_without_javascript_the_whole_matrix_is_readable(open_page: Any, demo_url: str) -> None:
    watched = open_page(demo_url, javascript=False)
    page = watched.page
    rows = page.eval_on_selector_all(
        "#matrix tbody tr",
        """rows => rows.map(tr => [tr.dataset.project, tr.getClientRects().length > 0,
             [...tr.cells].slice(1).map(td => [...td.children].map(p => p.dataset.status))])""",
    )
    assert {name: statuses for name, _, statuses in rows} == EXPECTED_MATRIX
    assert all(visible for _, visible, _ in rows)
    assert not page.is_visible("#filters")
    assert page.locator("article.card").count() == 11
    watched.check()


def test_old_data_banner_is_computed_at_view_time(open_page: Any, demo_url: str) -> None:
    fresh = open_page(demo_url, now=datetime(2026, 11, 12, 12, tzinfo=UTC))
    assert not fresh.page.is_visible("#stale")
    fresh.check()
    old = open_page(demo_url, now=datetime(2026, 12, 1, 12, tzinfo=UTC))
    assert old.page.is_visible("#stale")
    assert old.page.inner_text("#stale-age") == "26 days"
    old.check()


def test_screenshot_of_the_page(open_page: Any, crawler_demo_url: str) -> None:
    """A picture for the reviewer of the page `crawler demo` writes: test-artifacts/explorer.png
    (UPDATE_SCREENSHOT=1 also rewrites docs/explorer.png, the README's picture)."""
    watched = open_page(crawler_demo_url)
    page = watched.page
    # the cards render when near the viewport (content-visibility): make it the whole page
    height = page.evaluate("document.documentElement.scrollHeight")
    page.set_viewport_size({"width": 1400, "height": height})
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    ARTIFACTS.mkdir(exist_ok=True)
    shot = page.screenshot(path=str(ARTIFACTS / "explorer.png"), full_page=True)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 50_000
    if os.environ.get("UPDATE_SCREENSHOT"):
        (ROOT / "docs").mkdir(exist_ok=True)
        top = {"x": 0, "y": 0, "width": 1400, "height": min(height, 1540)}  # matrix, cards
        page.screenshot(path=str(ROOT / "docs" / "explorer.png"), clip=top)
    watched.check()


def test_a_large_matrix_shows_a_page_of_rows_at_a_time(open_page: Any, tmp_path: Path) -> None:
    url = _site(tmp_path, "many", many_projects_site(230))
    watched = open_page(url)
    page = watched.page
    assert len(_visible_rows(page)) == 100  # the stylesheet's first page, before any filter
    assert page.inner_text("#count") == "Showing 100 of 230 projects"
    page.click("#more-rows")
    assert _visible_rows(page)[-1] == "Project 199"
    assert page.inner_text("#count") == "Showing 200 of 230 projects"
    page.click("#all-rows")
    assert len(_visible_rows(page)) == 230 and not page.is_visible("#more")
    page.select_option("select[name=status]", "upstream")  # a filter starts a new first page
    rows = _visible_rows(page)
    assert (len(rows), rows[0], rows[-1]) == (100, "Project 001", "Project 199")
    assert page.inner_text("#count") == "Showing 100 of 115 matching projects (230 in all)"
    page.click("#all-rows")
    assert len(_visible_rows(page)) == 115
    watched.check()
    no_script = open_page(url, javascript=False)
    assert len(_visible_rows(no_script.page)) == 230
    no_script.check()


def test_an_empty_matrix_is_explained_not_reported_as_no_match(
    open_page: Any, tmp_path: Path
) -> None:
    catalog = dict(demo_site().catalog, integrations=[], platforms=[])
    watched = open_page(_site(tmp_path, "empty", demo_site(catalog=catalog)))
    page = watched.page
    assert page.is_visible("#empty") and not page.is_visible("#nomatch")
    assert page.inner_text("#count") == "Showing 0 of 0 projects"
    watched.check()


# -- issue 20: the demo's own page, the README's link, stale marks, filtered cards -------------


@pytest.fixture(scope="module")
def crawler_demo_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The site `crawler demo` itself writes (the README's picture and its example link)."""
    from crawler.demo import run_demo

    output = tmp_path_factory.mktemp("crawler-demo") / "demo-output"
    run_demo(output)
    return (output / "site" / "index.html").as_uri()


def _shown(page: Any, selector: str) -> list[str]:
    shown = "els => els.filter(e => e.getClientRects().length).map(e => e.dataset.project)"
    return list(page.eval_on_selector_all(selector, shown))


def test_the_readme_filter_link_opens_a_filtered_view_of_the_demo(
    open_page: Any, crawler_demo_url: str
) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"demo-output/site/index\.html(#[^`\s]+)", readme)
    watched = open_page(crawler_demo_url + example)
    page = watched.page
    assert page.input_value("select[name=platform]") == "Cambricon MLU"
    assert page.input_value("select[name=status]") == "upstream"
    rows = page.evaluate(READ_MATRIX)
    assert rows["heads"] == ["Project", "Cambricon MLU"]
    assert rows["rows"] and all(cell == [["upstream"]] for cell in rows["rows"].values())
    shown = len(rows["rows"])
    assert page.inner_text("#count").startswith(f"Showing {shown} of {shown} ")
    watched.check()


def test_filters_apply_to_the_cards_and_the_changes(
    open_page: Any, crawler_demo_url: str
) -> None:
    watched = open_page(crawler_demo_url)
    page = watched.page
    every_card = _shown(page, "article.card")
    every_change = _shown(page, "#changes li")
    assert len(every_card) == 17 and every_change
    page.select_option("select[name=status]", "in progress")
    page.wait_for_function("() => location.hash === '#status=in%20progress'")
    rows = list(page.evaluate(READ_MATRIX)["rows"])
    assert rows  # the projects with an "in progress" record, and only their cards and changes
    assert _shown(page, "article.card") == [p for p in every_card if p in rows]
    assert _shown(page, "#changes li") == [p for p in every_change if p in rows]
    page.click("button[type=reset]")
    page.wait_for_function("() => location.hash === ''")
    assert _shown(page, "article.card") == every_card
    assert _shown(page, "#changes li") == every_change
    watched.check()


def test_a_stale_project_and_a_stale_page_are_marked_with_the_date_of_their_facts(
    open_page: Any, tmp_path: Path
) -> None:
    site = demo_site()
    catalog = json.loads(json.dumps(site.catalog))
    ids = {p["name"]: p["id"] for p in catalog["projects"]}
    for project in catalog["projects"]:
        if project["name"] == "SGLang":
            project["stale"], project["last_checked"] = True, "2026-10-30"
    record = next(i for i in catalog["integrations"] if i["project"] == ids["vLLM"])
    record["evidence"][0]["stale"], record["evidence"][0]["date"] = True, "2026-10-28"
    url = _site(tmp_path, "stale", replace(site, catalog=catalog))
    watched = open_page(url)
    page = watched.page
    marks = page.eval_on_selector_all(
        "#matrix .flag.stale",
        "els => els.map(e => [e.closest('tr').dataset.project, e.textContent])",
    )
    assert ["SGLang", "stale: facts of 2026-10-30"] in marks
    assert ["vLLM", "stale: page facts of 2026-10-28"] in marks
    card = page.locator('article.card[data-project="SGLang"] h4 .stale')
    assert card.inner_text() == "stale: facts of 2026-10-30"
    page.fill("input[name=q]", "sglang")  # filtered, the marks stay with their project
    page.wait_for_function("() => location.hash === '#q=sglang'")
    assert _shown(page, "article.card") == ["SGLang"]
    assert page.is_visible('#matrix tr[data-project="SGLang"] .flag.stale')
    watched.check()


def test_a_broken_evidence_link_is_marked_with_the_day_it_last_worked(
    open_page: Any, tmp_path: Path
) -> None:
    site = demo_site()
    catalog = json.loads(json.dumps(site.catalog))
    project = next(p for p in catalog["projects"] if p["evidence"])
    broken = project["evidence"][-1]["url"]
    project["links"] = [
        {"url": e["url"], "status": "ok", "moved_to": None, "last_ok": "2026-11-04",
         "checked": "2026-11-04"} for e in project["evidence"][:-1]
    ] + [{"url": broken, "status": "broken", "moved_to": None, "last_ok": "2026-10-30",
          "checked": "2026-11-04"}]  # fmt: skip
    url = _site(tmp_path, "broken", replace(site, catalog=catalog))
    watched = open_page(url)
    marks = watched.page.eval_on_selector_all(
        "article.card a.broken",
        "els => els.map(a => [a.closest('article').dataset.project, a.getAttribute('href'),"
        " a.nextElementSibling.textContent])",
    )
    assert marks == [[project["name"], broken, "broken link, last seen working 2026-10-30"]]
    watched.check()


# -- issue 34: every item of the shipped sources.yaml, by platform and by layer --------------------


@pytest.fixture(scope="module")
def full_catalog_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The site `crawler export --site` makes of an audit of the shipped sources.yaml (its 84
    items) against the fakes of crawler_fakes.catalog."""
    from crawler.audit import source_names
    from crawler.export.from_store import export_audit

    root = tmp_path_factory.mktemp("full-catalog")
    catalog = Catalog(f"sqlite:///{root}/crawler.sqlite", root / "reports", TOKEN,
                      replaced=WRITTEN_SGLANG)  # fmt: skip
    try:
        outcome = catalog.audit()
        assert (outcome.status, outcome.report.summary.checked) == ("complete", 58)
        labels = {name: names.label for name, names in source_names().items()}
        export_audit(catalog.store, catalog.config, None, root / "export", site=root / "site",
                     labels=labels)  # fmt: skip
    finally:
        catalog.close()
    return (root / "site" / "index.html").as_uri()


def _layers_shown(page: Any) -> list[str]:
    return list(page.eval_on_selector_all(
        "section.layer", "els => els.filter(e => !e.hidden).map(e => e.dataset.layer)"
    ))  # fmt: skip


@needs_catalog
def test_the_full_catalog_holds_every_item_grouped_by_the_pages_layers(
    open_page: Any, full_catalog_url: str
) -> None:
    watched = open_page(full_catalog_url)
    page = watched.page
    config = load_config(ROOT / "sources.yaml")
    cards = page.eval_on_selector_all(
        "article.card", "cards => cards.map(c => [c.dataset.layer, c.dataset.project])"
    )
    order = ["framework", "compiler", "kernel programming", "kernel library", "serving",
             "distributed serving", "platform sdk"]  # fmt: skip
    assert cards == [[p.layer, p.name] for layer in order for p in config.projects
                     if p.layer == layer]  # fmt: skip
    assert len(cards) == 84 and _layers_shown(page) == order
    assert "84 items: 58 tracked, 10 part of another item, 16 not trackable" in page.inner_text(
        ".lede"
    )
    inductor = page.locator('article.card[data-project="TorchInductor"]')
    # (cards off screen are not rendered: their text is read from the DOM)
    assert inductor.locator("dd").first.text_content() == "PyTorch: its release and license facts"
    assert inductor.locator("dd a").first.get_attribute("href") == "#p-pytorch"
    assert (inductor.locator(".kind + a").text_content() or "").startswith("part of PyTorch: v0.")
    neuware = page.locator('article.card[data-project="Neuware"]')
    assert neuware.locator("dt, dd").all_text_contents() == [
        "Not trackable", "closed SDK: its versions show only through other projects' pins",
        "Homepage", "developer.cambricon.com",
    ]  # fmt: skip
    watched.check()


@needs_catalog
def test_the_full_catalog_filters_by_layer_and_by_platform(
    open_page: Any, full_catalog_url: str
) -> None:
    watched = open_page(full_catalog_url)
    page = watched.page
    page.select_option("select[name=layer]", "compiler")
    page.wait_for_function("() => location.hash === '#layer=compiler'")
    assert _shown(page, "article.card") == [
        "Apache TVM", "MLIR", "OpenXLA / XLA", "IREE", "TorchInductor", "Glow"
    ]  # fmt: skip
    assert _layers_shown(page) == ["compiler"]
    assert page.evaluate(READ_MATRIX)["rows"] == {}  # no support table records a compiler
    assert page.is_visible("#nomatch")
    page.select_option("select[name=layer]", "")
    page.select_option("select[name=platform]", "Cambricon MLU")
    page.wait_for_function("() => location.hash === '#platform=Cambricon%20MLU'")
    # the records the evidence pages give on Cambricon MLU: FlagGems' platforms table,
    # LMDeploy's Cambricon page, torch_mlu's three branches (PyTorch, via torch_mlu), SGLang's
    # MLU CI pins and its README's "Integrations in progress" sentence
    assert page.evaluate(READ_MATRIX) == {
        "heads": ["Project", "Cambricon MLU"],
        "rows": {"FlagGems": [["upstream"]], "LMDeploy": [["upstream"]],
                 "PyTorch": [["vendor integration"] * 3],
                 "SGLang": [["in progress", "in progress"]]},
    }  # fmt: skip
    assert _shown(page, "article.card") == ["PyTorch", "FlagGems", "SGLang", "LMDeploy"]
    page.select_option("select[name=layer]", "serving")  # the records of that layer only
    page.wait_for_function("() => location.hash === '#platform=Cambricon%20MLU&layer=serving'")
    assert page.evaluate(READ_MATRIX)["rows"] == {
        "LMDeploy": [["upstream"]], "SGLang": [["in progress", "in progress"]]
    }
    assert _shown(page, "article.card") == ["SGLang", "LMDeploy"]
    assert _layers_shown(page) == ["serving"]
    watched.check()


# -- on a phone: no sideways scroll, the filters folded, a project card on the first screen --------

PHONE = {"width": 375, "height": 812}


@pytest.fixture
def open_phone(browser: Any) -> Iterator[Any]:
    """``open_phone(url, width=375) -> Watched``: a phone's viewport, in a fresh context."""
    contexts = []

    def opener(url: str, width: int = PHONE["width"]) -> Watched:
        context = browser.new_context(
            viewport={"width": width, "height": PHONE["height"]},
            device_scale_factor=2, is_mobile=True, has_touch=True,
        )  # fmt: skip
        contexts.append(context)
        return open_watched(context, url)

    yield opener
    for context in contexts:
        context.close()


@pytest.mark.parametrize("width", [320, 375, 390])
def test_on_a_phone_the_page_is_no_wider_than_the_screen(
    open_phone: Any, crawler_demo_url: str, width: int
) -> None:
    """The project grid's columns were at least 24rem: at 375 px the page scrolled sideways
    (a phone zooms out to fit it, so innerWidth grows with it and is no measure)."""
    watched = open_phone(crawler_demo_url, width)
    page = watched.page
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    wider = page.evaluate(
        f"""() => [...document.querySelectorAll('body *')].filter(e => {{
              const r = e.getBoundingClientRect();
              return r.width && r.right > {width} + 0.5 && !e.closest('.scroll');
            }}).map(e => e.tagName + '.' + e.className)"""
    )
    assert wider == []
    watched.check()


def test_on_a_phone_the_filters_fold_behind_one_control_and_a_card_is_on_the_first_screen(
    open_phone: Any, crawler_demo_url: str
) -> None:
    watched = open_phone(crawler_demo_url)
    page = watched.page
    assert page.is_visible("#filters-toggle")
    assert page.get_attribute("#filters-toggle", "aria-expanded") == "false"
    assert not page.is_visible("select[name=platform]")
    assert not page.is_visible("input[name=q]")
    top = page.evaluate("document.querySelector('article.card').getBoundingClientRect().top")
    assert 0 < top < PHONE["height"] - 40  # its heading shows, not only its border
    page.click("#filters-toggle")
    assert page.get_attribute("#filters-toggle", "aria-expanded") == "true"
    page.select_option("select[name=status]", "in progress")
    page.wait_for_function("() => location.hash === '#status=in%20progress'")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.click("#filters-toggle")
    assert not page.is_visible("select[name=status]")
    assert "1 filter" in page.inner_text("#filters-toggle")  # folded, it says one is on
    watched.check()


def test_on_a_phone_a_card_is_on_the_first_screen_even_with_the_old_data_banner(
    open_phone: Any, tmp_path: Path
) -> None:
    """The seed-like site: an old-data banner, a few changes (a short list starts open on a
    wide screen) and a matrix of eight platforms above the cards."""
    watched = open_phone(_site(tmp_path, "seed", demo_site()))
    page = watched.page
    assert page.is_visible("#stale")
    assert page.evaluate("document.getElementById('changes').open") is False
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    top = page.evaluate("document.querySelector('article.card').getBoundingClientRect().top")
    assert 0 < top < PHONE["height"] - 40
    watched.check()


def test_a_shared_url_with_filters_opens_them_on_a_phone(
    open_phone: Any, crawler_demo_url: str
) -> None:
    watched = open_phone(crawler_demo_url + "#platform=Cambricon%20MLU&status=upstream")
    assert "2 filters" in watched.page.inner_text("#filters-toggle")
    assert watched.page.input_value("select[name=platform]") == "Cambricon MLU"
    watched.check()


def test_on_a_wide_screen_the_filters_are_shown_without_the_fold(
    open_page: Any, crawler_demo_url: str
) -> None:
    watched = open_page(crawler_demo_url)
    assert not watched.page.is_visible("#filters-toggle")
    assert watched.page.is_visible("select[name=platform]")
    watched.check()


def test_on_a_phone_only_the_changed_cards_are_highlighted_with_since_when(
    open_phone: Any, crawler_demo_url: str
) -> None:
    """The highlight is on the cards with a change since the previous export (the demo's first
    export: since night 1) and says since when; an unchanged card carries none."""
    watched = open_phone(crawler_demo_url)
    page = watched.page
    cards = page.eval_on_selector_all(
        "article.card",
        """cards => cards.map(c => [c.dataset.project, c.classList.contains('changed'),
             c.querySelectorAll('.card-changes li').length,
             (c.querySelector('h4 .flag.changed') || {}).textContent || null])""",
    )
    listed = "els => els.map(e => e.dataset.project)"
    changes = set(page.eval_on_selector_all("#changes li", listed)) - {"Retired Plugin"}  # no card
    night_one = page.evaluate("document.body.dataset.changesSinceAudit")
    assert night_one == "1"
    title = page.inner_text("#changes-title")
    since = re.match(r"Changed since audit #1 \((\d{4}-\d{2}-\d{2})\): \d+ changes", title)
    assert since, title
    highlighted = {name for name, changed, _, _ in cards if changed}
    assert highlighted == changes
    for name, changed, listed, flag in cards:
        assert (changed, bool(listed)) == (name in changes, name in changes), name
        assert flag == (f"changed since {since.group(1)}" if changed else None), name
    assert {"Vanished Operators", "Closed SDK"}.isdisjoint(highlighted)
    watched.check()
