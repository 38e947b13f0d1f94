"""Issue 9, item 1: no exception raised while handling one project (or one page, or one source)
may end the audit.

An arbitrary exception is injected into one stage for ONE project (the GitHub fetch, the license
analysis, the page extraction, the diff) or into a whole source; the audit must end, report the
other projects with their changes, keep the broken project's last good state and say so, and
the next audit without the fault must report what the broken one missed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import crawler.diff
import crawler.gather
from crawler.audit import AuditOutcome, rebuild_report, run_audit
from crawler.config import Config, PageSpec, parse_config
from crawler.diff import DiffRules, Tracked
from crawler.model import Change, ProjectSnapshot
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler.upstream.source import Source
from crawler.upstream.sources.github.by_rest import RestProject
from crawler.upstream.sources.github.fetch import GitHubSource
from crawler_fakes.github import FakeGitHub, GitHubState, git_blob_sha
from crawler_fakes.pages import FakePageServer
from tests.support.audits import changes
from tests.support.regression import APACHE, MIT, repo

CONFIG = """
settings: {{allow_private_addresses: true}}
github: {{retry_base_delay: 0, max_retries: 1, concurrency: 1}}
projects:
  - name: Alpha
    repo: org/alpha
  - name: Broken
    repo: org/broken
    pages:
      - name: notes
        url: {site}/broken.html
        pins: {{engine: 'engine ([0-9.]+)'}}
  - name: Gamma
    repo: org/gamma
  - name: Vendor
    homepage: https://vendor.example/sdk
    pages:
      - name: support
        url: {site}/vendor.html
        pins: {{sdk: 'sdk ([0-9.]+)'}}
"""
LOGO = "\nThe logo is not covered by this license.\n"
BOOM = "injected failure for Broken"


def _github(after: bool) -> GitHubState:
    tags = ("v1.0", "v1.1") if after else ("v1.0",)
    return GitHubState(
        repos=[
            repo("alpha", 1, tags),
            repo("broken", 2, tags, license_text=MIT + LOGO if after else MIT),
            repo("gamma", 3, tags, license_text=APACHE),
        ]
    )


@dataclass
class World:
    github: FakeGitHub
    site: FakePageServer
    store: Store
    reports: Path
    config: Config

    def upstream(self, after: bool) -> None:
        """Before: every project at v1.0, the pins at 1.0. After: v1.1 everywhere, Broken's
        license text gains a sentence, both pins move to 2.0."""
        self.github.set_state(_github(after))
        version = "2.0" if after else "1.0"
        self.site.set_page("/broken.html", f"<p>engine {version}</p>".encode(), charset="utf-8")
        self.site.set_page("/vendor.html", f"<p>sdk {version}</p>".encode(), charset="utf-8")

    def audit(self) -> AuditOutcome:
        outcome = run_audit(
            self.config, self.store, self.reports, env=self.github.env(), sleep=lambda _s: None
        )
        validate_report(outcome.report.as_json())
        return outcome


@pytest.fixture
def world(db_url: str, tmp_path: Path) -> Iterator[World]:
    with FakeGitHub(_github(False), unauth_limit=5000) as github, FakePageServer() as site:
        config = parse_config(CONFIG.format(site=site.base_url))
        store = Store(db_url)
        world = World(github, site, store, tmp_path / "reports", config)
        world.upstream(after=False)
        first = world.audit()
        assert (first.status, first.report.as_json()["errors"]) == ("complete", [])
        world.upstream(after=True)
        yield world
        store.close()


def _errors(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["project"], e["source"], e["error"]) for e in report["errors"]]


def _rows(report: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {p["name"]: (p["status"], p["version"]) for p in report["projects"]}


OTHERS = [
    ("Alpha", "new_release", "v1.0", "v1.1"),
    ("Gamma", "new_release", "v1.0", "v1.1"),
    ("Vendor", "pin_changed", "1.0", "2.0"),
]
BROKEN_ALL = [
    ("Broken", "new_release", "v1.0", "v1.1"),
    ("Broken", "license_text_changed", git_blob_sha(MIT), git_blob_sha(MIT + LOGO)),
    ("Broken", "pin_changed", "1.0", "2.0"),
]


def _inject(stage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``stage`` raise for the project Broken only; every other call runs the real code."""
    if stage == "fetch":
        real_fetch = RestProject.fetch

        def fetch(
            self: RestProject, spec: Any, repo_path: str, prior: ProjectSnapshot | None
        ) -> ProjectSnapshot:
            if spec.name == "Broken":
                raise RuntimeError(BOOM)
            return real_fetch(self, spec, repo_path, prior)

        monkeypatch.setattr(RestProject, "fetch", fetch)
    elif stage == "license":
        real_analyse = crawler.gather._analyse_license

        def analyse(text: str, path: str, siblings: Sequence[str]) -> dict[str, Any]:
            if LOGO.strip() in text:  # only Broken's new license text has this sentence
                raise RuntimeError(BOOM)
            return real_analyse(text, path, siblings)

        monkeypatch.setattr(crawler.gather, "_analyse_license", analyse)
    elif stage == "page":
        real_extract = crawler.gather._extract_page

        def extract(
            page: PageSpec, body: str, content_type: str | None, url: str, limit: int,
            earlier: Any = None,
        ) -> Any:  # fmt: skip
            if page.name == "notes":  # Broken's page
                raise RuntimeError(BOOM)
            return real_extract(page, body, content_type, url, limit, earlier)

        monkeypatch.setattr(crawler.gather, "_extract_page", extract)
    else:
        assert stage == "diff"
        real_changes = crawler.diff.project_changes

        def changes(
            tracked: Tracked,
            before: ProjectSnapshot | None,
            after: ProjectSnapshot,
            rules: DiffRules,
        ) -> list[Change]:
            if tracked.name == "Broken":
                raise RuntimeError(BOOM)
            return real_changes(tracked, before, after, rules)

        monkeypatch.setattr(crawler.diff, "project_changes", changes)


