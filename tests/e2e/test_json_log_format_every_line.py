"""`--log-format json` means every line of every command, on stdout and stderr, is one JSON
object: the logs, the results (the summary, "wrote …", a report path), a command's `--json`
product (one object, under `data`), click's errors, and whatever else is printed. The audit's
last event carries its figures as fields.

Guards the defects where `crawler --log-format json demo` printed six plain lines on stdout,
where `export`, `ack`, `check`, `prune` and `history` printed plain lines beside the JSON, and
where the audit's counts were only inside the summary sentence. Runs the real command in a child
process (its real stdout and stderr), against the fake GitHub on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawler_fakes.github import FakeGitHub
from tests.support.ops import PROJECTS, TOKEN, upstream

KEYS = {"time", "level", "logger", "message"}


def _crawler(cwd: Path, env: dict[str, str], *args: str) -> tuple[int, list[dict[str, Any]],
                                                                 list[dict[str, Any]]]:  # fmt: skip
    """Run ``crawler --log-format json ARGS``: the exit status, then stdout's and stderr's
    objects (every line parsed: a line that is not one JSON object fails the test)."""
    ours = ("GITHUB_", "GH_", "CRAWLER_DB", "CRAWLER_LOG", "CRAWLER_CONFIG", "CRAWLER_NOTIFY")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    run = subprocess.run(
        [sys.executable, "-m", "crawler", "--log-format", "json", *args],
        cwd=cwd, env={**clean, **env}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    streams = []
    for name, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        objects = []
        for line in text.splitlines():
            try:
                parsed = json.loads(line)
            except ValueError:
                pytest.fail(f"{args}: a {name} line is not JSON: {line!r}")
            assert isinstance(parsed, dict), (args, name, line)
            assert set(parsed) >= KEYS, (args, name, line)
            objects.append(parsed)
        streams.append(objects)
    return run.returncode, streams[0], streams[1]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "sources.yaml").write_text(PROJECTS)
    return tmp_path


def test_every_line_of_every_command_is_one_json_object(workdir: Path) -> None:
    db = {"CRAWLER_DB_URL": f"sqlite:///{workdir / 'crawler.sqlite'}"}
    with FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        env = {**github.env(TOKEN), **db}
        code, _, _ = _crawler(workdir, env, "audit")
        assert code == 0
        github.set_state(upstream("v1.0", "v1.1"))
        code, out, err = _crawler(workdir, env, "audit", "--fail-on", "license_changed")
    assert code == 0
    # the summary, then the report's path: results on stdout
    finished, report = out
    assert finished["message"].startswith(
        "audit #2 complete: 1 change, 0 flags, 0 errors, 0 deferred; 1 new tonight, 1 pending "
        "since "
    )
    seconds = finished.pop("seconds")
    assert isinstance(seconds, float) and seconds > 0
    assert {k: v for k, v in finished.items() if k not in KEYS} == {
        "event": "audit_finished",
        "audit": 2,
        "status": "complete",
        "projects": 2,
        "projects_checked": 2,
        "projects_deferred": 0,
        "projects_stale": 0,
        "changes": 1,
        "changes_by_kind": {"new_release": 1},
        "flags": 0,
        "errors": 0,
        "requests": finished["requests_by_source"]["github"],
        "requests_by_source": {"github": finished["requests"]},
        "graphql_points": 1,
        "exit_code": 0,
        "report": report["message"].removeprefix("report: "),
    }
    assert finished["requests"] >= 1
    assert report["message"].startswith("report: reports/")
    assert [r["event"] for r in err if r.get("event") == "project_done"] == ["project_done"] * 2

    runs = {
        "export": ["export", "--out", "export"],
        "ack": ["ack", "alpha"],
        "check": ["check"],
        "prune": ["prune", "--keep-days", "30", "--dry-run"],
        "history": ["history", "Alpha"],
        "history --json": ["history", "Alpha", "--json"],
        "diff --json": ["diff", "1", "2", "--json"],
        "demo": ["demo", "--output", "demo-output"],
    }
    seen: dict[str, list[dict[str, Any]]] = {}
    for name, args in runs.items():
        code, out, err = _crawler(workdir, db, *args)
        assert code == 0, (name, out, err)
        assert out, name  # each says something on stdout, as one object a line
        seen[name] = out
    assert any(r["message"] == f"wrote {Path('export/catalog.json')}" for r in seen["export"])
    assert seen["ack"][0]["message"].startswith("acknowledged 1 pending change: Alpha new ")
    assert seen["check"][0]["message"].startswith("sources.yaml: ok: 2 projects")
    assert seen["prune"][-1]["message"] == "kept 2 audits (recent or still needed): #1, #2"
    assert seen["history"][-1]["message"].split("  ")[1:3] == ["audit #2", "v1.1 (release, "
                                                              "2026-10-02T00:00:00Z)"]  # fmt: skip
    [history] = seen["history --json"]  # the product is one object: its rows under "data"
    assert [row["version"] for row in history["data"]] == ["v1.0", "v1.1"]
    [changes] = seen["diff --json"]
    assert [c["kind"] for c in changes["data"]] == ["new_release"]
    assert [r["message"].split(":")[0] for r in seen["demo"]][:2] == ["demo report", "demo export"]

    # failures too: a run-time error, a mistyped command line
    code, out, err = _crawler(workdir, db, "history", "Nope")
    assert (code, out, [r["message"] for r in err]) == (
        2, [], ["unknown project 'Nope'; known: Alpha, Beta"]
    )  # fmt: skip
    code, out, err = _crawler(workdir, db, "ack", "--knd", "x")
    assert code == 2 and out == [] and err[0]["usage"].startswith("Usage: crawler ack")
