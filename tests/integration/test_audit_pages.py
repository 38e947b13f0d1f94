"""Vendor pages inside the nightly audit: cell changes reported, layout breaks are errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.config import parse_config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from crawler_fakes.pages import FakePageServer

CONFIG = """
settings: {{allow_private_addresses: true}}
projects:
  - name: Plugin
    repo: org/plugin
    pages:
      - name: readme
        repo: org/plugin
        path: README.md
        pins:
          engine: 'engine (>=[0-9.]+,<[0-9.]+)'
  - name: Offsite
    homepage: https://gitee.example/x/offsite
    pages:
      - name: support
        url: {site}/support.html
        tables:
          - name: hardware
            selector: table.hw
            key: [Chip]
"""

README = "# Plugin\n\nRequires engine >=0.27.1,<0.28.0 and the SDK.\n"


def _page(status: str, extra_row: bool = False) -> bytes:
    rows = f"<tr><td>MLU</td><td>{status}</td></tr>"
    if extra_row:
        rows += "<tr><td>DCU</td><td>in progress</td></tr>"
    return (
        "<html><body><h2>Hardware</h2><table class='hw'><tr><th>Chip</th><th>Status</th></tr>"
        f"{rows}<tr><td>GPU</td><td>supported</td></tr></table></body></html>"
    ).encode()


def _github(readme: str) -> GitHubState:
    stamp = "2026-10-01T00:00:00Z"
    return GitHubState(
        repos=[
            FakeRepo(
                owner="org",
                name="plugin",
                id=1,
                license_key="mit",
                spdx_id="MIT",
                license_name="MIT License",
                license_text=reference_text("MIT"),
                head_sha="a" * 40,
                head_date=stamp,
                files={"README.md": readme},
                releases=[FakeRelease("v1", "v1", stamp, stamp)],
            )
        ]
    )


@pytest.fixture
def env(db_url: str, tmp_path: Path) -> Iterator[tuple[FakeGitHub, FakePageServer, Store, Path]]:
    with FakeGitHub(_github(README), unauth_limit=5000) as github, FakePageServer() as site:
        store = Store(db_url)
        yield github, site, store, tmp_path
        store.close()


def _audit(github: FakeGitHub, site: FakePageServer, store: Store, tmp: Path) -> dict[str, Any]:
    config = parse_config(CONFIG.format(site=site.base_url))
    outcome = run_audit(
        config,
        store,
        tmp / "reports",
        env=github.env(),
        sleep=lambda _s: None,
    )
    validate_report(outcome.report.as_json())
    return outcome.report.as_json()


def test_page_changes_errors_and_carry_forward(
    env: tuple[FakeGitHub, FakePageServer, Store, Path],
) -> None:
    github, site, store, tmp = env
    site.set_page("/support.html", _page("in progress"))
    first = _audit(github, site, store, tmp)
    assert first["errors"] == []
    offsite = {p["name"]: p for p in first["projects"]}["Offsite"]
    assert (offsite["status"], offsite["version"]) == ("ok", None)
    assert [f["project"] for f in first["flags"]] == []  # off GitHub: no "no tagged release"

    # The selector stops matching: an error naming it, and no "table removed".
    site.set_page("/support.html", b"<html><body><p>Moved to the new portal.</p></body></html>")
    broken = _audit(github, site, store, tmp)
    assert broken["changes"] == []
    assert [(e["project"], e["source"], e["error"]) for e in broken["errors"]] == [
        (
            "Offsite",
            "page:support",
            "table 'hardware': page layout changed: selector `table.hw` matched nothing",
        ),
    ]

    # Back, with a cell changed and a row added; README pin bumped: exactly those changes.
    site.set_page("/support.html", _page("supported", extra_row=True))
    github.set_state(_github(README.replace(">=0.27.1,<0.28.0", ">=0.28.0,<0.29.0")))
    fixed = _audit(github, site, store, tmp)
    assert fixed["errors"] == []
    kinds = [(c["project"], c["kind"]) for c in fixed["changes"]]
    assert kinds == [("Plugin", "pin_changed"), ("Offsite", "table_changed")]
    pin, table = fixed["changes"]
    assert (pin["before"], pin["after"]) == (">=0.27.1,<0.28.0", ">=0.28.0,<0.29.0")
    assert table["details"]["cells_changed"] == [
        {"key": {"Chip": "MLU"}, "column": "Status", "before": "in progress", "after": "supported"}
    ]
    assert table["details"]["rows_added"] == [{"Chip": "DCU", "Status": "in progress"}]
    assert table["evidence_url"] == f"{site.base_url}/support.html"
    markdown = (tmp / "reports" / "latest" / "report.md").read_text()
    assert "| MLU | Status | in progress | supported |" in markdown


def test_a_projects_pages_stop_at_its_deadline_and_keep_their_last_extraction(
    tmp_path: Path, db_url: str
) -> None:
    """Issue 9: one deadline for a whole project. Three slow pages (1 s each) under a 1.5 s
    project deadline: the third is not read, is an error naming the setting, and keeps its
    last good extraction; the project is still checked. (The second page starts at 1 s and
    the third at 2 s: half a second of margin either way for a loaded machine.)"""
    pages = "".join(
        f"      - name: p{n}\n        url: SITE/p{n}.html\n        pins: {{v: 'v([0-9.]+)'}}\n"
        for n in range(3)
    )
    text = (
        "settings: {allow_private_addresses: true, project_deadline: LIMIT}\n"
        "projects:\n  - name: Slow vendor\n    homepage: https://vendor.example\n    pages:\n"
        + pages
    )
    with FakePageServer() as site:
        for n in range(3):
            site.set_page(f"/p{n}.html", f"<p>v1.{n}</p>".encode())
        store = Store(db_url)
        try:
            roomy = parse_config(text.replace("SITE", site.base_url).replace("LIMIT", "60"))
            run_audit(roomy, store, tmp_path / "r", env={}, sleep=lambda _s: None)
            for n in range(3):
                site.set_page(f"/p{n}.html", f"<p>v2.{n}</p>".encode(), delay=1.0)
            tight = parse_config(text.replace("SITE", site.base_url).replace("LIMIT", "1.5"))
            outcome = run_audit(tight, store, tmp_path / "r", env={}, sleep=lambda _s: None)
        finally:
            store.close()
    report = outcome.report.as_json()
    assert [(c["kind"], c["before"], c["after"]) for c in report["changes"]] == [
        ("pin_changed", "1.0", "2.0"),
        ("pin_changed", "1.1", "2.1"),
    ]
    assert [(e["source"], e["error"]) for e in report["errors"]] == [
        (
            "page:p2",
            "not read: the project's pages took longer than its 1.5s deadline "
            "(settings.project_deadline)",
        )
    ]
    assert report["projects"][0]["status"] == "ok"
    assert outcome.exit_code == 1
