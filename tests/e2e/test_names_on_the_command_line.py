"""Names on the command line: an unknown change kind or project is an error (exit 2) naming the
known ones, with the closest as a suggestion, never "nothing pending matched" and exit 0; a
project's name matches whatever its case (`--only triton`); an error found at run time (no such
project, no such audit) prints its message, not the usage block of a mistyped command line.

Guards the defects where `crawler ack --kind bogus` and `crawler ack Nope` printed "nothing
pending matched: nothing acknowledged" and exited 0, where `--only alpha` refused the project
Alpha, and where `history`/`diff` followed a run-time error with "Usage: …"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from crawler.cli import cli
from crawler_fakes.github import FakeGitHub
from tests.support.ops import PROJECTS, upstream

PENDING_KINDS = (
    "license_changed, license_files_changed, license_text_changed, link_broken, link_moved, "
    "new_prerelease, new_release, new_tag, pin_changed, table_changed, upstream_dormant, "
    "upstream_superseded"
)


@pytest.fixture
def two_nights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    """Alpha and Beta audited twice; Alpha's v1.1, new on the second night, is pending."""
    (tmp_path / "sources.yaml").write_text(PROJECTS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRAWLER_DB_URL", f"sqlite:///{tmp_path / 'crawler.sqlite'}")
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "CRAWLER_CONFIG", "CRAWLER_NOTIFY"):
        monkeypatch.delenv(name, raising=False)
    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        assert _run("--quiet", "audit").exit_code == 0
        server.set_state(upstream("v1.0", "v1.1"))
        assert _run("--quiet", "audit").exit_code == 0
        yield server


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _error(result: Result) -> str:
    """The one error line of a run-time error: exit 2, no usage block."""
    assert result.exit_code == 2, result.output
    assert "Usage:" not in result.output and "Try 'crawler" not in result.output
    [line] = result.output.splitlines()
    return line


def test_ack_an_unknown_kind_names_the_known_ones(two_nights: FakeGitHub) -> None:
    assert _error(_run("ack", "--kind", "bogus")) == (
        f"Error: --kind: unknown kind 'bogus'; known: {PENDING_KINDS}"
    )
    assert _error(_run("ack", "--kind", "new_relase")) == (
        f"Error: --kind: unknown kind 'new_relase' (did you mean 'new_release'?); known: "
        f"{PENDING_KINDS}"
    )
    assert "v1.1" in _run("report", "--stdout").output  # nothing was acknowledged


def test_ack_an_unknown_project_names_the_known_ones(two_nights: FakeGitHub) -> None:
    assert _error(_run("ack", "Nope")) == "Error: unknown project 'Nope'; known: Alpha, Beta"
    assert _error(_run("ack", "Alpah")) == (
        "Error: unknown project 'Alpah' (did you mean 'Alpha'?); known: Alpha, Beta"
    )
    # a known project with nothing pending is no error
    beta = _run("ack", "Beta")
    assert (beta.exit_code, beta.output) == (0, "nothing pending matched: nothing acknowledged\n")


def test_ack_matches_a_project_and_a_kind_whatever_their_case(two_nights: FakeGitHub) -> None:
    done = _run("ack", "alpha", "--kind", "NEW_RELEASE")
    assert done.exit_code == 0, done.output
    assert done.output.startswith("acknowledged 1 pending change: Alpha new release v1.1 (since ")


def test_only_matches_project_names_whatever_their_case(two_nights: FakeGitHub) -> None:
    audit = _run("--quiet", "audit", "--only", "ALPHA")
    assert audit.exit_code == 0, audit.output
    report = json.loads(Path("reports/latest/report.json").read_text())
    assert [p["name"] for p in report["projects"] if p["status"] == "ok"] == ["Alpha"]
    assert _error(_run("audit", "--only", "alphaa")) == (
        "Error: --only: unknown project 'alphaa' (did you mean 'Alpha'?); known: Alpha, Beta"
    )


def test_history_matches_a_name_whatever_its_case(two_nights: FakeGitHub) -> None:
    history = _run("history", "aLPHA", "--json")
    assert history.exit_code == 0, history.output
    assert [row["version"] for row in json.loads(history.output)] == ["v1.0", "v1.1"]


def test_a_run_time_error_prints_its_message_without_the_usage_block(
    two_nights: FakeGitHub,
) -> None:
    assert _error(_run("history", "Gamma")) == (
        "Error: unknown project 'Gamma'; known: Alpha, Beta"
    )
    assert _error(_run("diff", "1", "9")) == "Error: no audit 9 in the database (the latest is #2)"
    # a mistyped command line still shows how to type it
    typo = _run("ack", "--knd", "new_release")
    assert typo.exit_code == 2 and typo.output.startswith("Usage: cli ack")
