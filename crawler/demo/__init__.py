"""``crawler demo``: a fully offline run against recorded upstream states on loopback."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from crawler.audit import run_audit
from crawler.config import parse_config
from crawler.demo.scenario import (
    DEMO_PROJECTS_AFTER,
    DEMO_PROJECTS_BEFORE,
    state_after,
    state_before,
    support_page,
)
from crawler.fakes.github import FakeGitHub
from crawler.fakes.pages import FakePageServer
from crawler.store import Store

DEMO_TOKEN = "demo-token-not-a-secret"


def run_demo(output: Path) -> Path:
    """Audit state one, then state two; return the path of the second report."""
    shutil.rmtree(output, ignore_errors=True)
    output.mkdir(parents=True)
    store = Store(f"sqlite:///{output / 'demo.sqlite'}")
    reports = output / "reports"
    with FakeGitHub(state_before(), token=DEMO_TOKEN) as github, FakePageServer() as site:
        site.set_page("/docs/support.html", support_page(after=False), "text/html", charset="utf-8")
        env = {"GITHUB_API_URL": github.base_url, "GITHUB_TOKEN": DEMO_TOKEN}
        before = parse_config(DEMO_PROJECTS_BEFORE.format(site=site.base_url), "demo-before.yaml")
        run_audit(before, store, reports, env=env, sleep=_no_wait)

        github.set_state(state_after())
        site.set_page("/docs/support.html", support_page(after=True), "text/html", charset="utf-8")
        after = parse_config(DEMO_PROJECTS_AFTER.format(site=site.base_url), "demo-after.yaml")
        outcome = run_audit(after, store, reports, env=env, sleep=_no_wait)
    store.close()
    if outcome.report_dir is None:
        raise RuntimeError(outcome.report_error or "the demo report was not written")
    return outcome.report_dir / "report.md"


def _no_wait(seconds: float) -> None:
    time.sleep(min(seconds, 0.01))
