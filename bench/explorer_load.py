"""Load and filter time of the Compatibility Explorer at catalog scale, in a real browser.

Builds the site (``crawler.export.site.write_site``) from a synthetic catalog of P projects ×
Q platforms (default 1,000 × 20; ``--density`` of the cells hold a record, some two), with a
release history per project, opens it from ``file://`` in Debian's Chromium through Playwright
and prints one table: file size, DOM size, load time, and the time of each filter step.

Reproduce (from the repository root, in the project's virtualenv with the dev extra, and
``apt-get install -y chromium``):

    python bench/explorer_load.py                         # 1,000 × 20, density 0.4, 5 runs
    python bench/explorer_load.py --projects 1000 --platforms 20 --density 1.0
    python bench/explorer_load.py --projects 200 --runs 3

How figures are taken (median over ``--runs`` fresh pages, each in a new browser context):
- load: from navigation start to the end of the load event (``PerformanceNavigationTiming
  .loadEventEnd``): parsing, the script's start-up and the first layout; "first paint" is
  Chromium's ``first-contentful-paint``; the same opened with a shared filter in the hash
  includes restoring and applying it (the script does that before the load event);
- filter: in the page, ``performance.now()`` before setting the control and dispatching its
  ``change`` event (what a keyboard or mouse change does), and after a forced layout
  (``document.body.offsetHeight``) that includes the style and layout work the change caused;
  "+paint" waits two animation frames more, so it includes painting the result;
- DOM size: elements in the document; file size: index.html in bytes.

It asserts nothing (see tests/e2e/test_explorer_browser.py for checked behaviour).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

from crawler.config.mappings import SUPPORT_STATUSES
from crawler.export.site import HistoryPoint, SiteChange, SiteInput, write_site

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
STATUSES = list(SUPPORT_STATUSES)  # the catalog's vocabulary, from its one definition
LAYERS = ["compiler", "kernel library", "kernel programming", "serving", "distributed serving"]
CHECKED = date(2026, 11, 5)


def synthetic_site(projects: int, platforms: int, density: float, seed: int = 14) -> SiteInput:
    """A catalog shaped like ``build_catalog``'s output, at scale."""
    rng = random.Random(seed)
    platform_records = [
        {"id": f"platform-{j:02d}", "name": f"Accelerator {j:02d}"} for j in range(platforms)
    ]
    project_records: list[dict[str, Any]] = []
    integrations: list[dict[str, Any]] = []
    history: dict[str, list[HistoryPoint]] = {}
    for i in range(projects):
        ident, name = f"project-{i:04d}", f"Project {i:04d}"
        repo = f"https://github.com/org{i % 97}/project-{i:04d}"
        major, day = rng.randint(0, 3), CHECKED - timedelta(days=rng.randint(400, 900))
        points = []
        for k in range(rng.randint(4, 16)):
            day += timedelta(days=rng.randint(5, 60))
            points.append(
                HistoryPoint(
                    min(day, CHECKED), "release", f"v{major}.{k}.0", prerelease=rng.random() < 0.15
                )
            )
        history[name] = points
        latest = points[-1]
        project_records.append(
            {
                "id": ident,
                "name": name,
                "repository": {"url": repo, "forge": "GitHub"},
                "tracked_ref": {
                    "kind": "release",
                    "name": latest.name,
                    "date": latest.date.isoformat(),
                    "prerelease": latest.prerelease,
                    "url": f"{repo}/releases/tag/{latest.name}",
                    "label": latest.name + (" (pre-release)" if latest.prerelease else ""),
                },
                "license": {
                    "forge_verdict": "Apache-2.0",
                    "detected_spdx_ids": ["Apache-2.0"],
                    "referenced_spdx_ids": [],
                    "expression": None,
                    "verdict": "exact",
                    "label": "Apache-2.0",
                    "files": [
                        {
                            "path": "LICENSE",
                            "role": "root",
                            "spdx_ids": ["Apache-2.0"],
                            "url": f"{repo}/blob/main/LICENSE",
                        }
                    ],
                    "extra_text": None,
                },
                "last_checked": CHECKED.isoformat(),
                "evidence": [
                    {"about": "repository", "url": repo, "audit": 1, "date": CHECKED.isoformat()}
                ],
            }
        )
        for j, platform in enumerate(platform_records):
            if rng.random() >= density:
                continue
            for n in range(2 if rng.random() < 0.1 else 1):
                integrations.append(
                    {
                        "id": f"{ident}/readme/{platform['id']}-{n}",
                        "project": ident,
                        "platform": platform["id"],
                        "layer": LAYERS[(i + j) % len(LAYERS)],
                        "status": rng.choice(STATUSES),
                        "version_range": f">={major}.{n}.0,<{major + 1}.0.0",
                        "pins": [{"name": "driver", "value": f">={rng.randint(1, 9)}.0"}]
                        if rng.random() < 0.3
                        else [],
                        "via": None,
                        "evidence": [
                            {
                                "url": f"{repo}/blob/main/README.md",
                                "date": CHECKED.isoformat(),
                                "audit": 1,
                                "page": "README",
                                "table": "backends",
                                "row": {"Backend": platform["name"]},
                                "status": "upstream",
                                "wording": "Supported",
                            }
                        ],
                    }
                )
    catalog = {
        "schema_version": 1,
        "audit": {"id": 1, "date": CHECKED.isoformat()},
        "projects": project_records,
        "platforms": platform_records,
        "integrations": integrations,
    }
    changes = [
        SiteChange(f"Project {i:04d}", "new_release", "a new release", None)
        for i in range(0, projects, 50)
    ]
    return SiteInput(catalog=catalog, checked_on=CHECKED, history=history, changes=changes)


