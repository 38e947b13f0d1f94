"""The shipped catalog (``sources.yaml``, every item of the catalog page) against the fakes:
what its nights cost.

* with a token: the first audit, then an unchanged night: GitHub requests by kind and the
  points GitHub would charge (GraphQL and REST), PyPI, Gitee and git-server requests;
* without a token: the first round, one audit a night on GitHub's 60 anonymous requests an
  hour (the fake's budget refilled before each night), until every item a source follows has
  been checked once: how many nights, and what each checked and deferred.

The nightly link checks the shipped file turns on (``settings.links_per_night``) are left out:
they ask the pages the catalog cites (github.com pages, PyPI, vendor sites), outside the
forges' APIs, and no fake serves them (docs/links.md says what they cost).
GitHub is ``FakeGitHub`` (GraphQL executed in one process, as in the tests), the ``pypi:``
channels ``crawler_fakes.pypi``, the ``gitee:`` project ``crawler_fakes.gitee``, torch-npu's
``git:`` server ``git http-backend`` on loopback; the world is ``crawler_fakes.catalog`` (three
releases, tags and versions each) with the evidence files of ``../shared`` as the pages the
catalog watches (SGLang's README in its described shape, as the tests write it). Nothing
leaves the machine. Two variants: "github.com" leaves out the pages kept in GitHub
repositories (against api.github.com the crawler reads them from raw.githubusercontent.com,
outside the API budget); "pages via the API" reads them through the contents API, as against
GitHub Enterprise (and this fake).

    python bench/catalog_nights.py          # a few minutes on two cores; needs ../shared, git

It prints tables and asserts nothing (tests/integration/test_full_catalog_cost.py checks the
unchanged night's requests exactly).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit_budget import table  # bench/ is the script's folder: its first import path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TOKEN = "ghp_benchmark_token_0123456789abcdef"
ANONYMOUS_BUDGET = 60  # GitHub's unauthenticated requests an hour
MAX_NIGHTS = 30
VARIANTS = ("github.com", "pages via the API")


def shipped_config(pages_via_api: bool) -> Any:
    """sources.yaml as shipped, without its nightly link checks (they ask the hosts the
    catalog cites, which no fake serves: docs/links.md); without ``pages_via_api``, without the
    pages kept in GitHub repositories (github.com serves them outside the API budget; this fake
    only through it)."""
    from crawler.config import load_config

    config = load_config(ROOT / "sources.yaml")
    settings = config.settings.model_copy(update={"links_per_night": 0})
    config = config.model_copy(update={"settings": settings})

    def on_github(page: Any, spec: Any) -> bool:
        location = page.location or spec.forge
        return page.url is None and location is not None and location.source == "github"

    projects = tuple(
        spec.model_copy(update={"pages": tuple(
            p for p in spec.pages if pages_via_api or not on_github(p, spec))})
        for spec in config.projects
    )  # fmt: skip
    return config.model_copy(update={"projects": projects})


@dataclass
class Night:
    variant: str
    mode: str
    night: str
    github: Counter[str]  # requests by kind
    graphql_points: int
    rest_points: int
    pypi: int
    gitee: int
    git: int  # requests to the git server (torch-npu)
    summary: dict[str, Any]
    status: str
    seconds: float
    checked: frozenset[str]  # the items this night checked


def _kind(path: str) -> str:
    if path == "/graphql":
        return "GraphQL"
    if path == "/rate_limit":
        return "rate_limit (free)"
    for part, kind in (("/git/trees/", "tree"), ("/contents/", "contents"),
                       ("/license", "license"), ("/releases", "releases"), ("/tags", "tags"),
                       ("/commits", "commits")):  # fmt: skip
        if part in path:
            return kind
    return "repository"


class Fakes:
    """The catalog's world on the fakes (``CatalogFakes``: GitHub with the evidence files of
    ../shared as its pages, PyPI, Gitee, a git server for torch-npu), one database, audits run
    in this process."""

    def __init__(self, config: Any, tmp: Path, token: str | None) -> None:
        from crawler.store import Store
        from crawler_fakes.catalog import CatalogFakes
        from tests.support.catalog import WRITTEN_SGLANG
        from tests.support.evidence import served_pages

        pages = served_pages(config.projects)
        if pages.unserved:
            raise SystemExit(f"../shared has no file for these pages: {pages.unserved}")
        self.fakes = CatalogFakes(
            config, tmp / "fakes", token, accepted_token=TOKEN,
            files={**pages.files, **WRITTEN_SGLANG}, ref_files=pages.ref_files,
            without_releases={"TritonBench", "MLC-LLM"}, unauth_limit=ANONYMOUS_BUDGET,
        )  # fmt: skip
        self.config = self.fakes.config
        self.tmp = tmp
        self.github, self.pypi, self.gitee = self.fakes.github, self.fakes.pypi, self.fakes.gitee
        self.env = self.fakes.env
        self.store = Store(f"sqlite:///{tmp}/crawler.sqlite")

    def audit(self, variant: str, mode: str, night: str) -> Night:
        from crawler.audit import run_audit

        self.fakes.new_night()  # request logs cleared, the anonymous budget refilled
        before = self.github.points_used
        started = time.perf_counter()
        outcome = run_audit(self.config, self.store, self.tmp / "reports", env=self.env,
                            sleep=lambda _seconds: None)  # fmt: skip
        seconds = time.perf_counter() - started
        report = outcome.report.as_json()
        after = self.github.points_used
        rest = (after.core_anonymous - before.core_anonymous) + (
            after.core_authenticated - before.core_authenticated
        )
        return Night(
            variant, mode, night, Counter(_kind(r.path) for r in self.github.requests),
            after.graphql - before.graphql, rest, len(self.pypi.requests),
            len(self.gitee.requests), len(self.fakes.git.log), report["summary"], outcome.status,
            seconds,
            frozenset(p["name"] for p in report["projects"] if p["status"] == "ok"),
        )  # fmt: skip

    def close(self) -> None:
        self.store.close()
        self.fakes.close()


def token_nights(variant: str) -> list[Night]:
    with tempfile.TemporaryDirectory() as tmp:
        fakes = Fakes(shipped_config(variant != "github.com"), Path(tmp), TOKEN)
        try:
            return [fakes.audit(variant, "token", night) for night in ("first", "unchanged")]
        finally:
            fakes.close()


def anonymous_round(variant: str) -> tuple[list[Night], int | None]:
    """Nights without a token: until every followed item has been checked once (the first
    round), then as many again (the rotation that follows); the first round's length."""
    from crawler.config import standing

    nights: list[Night] = []
    config = shipped_config(variant != "github.com")
    followed = {p.name for p in config.projects if standing(p) == "tracked"}
    seen: set[str] = set()
    first_round = None
    with tempfile.TemporaryDirectory() as tmp:
        fakes = Fakes(config, Path(tmp), None)
        try:
            for number in range(1, MAX_NIGHTS + 1):
                nights.append(fakes.audit(variant, "anonymous", f"night {number}"))
                seen |= nights[-1].checked
                if first_round is None and followed <= seen:
                    first_round = number
                if first_round is not None and number >= 2 * first_round:
                    break
        finally:
            fakes.close()
    return nights, first_round


