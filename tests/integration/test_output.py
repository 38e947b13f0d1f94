"""What a run writes: JSON lines for log collectors, --quiet for cron, progress, no secrets."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from crawler.cli import cli
from crawler.logs import Output, configure_output
from crawler.progress import LogProgress, RichProgress, make_progress
from crawler_fakes.github import FakeGitHub
from tests.support.ops import PROJECTS, TOKEN, closed_port, upstream

HOOK_SECRET = "hooksecret_0a9b8c7d6e5f"


@pytest.fixture
def workdir(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRAWLER_DB_URL", db_url)
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "CRAWLER_NOTIFY", "CRAWLER_LOG_FORMAT"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """configure_output sets process-wide levels: put them back for the other tests."""
    loggers = [logging.getLogger(n) for n in ("", "crawler", "crawler.result")]
    levels = [lg.level for lg in loggers]
    handlers = list(logging.getLogger().handlers)
    yield
    for lg, level in zip(loggers, levels, strict=True):
        lg.setLevel(level)
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)


def test_json_log_format_every_line_is_json_and_the_token_is_redacted(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = closed_port()
    (workdir / "sources.yaml").write_text("notify: {when: always}\n" + PROJECTS)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CRAWLER_NOTIFY", f"json://127.0.0.1:{port}/hook/{HOOK_SECRET}")
    with FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        result = CliRunner().invoke(cli, ["--log-format", "json", "-vv", "audit"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    records = [json.loads(line) for line in lines]  # raises on any line that is not JSON
    assert len(records) > 10  # -vv: the libraries' debug lines too, all as JSON
    assert all(set(r) >= {"time", "level", "logger", "message"} for r in records)
    summary = [r for r in records if r["logger"] == "crawler.result" and r["level"] == "info"]
    assert (summary[0]["message"], summary[0].get("event")) == (
        "audit #1 complete: 2 changes, 0 flags, 0 errors, 0 deferred",
        "audit_finished",
    )
    assert summary[1]["message"].startswith("report: reports/") and summary[1]["message"].endswith(
        "-audit1/report.md"
    )
    failed = [r for r in records if r["level"] == "error" and r["logger"] == "crawler.result"]
    assert [r["message"] for r in failed] == [
        f"notification json://127.0.0.1:{port}: "
        "A Connection error occurred sending JSON notification to 127.0.0.1."
    ]
    assert TOKEN not in result.output and HOOK_SECRET not in result.output
    assert records[0]["time"].endswith("Z")  # ISO 8601 UTC, never epoch seconds


def test_quiet_prints_only_errors_and_the_summary_line(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = closed_port()
    (workdir / "sources.yaml").write_text(
        f'notify: {{when: always, urls: ["json://127.0.0.1:{port}/x"]}}\n' + PROJECTS
    )
    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        loud = CliRunner().invoke(cli, ["audit"])
        quiet = CliRunner().invoke(cli, ["--quiet", "audit"])
    assert loud.exit_code == 0 and quiet.exit_code == 0, loud.output + quiet.output
    assert "warning: no GITHUB_TOKEN or GH_TOKEN" in loud.output  # not an error: quiet drops it
    assert "report: reports/" in loud.output
    assert quiet.output.splitlines() == [
        "audit #2 complete: 0 changes, 0 flags, 0 errors, 0 deferred",
        f"error: notification json://127.0.0.1:{port}: "
        "A Connection error occurred sending JSON notification to 127.0.0.1.",
    ]


def test_log_lines_carry_no_secret_whatever_logs_them() -> None:
    stream = io.StringIO()
    env = {"GITHUB_TOKEN": TOKEN, "CRAWLER_NOTIFY": "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkc/"}
    configure_output(0, False, "json", env, stream=stream)
    logging.getLogger("somelibrary").warning("sent Authorization: token %s", TOKEN)
    logging.getLogger("crawler.x").error("webhook slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkc/ down")
    try:
        raise RuntimeError(f"boom {TOKEN}")
    except RuntimeError:
        logging.getLogger("crawler.y").exception("failed")
    first, second, third = (json.loads(line) for line in stream.getvalue().splitlines())
    assert (first["level"], first["message"]) == ("warning", "sent Authorization: token ***")
    assert second["message"] == "webhook slack://***/***/***/ down"
    assert third["message"] == "failed" and "boom ***" in third["exception"]
    assert TOKEN not in stream.getvalue()


def test_plain_progress_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    output = configure_output(0, False, "json", {}, stream=stream)
    progress = make_progress(output)
    assert isinstance(progress, LogProgress)
    progress.start(2)
    progress.project_done("Alpha", "ok", 3, 4990)
    progress.project_done("Beta", "error", 1, None)
    progress.finish("audit #1 partial: 0 changes, 0 flags, 1 errors, 0 deferred")
    records: list[dict[str, Any]] = [json.loads(x) for x in stream.getvalue().splitlines()]
    assert [r["message"] for r in records] == [
        "auditing 2 projects",
        "[1/2] Alpha: ok, 3 requests, rate budget left 4990",
        "[2/2] Beta: error, 1 request, rate budget left unknown",
        "audit #1 partial: 0 changes, 0 flags, 1 errors, 0 deferred",
    ]
    assert {k: records[1][k] for k in ("project", "status", "requests", "budget_left")} == {
        "project": "Alpha",
        "status": "ok",
        "requests": 3,
        "budget_left": 4990,
    }


def test_rich_progress_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100, color_system=None)
    progress = RichProgress(Output(terminal=True), console=console)
    progress.start(2)
    progress.project_done("Alpha [x]", "ok", 3, 4990)
    progress.project_done("Beta", "deferred", 0, 4987)
    progress.finish("audit #1 complete: 1 changes, 0 flags, 0 errors, 1 deferred")
    shown = screen.getvalue()
    assert "✓ Alpha [x]: ok, 3 requests" in shown  # markup in a name is shown, not interpreted
    assert "– Beta: deferred, 0 requests" in shown
    assert "2/2 3 requests, rate budget left 4987" in shown
    printed = capsys.readouterr().out
    assert printed == "audit #1 complete: 1 changes, 0 flags, 0 errors, 1 deferred\n"


# -- issue 38 item 12: PyGithub's own handler; click's error lines and tracebacks in JSON -----


def _crawler(workdir: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``python -m crawler ARGS`` in a child (a fresh import of PyGithub, the real main())."""
    import os
    import subprocess
    import sys

    base = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN")}
    run = subprocess.run(
        [sys.executable, "-m", "crawler", *args], cwd=workdir, env={**base, **(env or {})},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return run.returncode, run.stderr


def _moved() -> Any:
    """org/alpha renamed to org/alpha2: GitHub answers the old name with a 301, which PyGithub
    follows and logs ('Following Github server redirection …')."""
    state = upstream("v1.0")
    state.repos[0].moved_to = "org/alpha2"
    return state


def test_pygithubs_own_handler_writes_nothing_beside_our_json_lines(workdir: Path) -> None:
    (workdir / "sources.yaml").write_text(PROJECTS)
    with FakeGitHub(_moved(), unauth_limit=5000) as server:
        code, stderr = _crawler(
            workdir, "--log-format", "json", "-vv", "audit", env={"GITHUB_API_URL": server.base_url}
        )
    assert code == 0, stderr[-3000:]
    records = [json.loads(line) for line in stderr.splitlines()]  # every line is JSON
    followed = [r for r in records if "Following Github server redirection" in r["message"]]
    assert [(r["level"], r["logger"]) for r in followed] == [("info", "github.Requester")]


def test_pygithubs_lines_are_ours_once_and_only_when_asked(workdir: Path) -> None:
    """In text mode each such line was printed twice: bare by PyGithub's handler, then ours."""
    (workdir / "sources.yaml").write_text(PROJECTS)
    with FakeGitHub(_moved(), unauth_limit=5000) as server:
        env = {"GITHUB_API_URL": server.base_url}
        code, loud = _crawler(workdir, "-vv", "audit", env=env)
        assert code == 0, loud[-3000:]
        code, default = _crawler(workdir, "audit", env=env)
    lines = [line for line in loud.splitlines() if "Following Github server redirection" in line]
    assert len(lines) == 1 and " INFO github.Requester: Following Github" in lines[0], lines
    assert "Following Github" not in default  # PyGithub's INFO is not shown by default


def test_clicks_error_lines_are_json_under_the_json_format(workdir: Path) -> None:
    code, stderr = _crawler(workdir, "--log-format", "json", "audit", "--bogus")
    assert code == 2
    [record] = [json.loads(line) for line in stderr.splitlines()]
    assert (record["level"], record["message"], record["usage"]) == (
        "error", "No such option '--bogus'.", "Usage: crawler audit [OPTIONS]"
    )  # fmt: skip
    code, stderr = _crawler(workdir, "audit", "--config", "missing.yaml",
                            env={"CRAWLER_LOG_FORMAT": "json"})  # fmt: skip
    assert code == 2
    [record] = [json.loads(line) for line in stderr.splitlines()]
    assert record["message"] == "missing.yaml: file not found: pass --config PATH"


def test_a_traceback_is_one_json_object_under_the_json_format(
    workdir: Path, db_url: str
) -> None:
    """A damaged database (an audit's stats that are not JSON) makes `crawler diff` fail
    unexpectedly: its traceback comes as one JSON object, not as bare lines."""
    from sqlalchemy import text

    from crawler.store import Store

    (workdir / "sources.yaml").write_text(PROJECTS)
    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
        env = {"GITHUB_API_URL": server.base_url, "CRAWLER_DB_URL": db_url}
        assert _crawler(workdir, "audit", env=env)[0] == 0
        assert _crawler(workdir, "audit", env=env)[0] == 0
    store = Store(db_url)
    with store.engine.begin() as conn:
        conn.execute(text("update audits set stats = '{' where id = 1"))
    store.close()
    code, stderr = _crawler(workdir, "--log-format", "json", "diff", "1", "2", env=env)
    assert code == 1
    [record] = [json.loads(line) for line in stderr.splitlines()]
    assert record["level"] == "critical"
    assert record["message"].startswith("unexpected error: JSONDecodeError: ")
    assert record["exception"].startswith("Traceback (most recent call last):")
