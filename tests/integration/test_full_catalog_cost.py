"""What the shipped catalog costs a night, checked by behaviour against the fakes (the
figures with timings are bench/catalog_nights.py's): every item of sources.yaml, its GitHub
repositories on ``FakeGitHub``, its packages on the PyPI fake, its Gitee project on the Gitee
fake (``crawler_fakes.catalog``), a real database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.config import standing
from tests.support.catalog import TOKEN, Catalog


@pytest.fixture
def catalog(db_url: str, tmp_path: Path) -> Iterator[Any]:
    made: list[Catalog] = []

    def make(token: str | None) -> Catalog:
        made.append(Catalog(db_url, tmp_path / "reports", token))
        return made[-1]

    yield make
    for one in made:
        one.close()


WATCHED = ("tile-ai/tilelang", "vllm-project/vllm-ascend", "EnflameTechnology/torch-gcu")
PAGES = [f"/repos/{repo}/contents/README.md" for repo in WATCHED]


def test_an_unchanged_night_of_the_whole_catalog_with_a_token(
    catalog: Any, graphql_sizes: list[int]
) -> None:
    """57 GitHub repositories in two GraphQL queries (batches of 50) and the free budget
    check, the three README pages asked conditionally (304), each PyPI package once, the Gitee
    project's few: nothing for the 10 riding and 16 not-trackable items. Two GraphQL points."""
    night = catalog(TOKEN)
    first = night.audit()
    assert first.report.as_json()["summary"]["checked"] == 58
    graphql_sizes.clear()
    before = night.github.points_used
    again = night.audit()
    requests = night.github.requests
    assert sorted(r.path.split("?")[0] for r in requests) == sorted(
        ["/rate_limit", "/graphql", "/graphql", *PAGES]
    )
    assert sorted(graphql_sizes) == [7, 50]
    assert [r.status for r in requests if "/contents/" in r.path] == [304, 304, 304]
    spent = night.github.points_used
    graphql = spent.graphql - before.graphql
    assert (graphql, spent.core_authenticated - before.core_authenticated) == (2, 0)
    packages = [c.path for p in night.config.projects for c in p.channels]
    assert len(night.pypi.requests) == len(packages) == 14
    summary = again.report.as_json()["summary"]
    counts = ("projects", "checked", "riding", "untracked")
    assert [summary[k] for k in counts] == [84, 58, 10, 16]
    assert (summary["changes"], summary["errors"], again.exit_code) == (0, 0, 0)
    flags = [(f["project"], f["kind"]) for f in again.report.as_json()["flags"]]
    assert flags == [(name, "no_tagged_release")
                     for name in ("Glow", "TritonBench", "MLC-LLM", "torch_mlu")]  # fmt: skip


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
    assert nights >= 4  # 57 GitHub repositories at about three requests each
