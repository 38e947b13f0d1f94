"""Issue 21, items 1-6: a partial GitHub answer, oversize answers, a stalled or failing
database, a regex that explodes at compile time, redirects to private addresses.

Every test here failed on the main branch the issue was filed against."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from crawler.cli import cli
from crawler_fakes.github import FakeGitHub, FaultPlan, FaultRule, GitHubState
from tests.support.audits import kinds
from tests.support.file_limits import crawler_limited
from tests.support.regression import APACHE, repo

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
    assert kinds(report) == []  # no release_removed, no license_changed, no tag removed
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
    assert (kinds(after), after["errors"]) == ([], [])  # nothing "new" the night after


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
    assert (kinds(report), report["errors"]) == ([], [])


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
finally:  # VmHWM: this process's own peak (ru_maxrss would include the forking parent's)
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    print("maxrss_kib", peak, file=sys.stderr)
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
    from crawler_fakes.gitee import FakeGitee
    from crawler_fakes.gitee_state import GiteeRepo, GiteeState
    from crawler_fakes.gitlab import FakeGitLab
    from crawler_fakes.gitlab_state import GitLabProject, GitLabState
    from crawler_fakes.pypi import FakePackage, FakePyPI, FakeVersion, PyPIState

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


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory from /proc")
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
        ("tag_pattern", f"    tag_pattern: '{_EXPLODING}'\n", 4, "tag_pattern"),
        (
            "pin",
            "    pages:\n      - name: Docs\n        url: https://docs.example/x\n"
            f"        pins:\n          sdk: '({_EXPLODING})'\n",
            8,
            "page 'Docs': pin 'sdk'",
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


# -- items 3 and 6: a database that stops answering, or fails, in the middle of an audit --------


class _PgProxy:
    """A loopback TCP proxy in front of the real PostgreSQL. ``stall()``: it stops forwarding
    (connections stay open, nothing passes, new ones hear nothing); ``resume()``: what was held
    passes again. ``cut()``: every connection is reset; with ``refuse=True`` new ones too,
    until ``resume()``."""

    def __init__(self, port: int = 5432) -> None:
        self._upstream = ("127.0.0.1", port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._flowing = threading.Event()
        self._flowing.set()
        self._refusing = False
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._refusing:
                _reset(client)
                continue
            server = socket.create_connection(self._upstream)
            with self._lock:
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                self._flowing.wait()
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def stall(self) -> None:
        self._flowing.clear()

    def cut(self, *, refuse: bool) -> None:
        self._refusing = refuse
        with self._lock:
            held, self._open = self._open, []
        for sock in held:
            _reset(sock)

    def resume(self) -> None:
        self._refusing = False
        self._flowing.set()

    def close(self) -> None:
        self.resume()
        self._listener.close()
        self.cut(refuse=False)


def _reset(sock: socket.socket) -> None:
    """Close at once (a thread blocked reading it wakes up: a plain close would not)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


@pytest.fixture
def pg_schema(pg_available: bool) -> Iterator[str]:
    """A fresh schema on the real PostgreSQL; yields the database URL's query part for it."""
    from sqlalchemy import create_engine, text

    from tests.conftest import PG_URL

    if not pg_available or "127.0.0.1:5432" not in PG_URL:
        pytest.skip("PostgreSQL not reachable at 127.0.0.1:5432")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    yield f"options=-csearch_path%3D{schema}"
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


def _pg_url(query: str, port: int = 5432) -> str:
    return f"postgresql+psycopg://postgres@127.0.0.1:{port}/test?{query}"


def _child_audit(
    tmp_path: Path, db_url: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    unset = ("GITHUB_TOKEN", "GH_TOKEN", "CRAWLER_NOTIFY")
    base = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "-m", "crawler.cli", "audit", "--db", db_url],
        cwd=tmp_path,
        env={**base, **env, "CRAWLER_DB_TIMEOUT": "1"},
        capture_output=True,
        text=True,
        timeout=120,  # on the main branch a stalled database hung here for ever
    )


def _when_fired(rule: FaultRule, action: Callable[[], None]) -> threading.Thread:
    """Run ``action`` once ``rule`` has fired (the audit is then in the middle of its work)."""

    def watch() -> None:
        while rule.fired == 0:
            threading.Event().wait(0.01)
        action()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("failure", ["stall", "down", "blip"])
