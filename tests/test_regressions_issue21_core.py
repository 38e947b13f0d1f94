"""Issue 21, items 1-6: a partial GitHub answer, oversize answers, a stalled or failing
database, a regex that explodes at compile time, redirects to private addresses.

Every test here failed on the main branch the issue was filed against."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from crawler.cli import cli
from crawler.fakes.github import FakeGitHub, FaultPlan, FaultRule, GitHubState
from tests.regression_support import APACHE, repo

TOKEN = "ghp_issue21core0000000000000000000000000"
THREE = (
    "projects:\n"
    "  - name: Alpha\n    repo: org/alpha\n"
    "  - name: Beta\n    repo: org/beta\n"
    "  - name: Gamma\n    repo: org/gamma\n"
)


def _state() -> GitHubState:
    return GitHubState(
        repos=[
            repo("alpha", 1, ("v1.0", "v1.1")),
            repo("beta", 2, ("v2.0",)),
            repo("gamma", 3, ("v3.0", "v3.1"), license_text=APACHE),
        ]
    )


def _audit(
    tmp_path: Path,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    state: GitHubState,
    faults: FaultPlan | None = None,
) -> tuple[Result, dict[str, Any]]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sources.yaml").write_text(THREE)
    with FakeGitHub(state, token=TOKEN, faults=faults) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.delenv("CRAWLER_NOTIFY", raising=False)
        result = CliRunner().invoke(cli, ["audit", "--db", db_url], catch_exceptions=False)
    report = json.loads((tmp_path / "reports" / "latest" / "report.json").read_text())
    return result, report


def _changes(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["project"], c["kind"]) for c in report["changes"]]


# -- item 1: a partial GraphQL answer ------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("releases", None, "(at r0.releases)"),  # GitHub's partial answer: field null + path
        ("releases.nodes", None, "(at r0.releases.nodes)"),
        ("refs", None, "(at r0.refs)"),
        ("licenseInfo", "MIT", "licenseInfo"),  # a wrong type: no error, a bad shape
        ("releases.nodes", [None], "releases.nodes"),
    ],
)
def test_a_partial_graphql_answer_is_an_error_never_a_change(
    tmp_path: Path,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    field: str,
    value: object,
    why: str,
) -> None:
    state = _state()
    first, baseline = _audit(tmp_path, db_url, monkeypatch, state)
    assert first.exit_code == 0, first.output
    assert baseline["errors"] == []

    rule = FaultRule("graphql_partial", path="/graphql", times=999, field=field, value=value)
    result, report = _audit(tmp_path, db_url, monkeypatch, state, FaultPlan(rules=[rule]))
    assert rule.fired >= 1
    assert result.exit_code == 1
    assert _changes(report) == []  # no release_removed, no license_changed, no tag removed
    errors = {e["project"]: e["error"] for e in report["errors"]}
    assert sorted(errors) == ["Alpha", "Beta", "Gamma"]
    assert why in errors["Alpha"]
    statuses = {p["name"]: p["status"] for p in report["projects"]}
    assert statuses == {"Alpha": "error", "Beta": "error", "Gamma": "error"}
    versions = {p["name"]: (p["version"], p["forge_license"]) for p in report["projects"]}
    assert versions == {
        "Alpha": ("v1.1", "MIT"),
        "Beta": ("v2.0", "MIT"),
        "Gamma": ("v3.1", "Apache-2.0"),
    }  # the last good facts, carried

    good, after = _audit(tmp_path, db_url, monkeypatch, state)
    assert good.exit_code == 0, good.output
    assert (_changes(after), after["errors"]) == ([], [])  # nothing "new" the night after


def test_a_repository_answered_in_part_is_asked_again_alone(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch, graphql_sizes: list[int]
) -> None:
    """One repository's releases failed once (not a timeout): only it is asked again, alone,
    and the second answer is whole: no error, no change."""
    state = _state()
    first, _ = _audit(tmp_path, db_url, monkeypatch, state)
    assert first.exit_code == 0, first.output
    rule = FaultRule("graphql_partial", path="/graphql", alias="r1", message="Loading failed")
    graphql_sizes.clear()
    result, report = _audit(tmp_path, db_url, monkeypatch, state, FaultPlan(rules=[rule]))
    assert graphql_sizes[:2] == [3, 1]  # the batch, then Beta alone
    assert rule.fired == 1
    assert result.exit_code == 0, result.output
    assert (_changes(report), report["errors"]) == ([], [])


# -- item 2: a size limit on every API answer ------------------------------------------------

# Run in a child: its own peak memory is the measure, and an address-space cap keeps a
# regression from taking the machine's memory (it fails with MemoryError instead).
_CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
from crawler.cli import cli
try:
    cli(["audit", "--db", sys.argv[1]], prog_name="crawler")
except SystemExit as exc:
    code = exc.code
finally:
    print("maxrss_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""
_SOURCES = {
    "pypi": "pypi: {max_retries: 0}\nprojects:\n  - name: Alpha\n    repo: org/alpha\n"
    "    pypi: alpha-pkg\n",
    "gitlab": "gitlab: {max_retries: 0}\nprojects:\n  - name: Alpha\n    gitlab: acme/alpha\n",
    "gitee": "gitee: {max_retries: 0}\nprojects:\n  - name: Alpha\n    gitee: acme/alpha\n",
    "github": "github: {max_retries: 0}\nprojects:\n  - name: Alpha\n    repo: org/alpha\n",
    "github-graphql": "github: {max_retries: 0}\nprojects:\n  - name: Alpha\n    repo: org/alpha\n",
}
_MESSAGES = {
    "oversize": "answer is larger than the answer size limit of {limit} bytes once decompressed",
    "gzip_bomb": "answer is larger than the answer size limit of {limit} bytes once decompressed",
}


@contextmanager
def _fakes(source: str, plan: FaultPlan) -> Iterator[dict[str, str]]:
    """One project, Alpha, on ``source`` (``github-graphql``: GitHub with a token), every fake
    running and ``plan`` on that source's; yields the environment that points at them."""
    from crawler.fakes.gitee import FakeGitee
    from crawler.fakes.gitee_state import GiteeRepo, GiteeState
    from crawler.fakes.gitlab import FakeGitLab
    from crawler.fakes.gitlab_state import GitLabProject, GitLabState
    from crawler.fakes.pypi import FakePackage, FakePyPI, FakeVersion, PyPIState

    head = "ab" * 20
    github = FakeGitHub(
        GitHubState(repos=[repo("alpha", 1, ("v1.0",))]),
        token=TOKEN,
        faults=plan if source.startswith("github") else None,
    )
    pypi = FakePyPI(
        PyPIState([FakePackage("alpha-pkg", [FakeVersion("1.0", "2026-10-01T00:00:00Z")])]),
        faults=plan if source == "pypi" else None,
    )
    gitlab = FakeGitLab(
        GitLabState([GitLabProject("acme/alpha", 7, head_sha=head, head_date="2026-10-01")]),
        faults=plan if source == "gitlab" else None,
    )
    gitee = FakeGitee(
        GiteeState([GiteeRepo("acme", "alpha", 8, head_sha=head, head_date="2026-10-01")]),
        faults=plan if source == "gitee" else None,
    )
    with github, pypi, gitlab, gitee:
        env = {**github.env(), **pypi.env(), **gitlab.env(), **gitee.env()}
        if source == "github-graphql":
            env["GITHUB_TOKEN"] = TOKEN
        yield env


