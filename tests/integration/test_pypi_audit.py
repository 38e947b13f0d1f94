"""PyPI channels in whole audits: ``run_audit`` against the GitHub-shaped and PyPI-shaped fakes
on loopback, on SQLite and PostgreSQL. Release dates are set relative to now, because the grace
period before "a release without an upload" is measured from the audit's own clock."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import AuditOutcome, run_audit
from crawler.config import Config, parse_config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler_fakes.faults import FaultPlan, FaultRule
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from crawler_fakes.pypi import FakePackage, FakePyPI, FakeVersion, PyPIState
from tests.support.audits import changes

TOKEN = "ghp_pypi_audit_token_8c1e4b2a9d7f"
WEB = "https://pypi.example.test"
STARTED = datetime.now(UTC).replace(microsecond=0)
APACHE_CLASSIFIER = "License :: OSI Approved :: Apache Software License"  # names no version

CONFIG = """
pypi: {retry_base_delay: 0, max_retries: 1, concurrency: 1}
projects:
  - name: Alpha
    repo: org/alpha
    pypi: alpha-pkg
  - name: Beta
    repo: org/beta
    pypi: beta-pkg
  - name: Gamma
    repo: org/gamma
    pypi: gamma-pkg
  - name: Delta
    repo: org/delta
    pypi: delta-pkg
  - name: Plain
    repo: org/plain
