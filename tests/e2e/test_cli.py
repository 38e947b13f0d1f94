"""The command line as a cron job and a reviewer use it: exit codes, help, history, re-render."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.analysis.license_texts import reference_text
from crawler.cli import cli
from crawler_fakes.github import (
    FakeGitHub,
    FaultPlan,
    FaultRule,
)
from tests.support.ops import PROJECTS, upstream


@pytest.fixture
def workdir(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "sources.yaml").write_text(PROJECTS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRAWLER_DB_URL", db_url)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    return tmp_path


def test_audit_history_report_and_diff(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        first = runner.invoke(cli, ["audit"])
        assert first.exit_code == 0, first.output
        assert "audit #1 complete: 2 changes, 0 flags, 0 errors, 0 deferred" in first.output
        assert "warning: no GITHUB_TOKEN or GH_TOKEN" in first.output
        server.set_state(upstream("v1.0", "v1.1"))
        second = runner.invoke(cli, ["audit", "--only", "Alpha"])
        assert second.exit_code == 0, second.output
        assert "audit #2 complete: 1 change" in second.output
        server.faults = FaultPlan(rules=[FaultRule(kind="status_500", path="beta", times=99)])
        third = runner.invoke(cli, ["audit"])
        assert third.exit_code == 1, third.output
        assert "audit #3 partial: 0 changes, 0 flags, 1 error" in third.output

    history = runner.invoke(cli, ["history", "Alpha", "--json"])
    assert history.exit_code == 0, history.output
    rows = json.loads(history.output)
    assert [(r["audit"], r["version"], r["license"]) for r in rows] == [
        (1, "v1.0", "MIT"),
        (2, "v1.1", "MIT"),
    ]
    beta = json.loads(runner.invoke(cli, ["history", "Beta", "--json"]).output)
    assert [(r["audit"], r["status"]) for r in beta] == [(1, "ok"), (3, "error")]

    rendered = runner.invoke(cli, ["report", "2", "--stdout"])
    assert rendered.exit_code == 0, rendered.output
    assert "| Alpha | new release | v1.0 → v1.1 |" in rendered.output
    diff = runner.invoke(cli, ["diff", "1", "2", "--json"])
    assert [(c["project"], c["kind"], c["after"]) for c in json.loads(diff.output)] == [
        ("Alpha", "new_release", "v1.1")
    ]
    report_files = sorted(p.name for p in (workdir / "reports").iterdir())
    assert len(report_files) == 4 and report_files[-1] == "latest"


def test_configuration_errors_exit_2_with_file_and_line(workdir: Path) -> None:
    (workdir / "bad.yaml").write_text("projects:\n  - name: x\n    repo: nope\n")
    result = CliRunner().invoke(cli, ["audit", "--config", "bad.yaml"])
    assert result.exit_code == 2
    assert "bad.yaml:3: project 'x': repo 'nope' must look like 'owner/name'" in result.output
    unknown = CliRunner().invoke(cli, ["audit", "--only", "Gamma"])
    assert unknown.exit_code == 2
    assert "--only: unknown project 'Gamma'; known: Alpha, Beta" in unknown.output
    missing = CliRunner().invoke(cli, ["report", "42"])
    assert missing.exit_code == 2
    # the refused audits created no database (the names are checked before it is opened)
    assert "no database at " in missing.output or "no crawler database at " in missing.output


@pytest.mark.parametrize(
    "command", ["audit", "history", "report", "diff", "license", "page", "demo", "schedule"]
)
def test_every_command_has_help(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0
    assert result.output.startswith(f"Usage: cli {command} ")


def test_license_command_reads_local_files(tmp_path: Path) -> None:
    path = tmp_path / "LICENSE"
    path.write_text(reference_text("MIT") + "\nThe logo is not covered by this license.\n")
    result = CliRunner().invoke(cli, ["license", str(path), "--json"])
    assert result.exit_code == 0, result.output
    analysis = json.loads(result.output)[str(path)]
    assert analysis["spdx_ids"] == ["MIT"]
    assert analysis["verdict"] == "match_with_extra_text"
    assert [s["text"] for s in analysis["extra_text"]] == [
        "The logo is not covered by this license."
    ]
