"""Playwright harness for the Explorer's browser tests: Debian's Chromium, and pages watched
for console errors, uncaught exceptions, CSP violations, dialogs and non-local requests."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Installed before any page script: records CSP violations the page itself would not report.
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push(e.violatedDirective + ' ' + (e.blockedURI || ''));
});
"""
# project → statuses per platform column, of the rows and records shown (hidden ones skipped)
READ_MATRIX = """() => {
  const shown = (el) => el.getClientRects().length > 0;
  const heads = [...document.querySelectorAll('#matrix thead th')].filter(shown)
    .map((th) => th.textContent);
  const rows = {};
  for (const tr of document.querySelectorAll('#matrix tbody tr')) {
    if (!shown(tr)) continue;
    rows[tr.dataset.project] = [...tr.cells].slice(1).filter(shown).map((td) =>
      [...td.children].filter(shown).map((p) => p.querySelector('b').textContent));
  }
  return {heads, rows};
}"""


def unavailable(reason: str) -> None:
    """Skip, or fail under CI: CI must not silently skip the browser tests."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the browser tests (.ci/run installs Chromium)")
    pytest.skip(reason)


def chromium_path() -> str:
    for candidate in (os.environ.get("CRAWLER_CHROMIUM"), "/usr/bin/chromium"):
        if candidate and Path(candidate).is_file():
            return candidate
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        unavailable("no Chromium found: apt-get install -y chromium (or set CRAWLER_CHROMIUM)")
    assert found is not None
    return found


@contextmanager
def chromium() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("Playwright is not installed: pip install -e '.[dev]'")
    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def local(url: str) -> bool:
    return url.startswith(("file://", "data:"))


@dataclass
class Watched:
    """A page and everything it did that a test must not see."""

    page: Any
    javascript: bool = True
    problems: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    failed_requests: list[tuple[str, str]] = field(default_factory=list)

    def violations(self) -> list[str]:
        # without JavaScript the watch script never ran, and no script could violate the CSP
        return list(self.page.evaluate("window.__violations")) if self.javascript else []

    def check(self) -> None:
        assert (self.problems, self.dialogs, self.violations()) == ([], [], [])


def open_watched(
    context: Any, url: str, *, javascript: bool = True, now: datetime | None = None
) -> Watched:
    """``url`` in a new page of ``context``, every event of interest recorded."""
    context.set_default_timeout(5000)
    page = context.new_page()
    watched = Watched(page, javascript)
    if javascript:
        page.add_init_script(WATCH)
    if now is not None:
        page.clock.set_fixed_time(now)

    def on_console(message: Any) -> None:
        if message.type == "error":
            watched.problems.append(f"console error: {message.text}")

    def on_dialog(dialog: Any) -> None:
        watched.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def on_request(request: Any) -> None:
        if not local(request.url):
            watched.problems.append(f"network request: {request.url}")

    def on_route(route: Any) -> None:  # a guard: nothing leaves the machine
        watched.problems.append(f"request reached the network layer: {route.request.url}")
        route.abort()

    context.route(lambda target: not local(target), on_route)
    page.on("console", on_console)
    page.on("pageerror", lambda error: watched.problems.append(f"page error: {error}"))
    page.on("dialog", on_dialog)
    page.on("request", on_request)
    page.on("requestfailed", lambda r: watched.failed_requests.append((r.url, r.failure or "")))
    page.goto(url, wait_until="load")
    return watched
