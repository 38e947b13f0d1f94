"""Issue 11, items 2, 4 and 6 (times): regression tests against the fake GitHub on loopback and
a real database (SQLite and PostgreSQL).

- a budget smaller than one audit rotates through the catalog (least recently checked first),
  says how long each deferred project has waited, and flags the ones that waited too long;
- `crawler history` reads the database, not sources.yaml;
- every time a report or a log line shows is an ISO date, never epoch seconds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import update

from crawler.audit import AuditOutcome, run_audit
from crawler.cli import cli
from crawler.config import parse_config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler.store.tables import AuditRow
from crawler_fakes.github import FakeGitHub, GitHubState
from tests.support.ops import command_line_env
from tests.support.regression import repo

NAMES = [f"P{i:02d}" for i in range(12)]
NIGHTLY = (
    "settings: {stale_after_days: 1.5}\n"
    "github: {concurrency: 1, retry_base_delay: 0}\n"
    "projects:\n" + "".join(f"  - name: {n}\n    repo: org/{n.lower()}\n" for n in NAMES)
)
BUDGET = 16  # 3 requests a project (repo, releases, license): 5 checked, the 6th deferred


def _upstream() -> GitHubState:
    return GitHubState(repos=[repo(n.lower(), i + 1, ("v1.0",)) for i, n in enumerate(NAMES)])


def _a_day_passes(store: Store) -> None:
    """Every stored audit moves one day into the past, as if the next night had come."""
    with store.engine.begin() as conn:
        rows = conn.execute(AuditRow.__table__.select()).mappings().all()
        for row in rows:
            moved = {
                key: row[key] - timedelta(days=1)
                for key in ("started_at", "finished_at")
                if row[key] is not None
            }
            conn.execute(update(AuditRow).where(AuditRow.id == row["id"]).values(**moved))


def _reset_iso(server: FakeGitHub) -> str:
    reset = server.rate_limit_doc(authenticated=False)["rate"]["reset"]
    return datetime.fromtimestamp(reset, UTC).isoformat().replace("+00:00", "Z")


def _by_status(report: dict[str, Any], status: str) -> list[str]:
    return [p["name"] for p in report["projects"] if p["status"] == status]


def test_three_short_nights_check_every_project_and_flag_the_ones_that_waited(
    db_url: str, tmp_path: Path
) -> None:
    config = parse_config(NIGHTLY)
    store = Store(db_url)
    nights: list[AuditOutcome] = []
    fetched: list[list[str]] = []
    with FakeGitHub(_upstream(), unauth_limit=60) as server:
        for night in range(3):
            if night:
                _a_day_passes(store)
            server.set_rate_limit(BUDGET, authenticated=False)
            server.reset_log()
            outcome = run_audit(
                config, store, tmp_path / "reports", env=server.env(), sleep=lambda _s: None
            )
            validate_report(outcome.report.as_json())
            nights.append(outcome)
            fetched.append(
                [r.path.split("/")[3] for r in server.requests if r.path.count("/") == 3]
            )
        reset = _reset_iso(server)
    started = [a.started_at for a in store.audits()]
    store.close()

    checked = [_by_status(n.report.as_json(), "ok") for n in nights]
    assert checked == [NAMES[0:5], NAMES[5:10], [*NAMES[0:3], *NAMES[10:12]]]
    assert fetched == [  # never checked first, then least recently checked; 6th runs dry
        ["p00", "p01", "p02", "p03", "p04", "p05"],
        ["p05", "p06", "p07", "p08", "p09", "p10"],
        ["p10", "p11", "p00", "p01", "p02", "p03"],
    ]
    assert {name for names in checked for name in names} == set(NAMES)

    third = nights[2].report.as_json()
    assert _by_status(third, "deferred") == NAMES[3:10]
    notes = {p["name"]: p["note"] for p in third["projects"] if p["status"] == "deferred"}
    budget = (
        "not checked this audit: rate budget nearly spent (0 left of 60, 0 in flight, keeping 0 "
        f"in reserve); resets at {reset}; "
    )
    first_night, second_night = started[0].date().isoformat(), started[1].date().isoformat()
    assert notes == {
        **{n: f"{budget}last checked {first_night} (2 days ago)" for n in NAMES[3:5]},
        **{n: f"{budget}last checked {second_night} (1 day ago)" for n in NAMES[5:10]},
    }
    stale = [(f["project"], f["kind"], f["detail"]) for f in third["flags"]]
    assert stale == [
        (
            name,
            "stale",
            f"not checked for 2 days: last checked {first_night} (2 days ago); the catalog "
            "shows its last good state",
        )
        for name in NAMES[3:5]
    ]
    assert [f["details"]["last_checked"] for f in third["flags"]] == [
        started[0].isoformat().replace("+00:00", "Z")
    ] * 2
    assert third["summary"]["stale"] == 2 and third["summary"]["errors"] == 0
    assert [n.exit_code for n in nights] == [0, 0, 1]  # waiting too long needs a person

    markdown = (tmp_path / "reports" / "latest" / "report.md").read_text()
    assert "**Not all clear:** 7 projects were not checked (deferred); at this audit's pace " \
        "the rotation reaches them in 2 more nights; 2 projects have gone " \
        "unchecked too long (stale)." in markdown
    assert "Every project was checked" not in markdown
    second = nights[1].report.as_json()  # never-checked projects waited since the first audit
    assert {p["name"]: p["note"] for p in second["projects"] if p["name"] in ("P10", "P11")} == {
        "P10": f"{budget}never checked yet",
        "P11": f"{budget}never checked yet",
    }


# -- item 4: history from the database --------------------------------------------------------


def test_history_after_the_demo_without_any_sources_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["demo", "--output", "demo"]).exit_code == 0
    assert not (tmp_path / "sources.yaml").exists()
    db = f"sqlite:///{tmp_path / 'demo' / 'demo.sqlite'}"

    shown = runner.invoke(cli, ["history", "Serving Engine", "--db", db, "--json"])
    assert shown.exit_code == 0, shown.output
    assert [(r["audit"], r["status"], r["version"], r["prerelease"]) for r in json.loads(
        shown.stdout
    )] == [(1, "ok", "v0.32.1", False), (2, "ok", "v0.33.0rc3", True)]  # the rc is the row
    text = runner.invoke(cli, ["history", "Serving Engine", "--db", db]).stdout.splitlines()
    assert text[1].endswith(
        "audit #2  v0.33.0rc3 (release, release candidate, 2026-11-02T12:00:00Z)  "
        "license: Apache-2.0"
    )  # named as snapshot.md, catalog.json, the Explorer and the report name it
    retired = runner.invoke(cli, ["history", "Retired Plugin", "--db", db, "--json"])
    assert retired.exit_code == 0, retired.output  # dropped from the demo's second catalog
    assert [(r["audit"], r["version"]) for r in json.loads(retired.stdout)] == [(1, "v0.9.0")]

    unknown = runner.invoke(cli, ["history", "Nope", "--db", db])
    assert unknown.exit_code == 2
    store = Store(db)
    try:
        known = store.known_projects()  # every name the demo's audits stored, sorted
    finally:
        store.close()
    assert {"Retired Plugin", "Serving Engine"} <= set(known)
    listed = ", ".join(known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    assert unknown.output == f"Error: unknown project 'Nope'; known: {listed}\n"


@pytest.fixture
def upstream(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    command_line_env(monkeypatch, db_url)
    state = GitHubState(repos=[repo("alpha", 1, ("v1.0",)), repo("beta", 2, ("v2.0",))])
    with FakeGitHub(state, unauth_limit=5000) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        yield server


def test_history_of_a_project_removed_from_sources_yaml(
    upstream: FakeGitHub, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    both = "projects:\n  - name: Alpha\n    repo: org/alpha\n  - name: Beta\n    repo: org/beta\n"
    (tmp_path / "sources.yaml").write_text(both)
    assert runner.invoke(cli, ["audit"]).exit_code == 0
    upstream.set_state(
        GitHubState(repos=[repo("alpha", 1, ("v1.0", "v1.1")), repo("beta", 2, ("v2.0",))])
    )
    (tmp_path / "sources.yaml").write_text("projects:\n  - name: Alpha\n    repo: org/alpha\n")
    assert runner.invoke(cli, ["audit"]).exit_code == 0  # Beta: project_removed

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no sources.yaml here at all
    beta = runner.invoke(cli, ["history", "Beta", "--db", db_url, "--json"])
    assert beta.exit_code == 0, beta.output
    assert [(r["audit"], r["status"], r["version"], r["license"]) for r in json.loads(
        beta.stdout
    )] == [(1, "ok", "v2.0", "MIT")]
    alpha = runner.invoke(cli, ["history", "Alpha", "--db", db_url])
    assert alpha.exit_code == 0
    assert [line.split("  ", 1)[1] for line in alpha.stdout.splitlines()] == [
        "audit #1  v1.0 (release, 2026-10-01T10:00:00Z)  license: MIT",
        "audit #2  v1.1 (release, 2026-10-02T10:00:00Z)  license: MIT",
    ]
    unknown = runner.invoke(cli, ["history", "Gamma", "--db", db_url])
    assert unknown.exit_code == 2
    assert unknown.output == "Error: unknown project 'Gamma'; known: Alpha, Beta\n"


# -- item 6: times are ISO dates, never epoch seconds -----------------------------------------

_TEN_DIGITS = re.compile(r"\b\d{10}\b")


def _epochs(text: str) -> list[str]:
    """10-digit numbers that read as a time within two years of now: epoch seconds."""
    now = datetime.now(UTC).timestamp()
    return [n for n in _TEN_DIGITS.findall(text) if abs(int(n) - now) < 2 * 366 * 86400]


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_times_in_notes_reports_and_logs_are_iso_dates(
    upstream: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log_format: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sources.yaml").write_text(
        "github: {concurrency: 1}\nprojects:\n  - name: Alpha\n    repo: org/alpha\n"
        "  - name: Beta\n    repo: org/beta\n"
    )
    upstream.set_rate_limit(4, authenticated=False)  # Alpha's three requests, Beta's repo
    result = CliRunner().invoke(cli, ["-v", "--log-format", log_format, "audit"])
    assert result.exit_code == 0, result.output
    report_dir = tmp_path / "reports" / "latest"
    report = json.loads((report_dir / "report.json").read_text())
    [beta] = [p for p in report["projects"] if p["status"] == "deferred"]
    reset = _reset_iso(upstream)
    assert beta["note"] == (
        "not checked this audit: rate budget nearly spent (0 left of 5000, 0 in flight, keeping "
        f"0 in reserve); resets at {reset}; never checked yet"
    )
    texts = {
        "note": beta["note"],
        "report.json": (report_dir / "report.json").read_text(),
        "report.md": (report_dir / "report.md").read_text(),
        "output and logs": result.output,
    }
    assert f"resets at {reset}" in texts["report.md"]
    assert {name: _epochs(text) for name, text in texts.items()} == {name: [] for name in texts}
