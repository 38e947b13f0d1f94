"""The seed's state, audited and exported as a catalog maintainer runs it (`crawler audit`,
then `crawler export --site`): the catalog page shows vLLM as "v0.33.0rc3 (release candidate)",
dated 2026-11-02, the newest release in version order, although GitHub marks the final v0.32.2
"latest". snapshot.md, catalog.json, the Explorer and the report must say the same; the other
reading (``settings.release_shown: newest_final``) shows v0.32.2 in all four.

Guards issue 32, defect 1: since the row followed the forge's "latest" mark, the snapshot
showed v0.32.2 and the release candidate appeared nowhere in the catalog's table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag
from click.testing import CliRunner

from crawler.analysis.license_texts import reference_text
from crawler.cli import cli
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState

TOKEN = "ghp_seed_state_token_0123456789"
GH = "https://github.com"
VLLM_RC = f"{GH}/vllm-project/vllm/releases/tag/v0.33.0rc3"
VLLM_FINAL = f"{GH}/vllm-project/vllm/releases/tag/v0.32.2"

# the seed's snapshot rows for three of its GitHub projects (SEED.md, checked 2026-11-05)
SOURCES = """\
github: {retry_base_delay: 0}
settings: {release_shown: %s}
projects:
  - name: Triton
    repo: triton-lang/triton
    snapshot: true
  - name: Apache TVM
    repo: apache/tvm
    snapshot: true
  - name: vLLM
    repo: vllm-project/vllm
    snapshot: true
"""


def _release(tag: str, day: str, pre: bool = False) -> FakeRelease:
    stamp = f"2026-{day}T12:00:00Z"
    return FakeRelease(tag, tag, stamp, stamp, prerelease=pre)


def _repo(owner: str, name: str, repo_id: int, releases: list[FakeRelease]) -> FakeRepo:
    return FakeRepo(
        owner=owner, name=name, id=repo_id, license_key=None, spdx_id=None,
        license_text=None, head_sha=f"{repo_id:040x}", head_date="2026-11-04T00:00:00Z",
        releases=releases,
    )  # fmt: skip


def seed_state() -> GitHubState:
    """vLLM's finals up to v0.32.2 (GitHub's "latest": its newest full release) and the
    release candidates of v0.33.0 above them, the newest published 2026-11-02."""
    mit, apache = reference_text("MIT"), reference_text("Apache-2.0")
    triton = _repo("triton-lang", "triton", 1, [_release("v3.8.0", "09-15"),
                                                _release("v3.9.0", "10-27")])  # fmt: skip
    triton.license_key, triton.spdx_id, triton.license_text = "mit", "MIT", mit
    tvm = _repo("apache", "tvm", 2, [_release("v0.27.0", "09-20"),
                                     _release("v0.27.0.post1", "09-29")])  # fmt: skip
    vllm = _repo("vllm-project", "vllm", 3, [
        _release("v0.32.0", "09-20"), _release("v0.32.1", "10-05"),
        _release("v0.33.0rc1", "10-15", pre=True), _release("v0.33.0rc2", "10-24", pre=True),
        _release("v0.32.2", "10-28"), _release("v0.33.0rc3", "11-02", pre=True),
    ])  # fmt: skip
    for repo in (tvm, vllm):
        repo.license_key, repo.spdx_id, repo.license_text = "apache-2.0", "Apache-2.0", apache
    return GitHubState(repos=[triton, tvm, vllm])


@dataclass(frozen=True)
class Exported:
    snapshot: str
    catalog: dict[str, Any]
    site: BeautifulSoup
    report: str
    report_json: dict[str, Any]


@pytest.fixture(params=["rest", "graphql"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _exported(db_url: str, tmp: Path, mode: str, shown: str) -> Exported:
    config = tmp / "sources.yaml"
    config.write_text(SOURCES % shown, encoding="utf-8")
    runner = CliRunner()
    with FakeGitHub(seed_state(), token=TOKEN, unauth_limit=5000) as server:
        env = {"CRAWLER_DB_URL": db_url, "GITHUB_TOKEN": None, "GH_TOKEN": None}
        env.update(server.env(TOKEN if mode == "graphql" else None))
        audit = runner.invoke(
            cli, ["audit", "--config", str(config), "--reports", str(tmp / "reports")], env=env
        )
        assert audit.exit_code == 0, audit.output
    out, site = tmp / "export", tmp / "site"
    args = ["export", "--config", str(config), "--out", str(out), "--site", str(site)]
    exported = runner.invoke(cli, args, env={"CRAWLER_DB_URL": db_url})
    assert exported.exit_code == 0, exported.output
    latest = tmp / "reports" / "latest"
    return Exported(
        snapshot=(out / "snapshot.md").read_text(encoding="utf-8"),
        catalog=json.loads((out / "catalog.json").read_text(encoding="utf-8")),
        site=BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "lxml"),
        report=(latest / "report.md").read_text(encoding="utf-8"),
        report_json=json.loads((latest / "report.json").read_text(encoding="utf-8")),
    )


@pytest.fixture
def seed(db_url: str, tmp_path: Path, mode: str) -> Iterator[Exported]:
    yield _exported(db_url, tmp_path, mode, "highest_version")


@pytest.fixture
def newest_final(db_url: str, tmp_path: Path, mode: str) -> Iterator[Exported]:
    yield _exported(db_url, tmp_path, mode, "newest_final")


def _record(exported: Exported, name: str) -> dict[str, Any]:
    return next(p for p in exported.catalog["projects"] if p["name"] == name)


def _latest(exported: Exported, ident: str) -> str:
    """The "Latest" entry of a project's card in the Explorer."""
    card = exported.site.find("article", id=f"p-{ident}")
    assert isinstance(card, Tag)
    term = next(dt for dt in card.find_all("dt") if dt.get_text() == "Latest")
    return str(term.find_next_sibling("dd").get_text())