def test_a_database_that_fails_mid_audit_ends_it_failed_with_one_clear_message(
    tmp_path: Path, pg_schema: str, failure: str
) -> None:
    """The database stops answering (stall), goes away (down), or drops its connections once
    (blip) while GitHub is being read: the audit ends with one message naming the database,
    exit 1, no traceback, no SQL, no project blamed on GitHub; the lock is released and the
    next audit finds the first night's state intact (nothing 'new')."""
    from sqlalchemy import create_engine, text

    from crawler.store.migration_guard import advisory_key

    (tmp_path / "sources.yaml").write_text(THREE)
    direct = _pg_url(pg_schema)
    rule = FaultRule("delay", path=r"^/repos/org/beta$", delay=0.3)
    proxy = _PgProxy()
    try:
        with FakeGitHub(_state(), faults=FaultPlan(rules=[rule])) as server:
            rule.fired = rule.times  # the first night is not disturbed
            first = _child_audit(tmp_path, direct, server.env())
            assert first.returncode == 0, first.stderr[-3000:]
            rule.fired = 0
            action = {
                "stall": proxy.stall,
                "down": lambda: proxy.cut(refuse=True),
                "blip": lambda: proxy.cut(refuse=False),
            }[failure]
            _when_fired(rule, action)
            second = _child_audit(tmp_path, _pg_url(pg_schema, proxy.port), server.env())
            proxy.resume()  # the database is back
            assert rule.fired == 1
            err = second.stderr
            assert second.returncode == 1, err[-3000:]
            assert "Traceback" not in err and "[SQL" not in err and "SELECT" not in err.upper()
            assert "GitHub project" not in err
            [message] = [line for line in err.splitlines() if line.startswith("error: ")]
            assert message.startswith("error: audit #2 failed: the database failed while ")
            recorded = "It is recorded as failed" in message
            assert recorded == (failure == "blip"), message
            assert message.endswith("Nothing was delivered; the next audit reports these "
                                    "findings again.")  # fmt: skip

            engine = create_engine(direct)
            try:
                for _ in range(100):  # the stalled session ends once what it held passes
                    with engine.connect() as conn:
                        key = advisory_key(conn, "audit")
                        held = conn.scalar(
                            text("select count(*) from pg_locks where locktype = 'advisory'"
                                 " and classid::bigint = :hi and objid::bigint = :lo"),
                            {"hi": (key >> 32) & 0xFFFFFFFF, "lo": key & 0xFFFFFFFF},
                        )  # fmt: skip
                    if not held:
                        break
                    threading.Event().wait(0.1)
                assert not held, "the audit lock is still held"
                with engine.connect() as conn:
                    rows = conn.execute(text("select id, status from audits order by id")).all()
            finally:
                engine.dispose()
            second_status = "failed" if failure == "blip" else "running"
            assert [tuple(r) for r in rows] == [(1, "complete"), (2, second_status)]

            third = _child_audit(tmp_path, direct, server.env())
    finally:
        proxy.close()
    assert third.returncode == 0, third.stderr[-3000:]
    report = json.loads((tmp_path / "reports" / "latest" / "report.json").read_text())
    assert (report["audit"]["baseline_audit_id"], kinds(report), report["errors"]) == (
        1,
        [],
        [],
    )


def test_a_sqlite_failure_mid_audit_is_the_stores_error(tmp_path: Path) -> None:
    """SQLite: the cache table disappears while GitHub is read (another program broke the
    file): one message naming the database, exit 1, nothing blamed on GitHub, the audit
    recorded as failed, the lock row cleared."""
    import sqlite3

    (tmp_path / "sources.yaml").write_text(THREE)
    path = tmp_path / "crawler.sqlite"
    rule = FaultRule("delay", path=r"^/repos/org/beta$", delay=0.3)

    def break_cache() -> None:
        with contextlib.closing(sqlite3.connect(path, timeout=10)) as conn:
            conn.execute("drop table http_cache")
            conn.commit()

    with FakeGitHub(_state(), faults=FaultPlan(rules=[rule])) as server:
        rule.fired = rule.times
        first = _child_audit(tmp_path, f"sqlite:///{path}", server.env())
        assert first.returncode == 0, first.stderr[-3000:]
        rule.fired = 0
        _when_fired(rule, break_cache)
        second = _child_audit(tmp_path, f"sqlite:///{path}", server.env())
    err = second.stderr
    assert second.returncode == 1, err[-3000:]
    assert "Traceback" not in err and "[SQL" not in err and "GitHub project" not in err
    [message] = [line for line in err.splitlines() if line.startswith("error: ")]
    doing = "reading" if "while reading" in message else "writing"  # whichever came first
    assert message == (
        f"error: audit #2 failed: the database failed while {doing} the HTTP cache: no such "
        "table: http_cache. It is recorded as failed, with what it had fetched. Nothing was "
        "delivered; the next audit reports these findings again."
    )
    with contextlib.closing(sqlite3.connect(path)) as conn:
        audits = conn.execute("select id, status from audits order by id").fetchall()
        locks = conn.execute("select count(*) from audit_lock").fetchone()
    assert (audits, locks) == ([(1, "complete"), (2, "failed")], (0,))




def test_a_full_database_disk_when_the_lock_is_taken_is_one_line(tmp_path: Path) -> None:
    """Issue 38 item 10: the database's disk full as the audit lock is taken printed a 68-line
    SQLAlchemy traceback; mid-audit the same failure is one line. The disk is full for real:
    the child may write no file past 4 KB (RLIMIT_FSIZE), and the lock row is SQLite's first
    write (its write-ahead log kept open, as by another reader, so nothing is written at
    opening)."""
    import sqlite3

    (tmp_path / "sources.yaml").write_text(THREE)
    path = tmp_path / "crawler.sqlite"
    with FakeGitHub(_state()) as server:
        first = _child_audit(tmp_path, f"sqlite:///{path}", server.env())
        assert first.returncode == 0, first.stderr[-3000:]
        with contextlib.closing(sqlite3.connect(path)) as reader:
            reader.execute("pragma journal_mode").fetchall()  # the WAL and its index stay
            second = crawler_limited(
                4096, "full", ["audit", "--db", f"sqlite:///{path}"], cwd=tmp_path,
                env={**os.environ, **server.env()},
            )
    err = second.stderr
    assert second.returncode == 1, err[-3000:]
    assert "Traceback" not in err and "[SQL" not in err and "INSERT" not in err.upper()
    [message] = [line for line in err.splitlines() if line.startswith("error: ")]
    # SQLite says a write the file size limit cut short (EFBIG) is an I/O error; ENOSPC on a
    # full disk reads "database or disk is full": the same one line either way
    assert message == (
        "error: the database failed while taking the audit lock: disk I/O error. "
        "No audit was started: nothing was fetched or recorded."
    )
    with contextlib.closing(sqlite3.connect(path)) as conn:
        audits = conn.execute("select id, status from audits order by id").fetchall()
        locks = conn.execute("select count(*) from audit_lock").fetchone()
    assert (audits, locks) == ([(1, "complete")], (0,))