MEASURE = """async ([name, value]) => {
  const field = document.querySelector('#filters [name="' + name + '"]');
  const t0 = performance.now();
  field.value = value;
  field.dispatchEvent(new Event('change', {bubbles: true}));
  document.body.offsetHeight;
  const t1 = performance.now();
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const t2 = performance.now();
  return [t1 - t0, t2 - t0, document.querySelectorAll('#matrix tbody tr:not([hidden])').length];
}"""

SHARED_HASH = "#platform=Accelerator%2007&status=in%20progress"
STEPS = [
    ("platform", "Accelerator 07"),
    ("status", "in progress"),
    ("platform", ""),
    ("q", "v2.3"),
    ("status", ""),
    ("q", ""),
]


def measure_once(page: Page, url: str) -> dict[str, float]:
    page.goto(url, wait_until="load")
    timing = page.evaluate(
        """() => {
          const nav = performance.getEntriesByType('navigation')[0];
          const fcp = performance.getEntriesByName('first-contentful-paint')[0];
          return [nav.domContentLoadedEventEnd, nav.loadEventEnd, fcp ? fcp.startTime : -1,
                  document.getElementsByTagName('*').length];
        }"""
    )
    figures = {"dcl": timing[0], "load": timing[1], "fcp": timing[2], "dom": timing[3]}
    page.goto("about:blank")
    page.goto(url + SHARED_HASH, wait_until="load")
    figures["load_hash"] = page.evaluate(
        "() => performance.getEntriesByType('navigation')[0].loadEventEnd"
    )
    figures["load_hash_rows"] = page.evaluate(
        "() => document.querySelectorAll('#matrix tbody tr:not([hidden])').length"
    )
    page.goto(url, wait_until="load")
    for n, (name, value) in enumerate(STEPS):
        layout, painted, rows = page.evaluate(MEASURE, [name, value])
        figures[f"step{n}"] = layout
        figures[f"step{n}+paint"] = painted
        figures[f"step{n}rows"] = rows
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--platforms", type=int, default=20)
    parser.add_argument("--density", type=float, default=0.4)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chromium", default=CHROMIUM)
    options = parser.parse_args(argv)
    if not Path(options.chromium).exists():
        print(f"no Chromium at {options.chromium}: apt-get install -y chromium", file=sys.stderr)
        return 2
    site = synthetic_site(options.projects, options.platforms, options.density)
    out = Path(tempfile.mkdtemp(prefix="explorer-bench-"))
    try:
        write_site(site, out, today=CHECKED)
        index = out / "index.html"
        size = index.stat().st_size
        records = len(site.catalog["integrations"])
        runs = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=options.chromium, args=ARGS)
            for _ in range(options.runs):
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                runs.append(measure_once(context.new_page(), index.as_uri()))
                context.close()
            version = browser.version
            browser.close()
    finally:
        shutil.rmtree(out, ignore_errors=True)

    def median(key: str) -> float:
        return statistics.median(run[key] for run in runs)

    print(
        f"Compatibility Explorer, {options.projects} projects × {options.platforms} platforms, "
        f"{records} records, Chromium {version}, median of {options.runs} runs\n"
    )
    print("| measure | value |")
    print("|---|---|")
    print(f"| index.html size | {size / 1024 / 1024:.2f} MiB |")
    print(f"| DOM elements | {int(median('dom')):,} |")
    print(f"| DOMContentLoaded | {median('dcl'):.0f} ms |")
    print(f"| load event end | {median('load'):.0f} ms |")
    print(f"| first contentful paint | {median('fcp'):.0f} ms |")
    print(
        f"| load event end, opened with {SHARED_HASH} "
        f"({int(median('load_hash_rows'))} rows shown) | {median('load_hash'):.0f} ms |"
    )
    for n, (name, value) in enumerate(STEPS):
        label = f"{name} = {value!r}" if value else f"clear {name}"
        print(
            f"| filter: {label} ({int(median(f'step{n}rows'))} rows shown) | "
            f"{median(f'step{n}'):.0f} ms (+paint {median(f'step{n}+paint'):.0f} ms) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
