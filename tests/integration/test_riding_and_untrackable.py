"""Items no source reads on their own, in an audit: a riding item (``part_of``) and a not
trackable one (``not_trackable: reason``) cost no request, are never an error or stale, and
the report shows the riding item with its host's release and license facts, labelled "part of
HOST", and the other as "not trackable: reason". A GitHub-shaped fake on loopback, with and
without a token, and a real database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import rebuild_report, stale_flags
from crawler.config import parse_config
from crawler.export.from_store import export_audit
from crawler.model import ProjectOutcome, ProjectStatus
from crawler.report.markdown import render_markdown
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from tests.support.audits import Audits

TOKEN = "ghp_riding_items_token_0123456789abcdef"
TRACKED = """
github: {retry_base_delay: 0, max_retries: 0}
projects:
  - name: PyTorch
    repo: pytorch/pytorch
    layer: framework
"""
CATALOG = TRACKED + """
  - name: TorchInductor
    part_of: PyTorch
    layer: compiler
  - name: Neuware
    not_trackable: closed SDK; no version list of its own
    homepage: https://developer.cambricon.com
  - name: DTK
    not_trackable: no public repository
"""


def _state() -> GitHubState:
    stamp = "2026-10-15T10:00:00Z"
    return GitHubState([
        FakeRepo(
            owner="pytorch", name="pytorch", id=65600975, license_key="bsd-3-clause",
            spdx_id="BSD-3-Clause", license_name='BSD 3-Clause "New" or "Revised" License',
            license_text=reference_text("BSD-3-Clause"), head_sha="e" * 40,
            head_date="2026-10-20T00:00:00Z",
            releases=[FakeRelease("v2.13.0", "PyTorch 2.13.0", stamp, stamp)],
        )
    ])  # fmt: skip


@pytest.fixture(params=["rest", "graphql"])
def harness(request: pytest.FixtureRequest, db_url: str, tmp_path: Path) -> Iterator[Audits]:
    token = TOKEN if request.param == "graphql" else None
    with FakeGitHub(_state(), token=TOKEN, unauth_limit=5000) as server:
        audits: Audits[FakeGitHub] = Audits(server, db_url, tmp_path, server.env(token))
        yield audits
        audits.close()


def _requests(harness: Audits[FakeGitHub], config: str) -> list[str]:
    harness.server.reset_log()
    harness.audit(config)
    return sorted(r.path for r in harness.server.requests)  # trees and queries run side by side


def test_riding_and_untrackable_items_cost_no_request(
    harness: Audits[FakeGitHub], tmp_path: Path
) -> None:
    """The catalog with them sends exactly what the catalog without them sends, on a first
    audit and on the unchanged night after it (the one without them: a database of its own)."""
    alone_db = f"sqlite:///{tmp_path}/alone.sqlite"
    with FakeGitHub(_state(), token=TOKEN, unauth_limit=5000) as alone:
        env = alone.env(harness.env.get("GITHUB_TOKEN"))
        other: Audits[FakeGitHub] = Audits(alone, alone_db, tmp_path / "alone", env)
        try:
            for _night in range(2):
                assert _requests(harness, CATALOG) == _requests(other, TRACKED)
        finally:
            other.close()


def test_the_report_shows_the_hosts_facts_part_of_and_the_reason(
    harness: Audits[FakeGitHub],
) -> None:
    outcome = harness.audit(CATALOG)
    report = outcome.report.as_json()
    assert (outcome.status, outcome.exit_code) == ("complete", 0)
    rows = {p["name"]: p for p in report["projects"]}
    host, rider = rows["PyTorch"], rows["TorchInductor"]
    assert (rider["status"], rider["note"], rider["part_of"]) == (
        "riding", "part of PyTorch", "PyTorch"
    )
    facts = ("repo", "version", "version_source", "published_at", "license", "url")
    assert [rider[k] for k in facts] == [host[k] for k in facts] == [
        "pytorch/pytorch", "v2.13.0", "release", "2026-10-15T10:00:00Z", "BSD-3-Clause",
        f"{harness.server.web_url}/pytorch/pytorch/releases/tag/v2.13.0",
    ]  # fmt: skip
    assert (rider["license_analysis"], rider["packages"]) == (None, [])  # the host's row has them
    assert [(rows[n]["status"], rows[n]["note"]) for n in ("Neuware", "DTK")] == [
        ("untracked", "closed SDK; no version list of its own"),
        ("untracked", "no public repository"),
    ]
    summary = report["summary"]
    assert (summary["projects"], summary["checked"], summary["untracked"], summary["riding"]) == (
        4, 1, 2, 1
    )
    assert (summary["errors"], summary["stale"], report["flags"]) == (0, 0, [])
    assert [(c["project"], c["kind"]) for c in report["changes"]] == [("PyTorch", "project_added")]
    markdown = render_markdown(outcome.report)
    assert markdown.splitlines()[2].startswith(
        "**complete**: 4 projects, 1 checked, 0 deferred, 2 not trackable, 1 part of another "
        "item; "
    )
    unchecked = markdown.split("## Not checked, or only in part\n\n", 1)[1].split("\n\n")[0]
    assert unchecked.splitlines() == [
        "- **Neuware** not trackable: closed SDK; no version list of its own",
        "- **DTK** not trackable: no public repository",
    ]
    table = markdown.split("## Release and license snapshot\n\n", 1)[1].splitlines()
    release = f"[v2.13.0](<{harness.server.web_url}/pytorch/pytorch/releases/tag/v2.13.0>)"
    assert table[2:] == [
        f"| PyTorch | {release} | GitHub release | 2026-10-15 | BSD-3-Clause |",
        f"| TorchInductor | {release} | part of PyTorch: GitHub release | 2026-10-15 | "
        "BSD-3-Clause |",
        "| Neuware | — | not trackable: closed SDK; no version list of its own | — | — |",
        "| DTK | — | not trackable: no public repository | — | — |",
    ]
    # re-rendered from the database alone (no sources.yaml): the same rows
    again = rebuild_report(harness.store, None, outcome.audit_id).as_json()
    assert {p["name"]: p for p in again["projects"]} == rows
    assert again["summary"] == summary


def test_a_failed_host_is_the_hosts_error_only(harness: Audits[FakeGitHub]) -> None:
    harness.audit(CATALOG)
    harness.server.set_state(GitHubState([]))  # PyTorch answers 404 tonight
    outcome = harness.audit(CATALOG)
    report = outcome.report.as_json()
    assert [e["project"] for e in report["errors"]] == ["PyTorch"]
    rows = {p["name"]: p for p in report["projects"]}
    assert (rows["PyTorch"]["status"], rows["TorchInductor"]["status"]) == ("error", "riding")
    assert rows["TorchInductor"]["version"] == "v2.13.0"  # the host's last good state
    # the one followed item failed: the audit failed (the others are not read, so not counted)
    assert (report["summary"]["projects_with_errors"], outcome.status) == (1, "failed")
    assert report["summary"]["checked"] == 0 and "reached nothing" in render_markdown(
        outcome.report
    )


def test_riding_and_untrackable_items_are_never_stale() -> None:
    long_ago = datetime(2026, 1, 1, tzinfo=UTC)
    outcomes = {
        "TorchInductor": ProjectOutcome(ProjectStatus.RIDING, "PyTorch"),
        "Neuware": ProjectOutcome(ProjectStatus.UNTRACKED, "closed SDK"),
        "PyTorch": ProjectOutcome(ProjectStatus.ERROR, None),
    }
    flags = stale_flags(list(outcomes), outcomes, {}, long_ago, long_ago + timedelta(days=90),
                        timedelta(days=3))  # fmt: skip
    assert [f.project for f in flags] == ["PyTorch"]


@pytest.mark.parametrize("with_config", [True, False], ids=["sources.yaml", "database alone"])
def test_the_export_derives_the_riding_record_from_its_hosts_state(
    harness: Audits[FakeGitHub], tmp_path: Path, with_config: bool
) -> None:
    """With sources.yaml or from the database alone, the export's catalog.json has the riding
    item with its host's facts and the not-trackable ones with their reason; with sources.yaml,
    their layers and homepage too, and snapshot.md holds the marked rows only."""
    marked = CATALOG.replace("layer: framework\n", "layer: framework\n    snapshot: true\n")
    config = parse_config(marked)
    audit = harness.audit(config)
    outcome = export_audit(harness.store, config if with_config else None, None,
                           tmp_path / "export", labels={"github": "GitHub"})  # fmt: skip
    catalog = json.loads((tmp_path / "export" / "catalog.json").read_text())
    records = {p["name"]: p for p in catalog["projects"]}
    host, rider = records["PyTorch"], records["TorchInductor"]
    assert (rider["part_of"], rider.get("last_checked")) == ("pytorch", host.get("last_checked"))
    assert rider["tracked_ref"]["label"] == "part of PyTorch: v2.13.0"
    assert (rider["license"], rider["repository"]) == (host["license"], host["repository"])
    assert [records[n]["not_trackable"] for n in ("Neuware", "DTK")] == [
        "closed SDK; no version list of its own", "no public repository"
    ]
    assert all("stale" not in r for r in records.values())
    layers = [records[n].get("layer") for n in ("PyTorch", "TorchInductor", "Neuware")]
    homepage = records["Neuware"].get("homepage")
    snapshot = (tmp_path / "export" / "snapshot.md").read_text()
    rows = [line.split(" | ")[0][2:] for line in snapshot.splitlines() if line.startswith("| ")]
    if with_config:
        assert layers == ["framework", "compiler", None]
        assert homepage == "https://developer.cambricon.com"
        assert rows[1:] == ["PyTorch"]
    else:  # the database alone knows how each is followed, not where the page lists it
        assert (layers, homepage) == ([None, None, None], None)
        assert rows[1:] == ["DTK", "Neuware", "PyTorch", "TorchInductor"]  # the stored order
    assert outcome.export.audit_id == audit.audit_id
