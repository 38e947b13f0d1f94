"""A plain ``pip install .`` (no extras) audits: graphql-core serves only the fake GitHub, so
it is the ``demo`` extra; ``crawler demo`` without it says how to get it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from crawler_fakes.github import FakeGitHub
from tests.support.ops import PROJECTS, TOKEN, upstream

# the command line in a child process where graphql-core cannot be imported
WITHOUT_GRAPHQL = "import sys; sys.modules['graphql'] = None; from crawler.cli import main; main()"


def _crawler(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN")}
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_GRAPHQL, *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_audit_runs_without_graphql_core(tmp_path: Path) -> None:
    (tmp_path / "sources.yaml").write_text(PROJECTS)
    with FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        run = _crawler(tmp_path, github.env(TOKEN), "audit", "--db", "sqlite:///c.sqlite")
        graphql_posts = [r for r in github.requests if r.path == "/graphql"]
    assert run.returncode == 0, run.stderr
    assert graphql_posts  # the GitHub source's batch path, spoken without graphql-core
    report = json.loads((tmp_path / "reports" / "latest" / "report.json").read_text())
    current = {p["name"]: (p["version"], p["license"]) for p in report["projects"]}
    assert current == {"Alpha": ("v1.0", "MIT"), "Beta": ("v2.0", "MIT")}
    assert report["summary"]["errors"] == 0


def test_demo_without_its_extra_says_how_to_install_it(tmp_path: Path) -> None:
    run = _crawler(tmp_path, {}, "demo", "--output", "out")
    assert run.returncode == 1
    assert "pip install 'crawler[demo]'" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "out").exists()  # nothing started, nothing written


def test_demo_without_the_fakes_says_how_to_install_it(tmp_path: Path) -> None:
    """An image built from ``crawler/`` alone (the Dockerfile) has no ``crawler_fakes``."""
    code = "import sys; sys.modules['crawler_fakes'] = None; from crawler.cli import main; main()"
    run = subprocess.run(
        [sys.executable, "-c", code, "demo", "--output", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1
    assert "pip install 'crawler[demo]'" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "out").exists()
