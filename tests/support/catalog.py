"""The shipped catalog (every item of sources.yaml) on the three fakes of
``crawler_fakes.catalog`` and a real database: the audits of the full-catalog tests."""

from __future__ import annotations

from pathlib import Path

from crawler.audit import AuditOutcome, run_audit
from crawler.config import Config, load_config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler_fakes.catalog import catalog_world
from crawler_fakes.gitee import FakeGitee
from crawler_fakes.github import FakeGitHub
from crawler_fakes.pypi import FakePyPI
from tests.support import ROOT

TOKEN = "ghp_full_catalog_token_5e7a9c1b3d7f"
NO_RELEASE = {"TritonBench", "MLC-LLM"}  # the page's two items without a tagged release


def without_link_checks(config: Config) -> Config:
    """The shipped file checks every link it carries each night (settings.links_per_night):
    those requests go to the hosts the catalog cites (github.com pages, PyPI, vendor sites),
    which no fake serves and no test may reach; the link checks have tests of their own."""
    settings = config.settings.model_copy(update={"links_per_night": 0})
    return config.model_copy(update={"settings": settings})


class Catalog:
    """The shipped catalog on the three fakes, one database; ``audit()`` runs one night."""

    def __init__(self, db_url: str, reports: Path, token: str | None) -> None:
        self.config: Config = without_link_checks(load_config(ROOT / "sources.yaml"))
        world = catalog_world(self.config.projects, without_releases=NO_RELEASE)
        self.github = FakeGitHub(world.github, token=TOKEN, unauth_limit=60).start()
        self.pypi = FakePyPI(world.pypi).start()
        self.gitee = FakeGitee(world.gitee).start()
        self.env = {**self.github.env(token), **self.pypi.env(), **self.gitee.env()}
        self.store = Store(db_url)
        self.reports = reports

    def audit(self) -> AuditOutcome:
        for fake in (self.github, self.pypi, self.gitee):
            fake.reset_log()
        self.github.set_rate_limit(60, authenticated=False)  # each night, a new hour
        outcome = run_audit(self.config, self.store, self.reports, env=self.env,
                            sleep=lambda _s: None)  # fmt: skip
        validate_report(outcome.report)
        return outcome

    def close(self) -> None:
        self.store.close()
        for fake in (self.github, self.pypi, self.gitee):
            fake.stop()