"""


def _ago(days: int) -> str:
    return (STARTED - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _release(tag: str, days_ago: int) -> FakeRelease:
    return FakeRelease(tag, tag, _ago(days_ago), _ago(days_ago))


def _repo(name: str, repo_id: int, spdx: str, *releases: FakeRelease) -> FakeRepo:
    return FakeRepo(
        owner="org", name=name, id=repo_id, license_key=spdx.lower(), spdx_id=spdx,
        license_name=spdx, license_text=reference_text(spdx), head_sha=f"{repo_id}" * 40,
        head_date=_ago(200), releases=list(releases),
    )  # fmt: skip


def github_state(*, later: bool = False) -> GitHubState:
    repos = [
        _repo("alpha", 1, "MIT", _release("v1.0.0", 60)),
        _repo("beta", 2, "Apache-2.0", _release("v2.0.0", 30)),  # no upload for 30 days
        _repo("gamma", 3, "Apache-2.0", _release("v3.0.0", 100)),
        _repo("delta", 4, "MIT", _release("v4.0.0", 50)),
        _repo("plain", 5, "MIT", _release("v5.0.0", 40)),
    ]
    if later:
        repos[2].releases.append(_release("v3.1.0", 1))  # within the grace period
        repos[4].releases.append(_release("v5.1.0", 1))
    return GitHubState(repos)


def pypi_state(*, later: bool = False) -> PyPIState:
    alpha = FakePackage("alpha-pkg", [FakeVersion("1.0.0", _ago(60))], license_expression="MIT")
    if later:
        alpha.versions += [
            FakeVersion("1.1.0", _ago(2)),  # no GitHub release for it
            FakeVersion("1.2.0rc1", _ago(1)),
            FakeVersion("0.9.1", _ago(1), yanked=True, yanked_reason="broken wheel"),
        ]
    return PyPIState(
        [
            alpha,
            FakePackage("beta-pkg", [FakeVersion("1.9.0", _ago(90))],
                        classifiers=[APACHE_CLASSIFIER]),
            FakePackage("gamma-pkg", [FakeVersion("3.0.0", _ago(100))], license="Apache-2.0"),
            FakePackage("delta-pkg", [FakeVersion("4.0.0", _ago(50))],
                        license_expression="Apache-2.0"),  # the repository's file reads MIT
        ]
    )


class Audits:
    def __init__(self, github: FakeGitHub, pypi: FakePyPI, db_url: str, tmp: Path) -> None:
        self.github, self.pypi = github, pypi
        self.store = Store(db_url)
        self.reports = tmp / "reports"
        self.env = {**github.env(), **pypi.env()}
        self.sleeps: list[float] = []

    def run(self, config: Config | None = None) -> AuditOutcome:
        outcome = run_audit(
            config or parse_config(CONFIG), self.store, self.reports, env=self.env,
            sleep=self.sleeps.append,
        )  # fmt: skip
        validate_report(outcome.report.as_json())
        return outcome


@pytest.fixture
def audits(db_url: str, tmp_path: Path) -> Iterator[Audits]:
    with FakeGitHub(github_state(), unauth_limit=5000) as github, FakePyPI(
        pypi_state(), web_url=WEB
    ) as pypi:
        harness = Audits(github, pypi, db_url, tmp_path)
        yield harness
        harness.store.close()


def _flags(report: dict[str, Any]) -> list[tuple[str, str, bool, str]]:
    return [
        (f["project"], f["details"].get("problem", f["kind"]), f["new"], f["detail"])
        for f in report["flags"]
    ]


BETA_LATE = (
    f"GitHub release v2.0.0 ({_ago(30)[:10]}) has no PyPI upload after 30 days; newest there "
    "is 1.9.0"
)
DELTA_LICENSE = "PyPI declares license Apache-2.0, the repository's license file reads MIT"


def test_package_versions_and_every_channel_mismatch(audits: Audits) -> None:
    first = audits.run().report.as_json()
    assert [c[:2] for c in changes(first)] == [
        (name, "project_added") for name in ("Alpha", "Beta", "Gamma", "Delta", "Plain")
    ]
    assert _flags(first) == [
        ("Beta", "release_without_package", True, BETA_LATE),
        ("Delta", "license", True, DELTA_LICENSE),
    ]
    rows = {p["name"]: p for p in first["projects"]}
    assert rows["Beta"]["packages"] == [
        {
            "registry": "pypi", "registry_label": "PyPI", "name": "beta-pkg",
            "url": f"{WEB}/project/beta-pkg/", "version": "1.9.0", "uploaded_at": _ago(90),
            "prerelease": False, "license": None,  # an ambiguous classifier declares nothing
        }
    ]  # fmt: skip
    assert rows["Gamma"]["packages"][0]["license"] == "Apache-2.0"
    assert rows["Plain"]["packages"] == []

    audits.github.set_state(github_state(later=True))
    audits.pypi.set_state(pypi_state(later=True))
    second = audits.run().report.as_json()
    assert changes(second) == [
        ("Alpha", "new_package_version", "1.0.0", "1.1.0"),
        ("Alpha", "new_package_version", "1.0.0", "1.2.0rc1"),  # the yanked 0.9.1 is not news
        ("Gamma", "new_release", "v3.0.0", "v3.1.0"),
        ("Plain", "new_release", "v5.0.0", "v5.1.0"),
    ]
    added, pre = second["changes"][:2]
    assert added["summary"] == f"PyPI alpha-pkg 1.1.0 uploaded {_ago(2)}"
    assert added["evidence_url"] == f"{WEB}/project/alpha-pkg/1.1.0/"
    assert added["section"] == "packages"
    assert pre["details"] == {
        "registry": "pypi", "package": "alpha-pkg", "uploaded_at": _ago(1), "prerelease": True,
    }  # fmt: skip
    assert _flags(second) == [
        (
            "Alpha",
            "version_ahead",
            True,
            "PyPI has 1.1.0 but the newest GitHub release is v1.0.0 (published without a "
            "release?)",
        ),
        ("Beta", "release_without_package", False, BETA_LATE),
        ("Delta", "license", False, DELTA_LICENSE),
    ]  # Gamma's v3.1.0 is a day old: inside the 7-day grace period, not a mismatch
    assert second["flags"][0]["evidence_url"] == f"{WEB}/project/alpha-pkg/"
    markdown = (audits.reports / "latest" / "report.md").read_text()
    assert "| Alpha | alpha-pkg | 1.0.0 → 1.1.0 |" in markdown


def test_the_grace_period_is_a_setting(audits: Audits) -> None:
    config = parse_config("settings: {channel_grace_days: 0}\n" + CONFIG)
    audits.run(config)
    audits.github.set_state(github_state(later=True))
    flags = _flags(audits.run(config).report.as_json())
    assert [(project, problem, new) for project, problem, new, _ in flags] == [
        ("Beta", "release_without_package", False),
        ("Gamma", "release_without_package", True),  # v3.1.0, a day without an upload
        ("Delta", "license", False),
    ]


def test_a_second_unchanged_audit_asks_pypi_conditionally_and_gets_304s(audits: Audits) -> None:
    audits.run()
    audits.pypi.reset_log()
    second = audits.run().report.as_json()
    assert second["changes"] == []
    assert [f["new"] for f in second["flags"]] == [False, False]
    assert sorted((r.path, r.status, r.conditional) for r in audits.pypi.requests) == [
        (f"/pypi/{name}-pkg/json", 304, True) for name in ("alpha", "beta", "delta", "gamma")
    ]
    assert second["requests"]["sources"]["pypi"] == {
        "requests": 4, "not_modified": 4, "retries": 0, "rate_remaining": None,
    }  # fmt: skip


def test_a_pypi_outage_is_an_error_for_the_channel_only(audits: Audits) -> None:
    audits.run()
    audits.github.set_state(github_state(later=True))
    audits.pypi.stop()  # nobody listens there any more: connection refused
    outcome = audits.run()
    report = outcome.report.as_json()
    assert outcome.status == "partial" and outcome.exit_code == 1
    # the forge's news still arrives, and a failed channel is never "a version disappeared"
    assert changes(report) == [
        ("Gamma", "new_release", "v3.0.0", "v3.1.0"),
        ("Plain", "new_release", "v5.0.0", "v5.1.0"),
    ]
    refused = "no answer from PyPI: ConnectError (gave up after 2 attempts, 0.0s of waiting)"
    assert [(e["project"], e["source"], e["error"]) for e in report["errors"]] == [
        ("Alpha", "pypi", refused),
        ("Beta", "pypi", refused),
        ("Gamma", "pypi", refused),
        ("Delta", "pypi", "not attempted: PyPI unreachable (3 requests in a row got no answer)"),
    ]
    rows = {p["name"]: p for p in report["projects"]}
    assert rows["Alpha"]["packages"][0]["version"] == "1.0.0"  # the last good facet, kept
    assert rows["Gamma"]["version"] == "v3.1.0"
    assert all(rows[n]["status"] == "ok" for n in rows)
    assert _flags(report)[1][:3] == ("Delta", "license", False)  # flags stand on the kept facet


def test_a_spent_pypi_budget_defers_the_channel_without_an_error(audits: Audits) -> None:
    audits.run()
    audits.pypi.rate_limit = audits.pypi.rate_remaining = 2
    report = audits.run().report.as_json()
    assert report["errors"] == [] and report["changes"] == []
    notes = {p["name"]: p["note"] for p in report["projects"]}
    assert notes["Alpha"] is None and notes["Beta"] is None
    assert (notes["Gamma"] or "").startswith(
        "pypi not checked: PyPI rate budget spent (0 left of 2, keeping 0 in reserve; resets "
    )
    assert notes["Delta"] == notes["Gamma"]
    rows = {p["name"]: p for p in report["projects"]}
    assert rows["Delta"]["packages"][0]["license"] == "Apache-2.0"  # kept from the last audit


def test_the_github_token_never_reaches_pypi_logs_reports_or_the_database(
    audits: Audits, caplog: pytest.LogCaptureFixture, db_url: str
) -> None:
    caplog.set_level(logging.DEBUG)
    audits.env["GITHUB_TOKEN"] = TOKEN
    audits.github.token = TOKEN
    audits.pypi.faults = FaultPlan(rules=[FaultRule("status_500", "/pypi/", times=99)])
    outcome = audits.run()
    assert {e["source"] for e in outcome.report.as_json()["errors"]} == {"pypi"}
    assert audits.pypi.requests and not any(r.authorization for r in audits.pypi.requests)
    assert TOKEN not in json.dumps(outcome.report.as_json())
    for path in audits.reports.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert TOKEN not in caplog.text
    if db_url.startswith("sqlite:///"):
        assert TOKEN.encode() not in Path(db_url.removeprefix("sqlite:///")).read_bytes()
    with audits.store.engine.connect() as conn:
        for table in ("fetch_errors", "snapshots", "audits", "http_cache", "observations"):
            assert TOKEN not in repr(conn.exec_driver_sql(f"select * from {table}").fetchall())