@pytest.mark.parametrize("stage", ["fetch", "license", "diff"])
def test_one_project_failing_in_a_stage_is_its_error_and_the_others_are_reported(
    world: World, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    with monkeypatch.context() as patch:
        _inject(stage, patch)
        broken = world.audit()
    report = broken.report.as_json()
    assert changes(report) == OTHERS
    source, prefix = {
        "fetch": ("github", ""),
        "license": ("crawler", "internal error: "),
        "diff": ("diff", "could not compare: "),
    }[stage]
    [(project, error_source, message)] = _errors(report)
    assert (project, error_source) == ("Broken", source)
    assert message == prefix + (f"RuntimeError('{BOOM}')" if stage == "diff" else BOOM)
    # the last good state is kept and shown: the release and pin it had before
    assert _rows(report) == {
        "Alpha": ("ok", "v1.1"),
        "Broken": ("error", "v1.0"),
        "Gamma": ("ok", "v1.1"),
        "Vendor": ("ok", None),
    }
    assert (broken.status, broken.exit_code) == ("partial", 1)
    assert report["summary"]["errors"] == 1 and report["summary"]["projects_with_errors"] == 1
    markdown = (world.reports / "latest" / "report.md").read_text()
    assert "**Not all clear:** 1 project had errors." in markdown
    assert f"- **Broken** ({source}): `{prefix}" in markdown  # quoted whole (issue 20)
    assert "- **Broken** not checked (error)" in markdown
    rebuilt = rebuild_report(world.store, world.config, broken.audit_id).as_json()  # stored
    assert (rebuilt["changes"], rebuilt["errors"]) == (report["changes"], report["errors"])
    assert _rows(rebuilt) == _rows(report)

    recovered = world.audit().report.as_json()  # the fault is gone: what Broken missed comes now
    assert recovered["audit"]["baseline_audit_id"] == broken.audit_id
    assert changes(recovered) == BROKEN_ALL
    assert recovered["errors"] == []


def test_one_page_failing_in_extraction_is_that_pages_error(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        _inject("page", patch)
        broken = world.audit()
    report = broken.report.as_json()
    assert changes(report) == [
        ("Alpha", "new_release", "v1.0", "v1.1"),
        ("Broken", "new_release", "v1.0", "v1.1"),
        BROKEN_ALL[1],
        ("Gamma", "new_release", "v1.0", "v1.1"),
        ("Vendor", "pin_changed", "1.0", "2.0"),
    ]
    assert _errors(report) == [("Broken", "page:notes", f"internal error: {BOOM}")]
    assert report["errors"][0]["url"] == f"{world.site.base_url}/broken.html"
    assert _rows(report)["Broken"] == ("ok", "v1.1")  # checked, its page only in part
    assert (broken.status, broken.exit_code) == ("partial", 1)
    markdown = (world.reports / "latest" / "report.md").read_text()
    assert "- **Broken** checked in part" in markdown

    recovered = world.audit().report.as_json()  # the page's last good pin was kept: 1.0 → 2.0 now
    assert changes(recovered) == [("Broken", "pin_changed", "1.0", "2.0")]


def test_a_whole_source_failing_leaves_the_other_sources_projects_reported(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(self: Source, specs: Any, prior: Any) -> Any:
        raise RuntimeError(BOOM)

    with monkeypatch.context() as patch:
        patch.setattr(GitHubSource, "fetch", fail)
        broken = world.audit()
    report = broken.report.as_json()
    assert changes(report) == [("Vendor", "pin_changed", "1.0", "2.0")]
    why = f"GitHub source failed unexpectedly: {BOOM}"
    assert _errors(report) == [(n, "github", why) for n in ("Alpha", "Broken", "Gamma")]
    assert _rows(report) == {
        "Alpha": ("error", "v1.0"),
        "Broken": ("error", "v1.0"),
        "Gamma": ("error", "v1.0"),
        "Vendor": ("ok", None),
    }
    assert (broken.status, broken.exit_code) == ("partial", 1)

    recovered = world.audit().report.as_json()
    assert changes(recovered) == [
        ("Alpha", "new_release", "v1.0", "v1.1"),
        *BROKEN_ALL,
        ("Gamma", "new_release", "v1.0", "v1.1"),
    ]
