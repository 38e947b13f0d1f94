"""The shipped catalog (every item of sources.yaml) on the fakes of ``crawler_fakes.catalog``
and a real database: the audits of the full-catalog tests.

Every page the shipped file watches on GitHub is served with the real evidence file
``../shared`` holds for it (``tests.support.evidence``: the catalog folder, the files already
elsewhere, torch-gcu's stand-in), so the tests that use it skip where ``../shared`` is absent
(``needs_catalog``); the vLLM Iluvatar plugin's Gitee README, of which ../shared has no copy,
is the world's own. torch-npu, on a plain git server, is a real repository made with the git
binary (the tests skip without git)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from crawler.audit import AuditOutcome, run_audit
from crawler.config import Config, load_config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler_fakes.catalog import CatalogFakes
from tests.support import ROOT
from tests.support.evidence import needs_catalog, served_pages
from tests.support.git_repos import require_git

TOKEN = "ghp_full_catalog_token_5e7a9c1b3d7f"
NO_RELEASE = {"TritonBench", "MLC-LLM"}  # the page's two items without a tagged release
__all__ = ["NO_RELEASE", "TOKEN", "Catalog", "needs_catalog", "shipped", "without_link_checks"]


def without_link_checks(config: Config) -> Config:
    """The shipped file checks every link it carries each night (settings.links_per_night):
    those requests go to the hosts the catalog cites (github.com pages, PyPI, vendor sites),
    which no fake serves and no test may reach; the link checks have tests of their own."""
    settings = config.settings.model_copy(update={"links_per_night": 0})
    return config.model_copy(update={"settings": settings})


def shipped() -> Config:
    """sources.yaml as shipped, its nightly link checks left out."""
    return without_link_checks(load_config(ROOT / "sources.yaml"))


class Catalog:
    """The shipped catalog on the fakes with its evidence files, one database; ``audit()``
    runs one night. ``replaced`` serves other texts for some pages ((repository, path) →
    text: a page written in a test)."""

    def __init__(
        self,
        db_url: str,
        reports: Path,
        token: str | None,
        *,
        replaced: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        require_git()
        config = shipped()
        pages = served_pages(config.projects)
        assert pages.unserved == [], f"pages ../shared has no file for: {pages.unserved}"
        self.fakes = CatalogFakes(
            config, reports.parent / "fakes", token, accepted_token=TOKEN,
            files={**pages.files, **(replaced or {})}, ref_files=pages.ref_files,
            without_releases=NO_RELEASE,
        )  # fmt: skip
        self.config = self.fakes.config
        self.github, self.pypi, self.gitee, self.git = (
            self.fakes.github, self.fakes.pypi, self.fakes.gitee, self.fakes.git,
        )  # fmt: skip
        self.env = self.fakes.env
        self.store = Store(db_url)
        self.reports = reports

    def audit(self) -> AuditOutcome:
        self.fakes.new_night()
        outcome = run_audit(self.config, self.store, self.reports, env=self.env,
                            sleep=lambda _s: None)  # fmt: skip
        validate_report(outcome.report)
        return outcome

    def close(self) -> None:
        self.store.close()
        self.fakes.close()
