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
__all__ = ["NO_RELEASE", "SGLANG_README", "TOKEN", "WRITTEN_SGLANG", "Catalog", "needs_catalog",
           "shipped", "without_link_checks"]  # fmt: skip

# SGLang's README as the catalog describes its current shape (no revision with it is in
# ../shared: the recorded one, of 2024, has neither section), written here in our own rows and
# words with the wordings the shipped maps name. The full-catalog tests that need every page
# read serve it in place of the 2024 revision.
SGLANG_README = ("sgl-project/sglang", "README.md")
SGLANG_NOW = """# SGLang (a page written for this test)

Some words of our own before the section the catalog describes.

## Supported Hardware

| Hardware | What we say about it here |
|---|---|
| NVIDIA GPUs | data-centre and workstation parts |
| AMD Instinct MI300 / MI325 / MI350 | the Instinct line |
| Google TPU v6e / v7 | through a JAX backend |
| Intel Arc / Arc Pro B-series GPUs and Xeon CPUs | discrete GPUs and server CPUs |
| Apple Silicon | laptops and desktops |
| Huawei Ascend A2 / A3 / 950PR / DT | NPUs |
| Moore Threads MTT S5000 | one board |

Integrations in progress: AWS Trainium, Alibaba T-Head PPU, Cambricon MLU, MetaX, Hygon HCU / DCU,
Iluvatar CoreX and Qualcomm QAIC.

## Another section
"""
WRITTEN_SGLANG = {SGLANG_README: SGLANG_NOW}


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