def _fault_path(source: str) -> str:
    return {"pypi": "/pypi/", "gitlab": "/projects/", "github-graphql": "/graphql"}.get(
        source, "/repos/"
    )


@pytest.mark.parametrize("kind", ["oversize", "gzip_bomb"])
@pytest.mark.parametrize("source", list(_SOURCES))
def test_an_oversize_or_gzip_bomb_answer_is_an_error_of_that_project(
    tmp_path: Path, source: str, kind: str
) -> None:
    """A 300 MiB answer (streamed, no Content-Length) or a 2 MiB gzip body that decompresses
    to 2 GiB: the project gets an error naming the limit, the audit finishes, and the child's
    peak memory stays far below the answer's size."""
    size = 2 * 2**30 if kind == "gzip_bomb" else 300 * 2**20
    rule = FaultRule(kind, path=_fault_path(source), times=99, size=size)  # type: ignore[arg-type]
    (tmp_path / "sources.yaml").write_text(_SOURCES[source])
    with _fakes(source, FaultPlan(rules=[rule])) as fakes:
        unset = ("GITHUB_TOKEN", "GH_TOKEN", "CRAWLER_NOTIFY")
        env = {k: v for k, v in os.environ.items() if k not in unset}
        child = subprocess.run(
            [sys.executable, "-c", _CHILD, f"sqlite:///{tmp_path / 'crawler.sqlite'}"],
            cwd=tmp_path,
            env={**env, **fakes},
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert rule.fired >= 1
    assert child.returncode == 1, child.stderr[-3000:]
    report = json.loads((tmp_path / "reports" / "latest" / "report.json").read_text())
    limit = 32 * 2**20 if source in ("gitlab", "gitee") else 64 * 2**20
    [error] = report["errors"]
    assert error["project"] == "Alpha"
    assert _MESSAGES[kind].format(limit=limit) in error["error"]
    peak = int(child.stderr.rsplit("maxrss_kib", 1)[1].split()[0]) * 1024
    print(f"peak RSS, {source} {kind}: {peak / 2**20:.0f} MiB")
    assert peak < 400 * 2**20, f"peak RSS {peak / 2**20:.0f} MiB"


# -- item 5: redirects to private addresses ---------------------------------------------------


class _Metadata(BaseHTTPRequestHandler):
    """What a cloud metadata service would answer, on a private address (127.0.0.2)."""

    def do_GET(self) -> None:
        body = b'{"message": "AccessKeyId ASIAMETADATASECRET"}'
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize("source", ["pypi", "gitlab", "gitee", "github"])
def test_a_redirect_to_a_private_address_is_refused_and_its_body_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    metadata = ThreadingHTTPServer(("127.0.0.2", 0), _Metadata)
    thread = threading.Thread(target=metadata.serve_forever, daemon=True)
    thread.start()
    target = f"http://127.0.0.2:{metadata.server_address[1]}/latest/meta-data/iam"
    rule = FaultRule("redirect", path=_fault_path(source), times=99, location=target)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sources.yaml").write_text(_SOURCES[source])
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("CRAWLER_NOTIFY", raising=False)
    monkeypatch.delenv("CRAWLER_ALLOW_PRIVATE_ADDRESSES", raising=False)
    try:
        with _fakes(source, FaultPlan(rules=[rule])) as fakes:
            for name, value in fakes.items():
                monkeypatch.setenv(name, value)
            db = f"sqlite:///{tmp_path / 'crawler.sqlite'}"
            result = CliRunner().invoke(cli, ["audit", "--db", db], catch_exceptions=False)
    finally:
        metadata.shutdown()
        metadata.server_close()
    assert rule.fired >= 1
    assert result.exit_code == 1, result.output
    report_files = sorted((tmp_path / "reports").rglob("*.*"))
    written = "".join(p.read_text() for p in report_files if p.is_file()) + result.output
    assert "ASIAMETADATASECRET" not in written
    report = json.loads((tmp_path / "reports" / "latest" / "report.json").read_text())
    [error] = report["errors"]
    assert error["project"] == "Alpha"
    if source != "github":  # PyGithub refuses a redirect to another host itself
        assert "redirected to a refused address" in error["error"]
        assert "127.0.0.2" in error["error"] and "a loopback address" in error["error"]


# -- item 4: a user regex that explodes while it is compiled -----------------------------------

_EXPLODING = "(?:(?:(?:a{1000}){1000}){1000}){1000}"
_CHECK = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))  # a regression fails, not the machine
from crawler.cli import cli
cli(["audit", "--config", sys.argv[1], "--db", sys.argv[2]], prog_name="crawler")
"""


@pytest.mark.parametrize(
    ("where", "yaml", "line", "key"),
    [
        ("tag_pattern", f"    tag_pattern: '{_EXPLODING}'\n", 2, "tag_pattern: tag_pattern"),
        (
            "pin",
            "    pages:\n      - name: Docs\n        url: https://docs.example/x\n"
            f"        pins:\n          sdk: '({_EXPLODING})'\n",
            2,
            "pages.0.pins: pin 'sdk'",
        ),
    ],
)
def test_a_pattern_too_large_to_compile_is_a_configuration_error(
    tmp_path: Path, where: str, yaml: str, line: int, key: str
) -> None:
    """Compiled, the pattern would need far more memory than the child may use (1 GiB): it is
    refused before compiling, exit 2, with the file, line and key."""
    config = tmp_path / "sources.yaml"
    config.write_text("projects:\n  - name: a\n    repo: o/r\n" + yaml)
    child = subprocess.run(
        [sys.executable, "-c", _CHECK, str(config), f"sqlite:///{tmp_path / 'c.sqlite'}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 2, child.stderr[-2000:]
    assert "Traceback" not in child.stderr
    assert f"sources.yaml:{line}: project 'a': {key}" in child.stderr
    assert "repeats too much" in child.stderr and "more than 100,000 characters" in child.stderr


def test_ordinary_patterns_stay_far_below_the_compile_size_limit() -> None:
    from crawler.patterns import MAX_EXPANDED_SIZE, compile_pattern, expanded_size

    usual = [r"^v\d+\.\d+\.\d+$", r"[0-9]{1,3}", r"\p{L}{2}x", r"(?P<v>\d{4}\.\d{2})", r"[]{]{5}"]
    assert [expanded_size(p) for p in usual] == [6, 3, 3, 11, 5]
    assert expanded_size("a{65535}") == 65535 < MAX_EXPANDED_SIZE  # one long count is fine
    assert compile_pattern("a{65535}").match("a" * 65535) is not None
    assert expanded_size("(?:a{1000}){1000}") > MAX_EXPANDED_SIZE
    with pytest.raises(ValueError, match="repeats too much"):
        compile_pattern("(?:x{400}){400}")
