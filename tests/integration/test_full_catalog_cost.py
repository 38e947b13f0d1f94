"""What the shipped catalog costs a night, checked by behaviour against the fakes (the
figures with timings are bench/catalog_nights.py's): every item of sources.yaml, its GitHub
repositories on ``FakeGitHub`` with the evidence files of ``../shared`` as their watched pages,
its packages on the PyPI fake, its Gitee project on the Gitee fake, torch-npu on a real git
server (``crawler_fakes.catalog``), a real database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from crawler.config import Config, standing
from tests.support.catalog import TOKEN, WRITTEN_SGLANG, Catalog, needs_catalog

pytestmark = needs_catalog


@pytest.fixture
def catalog(db_url: str, tmp_path: Path) -> Iterator[Any]:
    made: list[Catalog] = []

    def make(token: str | None) -> Catalog:
        # SGLang's README in its described shape: every page reads (its recorded 2024
        # revision is an error each night, tests/integration/test_catalog_evidence.py)
        made.append(Catalog(db_url, tmp_path / "reports", token, replaced=WRITTEN_SGLANG))
        return made[-1]

    yield make
    for one in made:
        one.close()


def github_pages(config: Config) -> list[str]:
    """The contents API paths of the pages the catalog keeps in GitHub repositories."""
    found = []
    for spec in config.projects:
        for page in spec.pages:
            where = page.location or spec.forge
            if page.path and where is not None and where.source == "github":
                found.append(f"/repos/{where.path}/contents/{quote(page.path)}")
    return found


def test_an_unchanged_night_of_the_whole_catalog_with_a_token(
    catalog: Any, graphql_sizes: list[int]
) -> None:
    """56 GitHub repositories in two GraphQL queries (batches of 50) and the free budget
    check, the 62 pages kept in GitHub repositories asked conditionally (304), each PyPI
    package once, the Gitee project's few, torch-npu's refs on its git server (the ref
    advertisement and one ls-refs): nothing for the 10 riding and 16 not-trackable items. Two
    GraphQL points."""
    night = catalog(TOKEN)
    first = night.audit()
    assert first.report.as_json()["summary"]["checked"] == 58
    graphql_sizes.clear()
    before = night.github.points_used
    again = night.audit()
    requests = night.github.requests
    pages = github_pages(night.config)
    assert len(pages) == 62
    assert sorted(r.path.split("?")[0] for r in requests) == sorted(
        ["/rate_limit", "/graphql", "/graphql", *pages]
    )
    assert sorted(graphql_sizes) == [6, 50]
    assert {r.status for r in requests if "/contents/" in r.path} == {304}
    spent = night.github.points_used
    graphql = spent.graphql - before.graphql
    assert (graphql, spent.core_authenticated - before.core_authenticated) == (2, 0)
    packages = [c.path for p in night.config.projects for c in p.channels]
    assert len(night.pypi.requests) == len(packages) == 14
    assert [method for method, _ in night.git.log] == ["GET", "POST"]
    summary = again.report.as_json()["summary"]
    counts = ("projects", "checked", "riding", "untracked")
    assert [summary[k] for k in counts] == [84, 58, 10, 16]
    assert (summary["changes"], summary["errors"], again.exit_code) == (0, 0, 0)
    flags = [(f["project"], f["kind"]) for f in again.report.as_json()["flags"]]
    assert flags == [(name, "no_tagged_release") for name in (
        "Glow", "TritonBench", "MLC-LLM", "torch-npu (Ascend pytorch)", "torch_mlu"
    )]  # fmt: skip  (a git server has no releases: torch-npu is followed by tag)


def test_without_a_token_the_first_round_rotates_through_the_catalog(catalog: Any) -> None:
    """On GitHub's 60 anonymous requests a night, the first audit reaches part of the catalog
    and defers the rest, said so (never an error); the rotation (least recently checked first)
    reaches every followed item within a few nights, and no night defers a riding or not
    trackable item or asks anything for it."""
    night = catalog(None)
    followed = {p.name for p in night.config.projects if standing(p) == "tracked"}
    seen: set[str] = set()
    nights = 0
    while not followed <= seen:
        nights += 1
        assert nights <= 6, f"not every item after {nights - 1} nights: {followed - seen}"
        report = night.audit().report.as_json()
        rows = {p["name"]: p for p in report["projects"]}
        seen |= {name for name, row in rows.items() if row["status"] == "ok"}
        assert report["errors"] == [] and report["summary"]["deferred"] > 0
        assert {rows[n]["status"] for n in rows if n not in followed} == {"riding", "untracked"}
        assert sum(r.path != "/rate_limit" for r in night.github.requests) <= 60
    assert nights >= 4  # 56 GitHub repositories at about three requests each, and their pages
