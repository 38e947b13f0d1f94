"""``crawler demo``: a fully offline run against recorded upstream states on loopback."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from crawler.analysis.license_texts import reference_text
from crawler.audit import AuditOutcome, run_audit, source_names
from crawler.config import Config, parse_config
from crawler.export.from_store import ExportOutcome, export_audit
from crawler.store import Store

DEMO_TOKEN = "demo-token-not-a-secret"


@dataclass(frozen=True)
class DemoResult:
    report: Path  # the second night's report.md
    export: ExportOutcome  # snapshot.md, catalog.json and its schema, from the second night


class DemoUnavailable(Exception):
    """The demo's own dependencies (the ``demo`` extra) are not installed."""


def check_demo_extra() -> None:
    """The fake GitHub answers GraphQL with graphql-core, which only the demo and the tests need:
    a plain install audits without it. The fakes themselves (``crawler_fakes``) ship in the same
    distribution, but an image built from ``crawler/`` alone (the Dockerfile) leaves them out."""
    try:
        import graphql  # noqa: F401

        import crawler_fakes  # noqa: F401
    except ImportError:
        raise DemoUnavailable(
            "the demo's fake GitHub needs graphql-core, which a plain install leaves out: "
            "pip install 'crawler[demo]' (from a checkout: pip install -e '.[demo]')"
        ) from None


def run_demo(output: Path) -> DemoResult:
    """Audit night one, then night two, over GitHub-, Gitee-, GitLab- and PyPI-shaped servers and
    a vendor site on loopback; then export the second night for the catalog."""
    check_demo_extra()
    # The fakes are not part of the product: imported here, once the demo extra is known present.
    from crawler.demo.scenario import (
        DEMO_PROJECTS_AFTER,
        DEMO_PROJECTS_BEFORE,
        state_after,
        state_before,
        support_page,
        vendor_links,
    )
    from crawler_fakes.gitee import FakeGitee, demo_states
    from crawler_fakes.github import FakeGitHub
    from crawler_fakes.gitlab import DEMO_NOW, FakeGitLab
    from crawler_fakes.gitlab import demo_state as gitlab_state
    from crawler_fakes.pages import FakePageServer
    from crawler_fakes.pypi import FakePyPI
    from crawler_fakes.pypi import demo_state as pypi_state

    shutil.rmtree(output, ignore_errors=True)
    output.mkdir(parents=True)
    store = Store(f"sqlite:///{output / 'demo.sqlite'}")
    reports = output / "reports"
    gitee_before, gitee_after = demo_states(reference_text("Apache-2.0"))
    with (
        FakeGitHub(state_before(), token=DEMO_TOKEN) as github,
        FakeGitee(gitee_before, token=DEMO_TOKEN, web_url="https://gitee.example") as gitee,
        FakeGitLab(
            gitlab_state(after=False), now=DEMO_NOW, web_url="https://gitlab.example"
        ) as gitlab,
        FakePyPI(pypi_state(after=False), web_url="https://pypi.example") as pypi,
        FakePageServer() as site,
    ):
        site.set_page("/docs/support.html", support_page(after=False), "text/html", charset="utf-8")
        vendor_links(site, after=False)
        env = {**github.env(DEMO_TOKEN), **gitee.env(DEMO_TOKEN), **gitlab.env(), **pypi.env()}
        before = parse_config(DEMO_PROJECTS_BEFORE.format(site=site.base_url), "demo-before.yaml")
        _record_delivery(run_audit(before, store, reports, env=env, sleep=_no_wait), before)

        github.set_state(state_after())
        gitee.set_state(gitee_after)
        gitlab.set_state(gitlab_state(after=True))
        pypi.set_state(pypi_state(after=True))
        site.set_page("/docs/support.html", support_page(after=True), "text/html", charset="utf-8")
        vendor_links(site, after=True)
        after = parse_config(DEMO_PROJECTS_AFTER.format(site=site.base_url), "demo-after.yaml")
        outcome = run_audit(after, store, reports, env=env, sleep=_no_wait)
        _record_delivery(outcome, after)
    try:
        labels = {name: names.label for name, names in source_names().items()}
        exported = export_audit(
            store, after, outcome.audit_id, output / "export", site=output / "site",
            labels=labels,
        )  # fmt: skip
    finally:
        store.close()
    if outcome.report_dir is None:
        raise RuntimeError(outcome.report_error or "the demo report was not written")
    return DemoResult(outcome.report_dir / "report.md", exported)


def _record_delivery(outcome: AuditOutcome, config: Config) -> None:
    """delivery.json beside the demo's reports, as after any audit: the demo configures no
    channel, and reads none from the environment (the user's CRAWLER_NOTIFY is not for it)."""
    from crawler.notify import deliver

    if outcome.report_dir is not None:
        deliver(outcome.report, outcome.report_dir, config.notify, api_url="", token=None, env={})


def _no_wait(seconds: float) -> None:
    time.sleep(min(seconds, 0.01))