def render(rows: Sequence[Night]) -> str:
    out = []
    for night in rows:
        s = night.summary
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(night.github.items()))
        out.append([night.variant, night.mode, night.night, sum(night.github.values()), kinds,
                    night.graphql_points, night.rest_points, night.pypi, night.gitee, night.git,
                    s["checked"], s.get("riding", 0), s["untracked"], s["deferred"], s["errors"],
                    night.status, f"{night.seconds:.1f}"])  # fmt: skip
    return table(["variant", "mode", "night", "GitHub requests", "by kind", "GraphQL points",
                  "REST points", "PyPI requests", "Gitee requests", "git requests", "checked",
                  "riding", "not trackable", "deferred", "errors", "status", "wall s"],
                 out)  # fmt: skip


def main() -> int:
    config = shipped_config(True)
    from crawler.config import coverage

    found = coverage(config.projects)
    print(f"## The shipped catalog: {found.items} items, {found.tracked} tracked, "
          f"{found.riding} riding, {found.not_trackable} not trackable\n")  # fmt: skip
    token = [n for variant in VARIANTS for n in token_nights(variant)]
    print("### With a token: the first audit and an unchanged night\n")
    print(render(token))
    print("\n### Without a token: the first round, on 60 requests a night\n")
    rounds = [anonymous_round(variant) for variant in VARIANTS]
    print(render([n for nights, _first in rounds for n in nights]))
    for variant, (nights, first) in zip(VARIANTS, rounds, strict=True):
        pace = sum(len(n.checked) for n in nights) / len(nights)
        print(f"\n{variant}: every followed item checked once after "
              f"{first if first else f'more than {MAX_NIGHTS}'} nights; then {pace:.1f} items "
              f"a night, each read again every {found.tracked / pace:.1f} nights")  # fmt: skip
    print("\nGitHub requests include the free GET /rate_limit; points are what the fake "
          "charges as GitHub does (GraphQL: the queries' cost; REST: one a request, an "
          "authenticated 304 free, an anonymous one charged).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
