"""The shipped sources.yaml against the catalog it keeps true, read at run time from
../shared (skipped when absent): every item of CATALOG.md by its name, at its canonical
upstream, with the PyPI package and tag_pattern CATALOG.md gives; riding items on the row
CATALOG.md names; the not-trackable ones with a reason; the 17 rows of SEED.md's snapshot
table marked, in the page's order."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from crawler.config import Config, load_config, standing
from tests.support import ROOT, SHARED

CATALOG_MD = SHARED / "CATALOG.md"
SEED_MD = SHARED / "SEED.md"
pytestmark = pytest.mark.skipif(
    not (CATALOG_MD.is_file() and SEED_MD.is_file()), reason="../shared/CATALOG.md not present"
)
# the page's llama.cpp row is a release (v0.9.0): CATALOG.md's unverified '^b\d+$' (its build
# tags) would hide it, so the shipped file keeps llama.cpp on its releases
NOT_TAKEN = {"llama.cpp": "tag_pattern"}


@dataclass(frozen=True)
class Row:
    number: int
    item: str
    upstream: str
    how: str


def _catalog_rows() -> list[Row]:
    text = CATALOG_MD.read_text(encoding="utf-8")
    table = text.split("## 1. Items", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) >= 5 and cells[0].isdigit():
            rows.append(Row(int(cells[0]), cells[1], cells[3], cells[4]))
    return rows


def _snapshot_rows() -> list[str]:
    lines = SEED_MD.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| Project | Latest"))
    names = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        names.append(line.strip("|").split("|")[0].strip())
    return names


@pytest.fixture(scope="module")
def shipped() -> Config:
    return load_config(ROOT / "sources.yaml")


def test_every_item_of_the_catalog_is_listed_once_by_its_name(shipped: Config) -> None:
    rows = _catalog_rows()
    assert len(rows) == 84  # the table read whole
    assert sorted(p.name for p in shipped.projects) == sorted(row.item for row in rows)
    assert all(p.layer is not None for p in shipped.projects)


def test_the_snapshot_rows_are_the_pages_seventeen_in_its_order_and_lead_the_file(
    shipped: Config,
) -> None:
    marked = [p.name for p in shipped.projects if p.snapshot]
    assert marked == _snapshot_rows() and len(marked) == 17
    assert [p.name for p in shipped.projects[:17]] == marked


def test_riding_and_not_trackable_items_are_those_catalog_md_names(shipped: Config) -> None:
    rows = _catalog_rows()
    by_number = {row.number: row.item for row in rows}
    riding = {}
    for row in rows:
        found = re.match(r"rides on .*?\(#(\d+)", row.how)
        if found:
            riding[row.item] = by_number[int(found.group(1))]
    assert {p.name: p.part_of for p in shipped.projects if p.part_of} == riding
    assert len(riding) == 10
    # not trackable, and (until a page watch or a git source reads them) the page-only items
    closed = {row.item for row in rows if row.how.startswith(("not trackable", "page only"))}
    assert {p.name for p in shipped.projects if standing(p) == "not trackable"} == closed
    assert len(closed) == 16


def test_tracked_items_live_where_catalog_md_says_with_its_package_and_pattern(
    shipped: Config,
) -> None:
    rows = {row.item: row for row in _catalog_rows()}
    checked = 0
    for spec in shipped.projects:
        if standing(spec) != "tracked":
            continue
        row = rows[spec.name]
        forge = re.search(r"(github|gitee|gitcode)\.com/([\w.-]+/[\w.-]+)", row.upstream)
        assert forge is not None, spec.name
        # the first forge CATALOG.md names is the canonical one: a GitCode repository is read
        # by the git source at its clone URL (torch-npu)
        source, path = {
            "github": ("github", forge.group(2)),
            "gitee": ("gitee", forge.group(2)),
            "gitcode": ("git", f"https://gitcode.com/{forge.group(2)}.git"),
        }[forge.group(1)]
        assert (spec.forge and (spec.forge.source, spec.forge.path)) == (source, path), spec.name
        packages = re.findall(r"PyPI ([\w.-]+)", f"{row.upstream} {row.how}")
        assert [c.path for c in spec.channels if c.source == "pypi"] == packages, spec.name
        pattern = re.search(r"tag_pattern: '([^']+)'", row.how)
        if pattern and NOT_TAKEN.get(spec.name) != "tag_pattern":
            assert spec.tag_pattern == pattern.group(1), spec.name
        if "prereleases: exclude" in row.how:
            assert spec.prereleases == "exclude", spec.name
        checked += 1
    assert checked == 58