def test_the_snapshot_shows_vllms_release_candidate_as_the_catalog_page_does(
    seed: Exported,
) -> None:
    table = [line for line in seed.snapshot.splitlines() if line.startswith("| ")][1:]
    assert table == [
        f"| Triton | [v3.9.0](<{GH}/triton-lang/triton/releases/tag/v3.9.0>) | 2026-10-27 | MIT |",
        f"| Apache TVM | [v0.27.0.post1](<{GH}/apache/tvm/releases/tag/v0.27.0.post1>) "
        "| 2026-09-29 | Apache-2.0 |",
        f"| vLLM | [v0.33.0rc3](<{VLLM_RC}>) (release candidate) | 2026-11-02 | Apache-2.0 |",
    ]


def test_the_catalog_json_records_the_release_candidate(seed: Exported) -> None:
    assert _record(seed, "vLLM")["tracked_ref"] == {
        "kind": "release",
        "name": "v0.33.0rc3",
        "date": "2026-11-02",
        "prerelease": True,
        "url": VLLM_RC,
        "label": "v0.33.0rc3 (release candidate)",
    }
    assert _record(seed, "Apache TVM")["tracked_ref"]["label"] == "v0.27.0.post1"


def test_the_explorer_card_shows_the_release_candidate(seed: Exported) -> None:
    assert _latest(seed, "vllm") == (
        "release candidate v0.33.0rc3 (release candidate) · 2026-11-02"
    )
    assert _latest(seed, "apache-tvm") == "release v0.27.0.post1 · 2026-09-29"


def test_the_report_row_says_release_candidate_as_the_export_does(seed: Exported) -> None:
    row = next(p for p in seed.report_json["projects"] if p["name"] == "vLLM")
    assert (row["version"], row["prerelease"], row["published_at"], row["newest_prerelease"]) == (
        "v0.33.0rc3",
        True,
        "2026-11-02T12:00:00Z",
        None,
    )
    assert (
        f"| vLLM | [v0.33.0rc3](<{VLLM_RC}>) | GitHub release (release candidate) | 2026-11-02 "
        "| Apache-2.0 |"
    ) in seed.report
    assert "is newer" not in seed.report


def test_newest_final_shows_githubs_latest_in_every_output(newest_final: Exported) -> None:
    """The other reading, as a setting: the newest final release (GitHub's "latest"), the
    release candidate above it its own fact in the report."""
    assert (
        f"| vLLM | [v0.32.2](<{VLLM_FINAL}>) | 2026-10-28 | Apache-2.0 |"
        in newest_final.snapshot.splitlines()
    )
    ref = _record(newest_final, "vLLM")["tracked_ref"]
    assert (ref["label"], ref["date"], ref["prerelease"]) == ("v0.32.2", "2026-10-28", False)
    assert _latest(newest_final, "vllm") == "release v0.32.2 · 2026-10-28"
    assert (
        f"| vLLM | [v0.32.2](<{VLLM_FINAL}>) | GitHub release; pre-release v0.33.0rc3 is newer "
        "| 2026-10-28 | Apache-2.0 |"
    ) in newest_final.report
