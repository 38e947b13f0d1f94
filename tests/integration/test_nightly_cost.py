"""What keeps the nightly audit cheap, checked by behaviour (requests sent, modules loaded),
never by the clock: the timings are in bench/audit_budget.py.

Every audit talks to ``FakeGitHub`` over loopback and writes to a real database.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import AuditOutcome, run_audit
from crawler.config import Config, parse_config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler.store.migration_guard import HEAD_REVISION, code_head
from crawler_fakes.github import (
    FakeGitHub,
    FakeRelease,
    FakeRepo,
    FakeTag,
    FaultPlan,
    FaultRule,
    GitHubState,
)
from tests.support import ROOT
from tests.support.audits import github_config

TOKEN = "ghp_nightly_cost_token_8d2e4f6a1b3c5d7e9f0a"
# Loaded only for what needs them (pages, notifications, the scheduler, migrations, a terminal
# display, schema checks, GitHub REST requests through PyGithub, which brings JWT, cryptography
# and NaCl with it, user patterns through ``regex``, compiled only where a project or page has
# one; the JSON API client of the sources that are not GitHub, whose kinds register with its
# settings model only): an unchanged GitHub night with a token needs none of them.
HEAVY = ("alembic", "apprise", "apscheduler", "bs4", "cryptography", "github", "httpx",
         "jsonschema", "jwt", "lxml", "markdown_it", "nacl", "regex", "rich",
         "crawler.upstream.json_api")  # fmt: skip


def _stamp(day: int) -> str:
    return f"2026-10-{day:02d}T10:00:00Z"


def _repo(index: int, *, license_text: str, tags: int = 0, releases: int = 1) -> FakeRepo:
    repo = FakeRepo(
        owner="org", name=f"p{index}", id=700 + index,
        license_key="mit", spdx_id="MIT", license_name="MIT License", license_path="LICENSE",
        license_text=license_text, head_sha=f"{index:x}" * 40, head_date=_stamp(20),
        tree=[("src/main.py", "5" * 40)],
    )  # fmt: skip
    for day in range(1, releases + 1):
        tag = f"v{index}.{day}.0"
        repo.releases.append(FakeRelease(tag=tag, name=tag, published_at=_stamp(day),
                                         created_at=_stamp(day)))  # fmt: skip
    for day in range(1, tags + 1):
        repo.tags.append(FakeTag(f"t{index}.{day}", f"{index:x}{day:x}" * 20, _stamp(day)))
    return repo


class Nights:
    """One database, one fake GitHub; ``audit()`` runs one audit in this process."""

    def __init__(self, server: FakeGitHub, db_url: str, reports: Path, token: str | None) -> None:
        self.server = server
        self.store = Store(db_url)
        self.reports = reports
        self.env = server.env(token)

    def audit(self, config: Config) -> AuditOutcome:
        self.server.reset_log()
        outcome = run_audit(config, self.store, self.reports, env=self.env, sleep=lambda _s: None)
        validate_report(outcome.report.as_json())
        return outcome

    def paths(self) -> list[str]:
        return [r.path for r in self.server.requests if r.path != "/rate_limit"]


@pytest.fixture
def nights(db_url: str, tmp_path: Path) -> Iterator[Any]:
    opened: list[Nights] = []

    def make(state: GitHubState, token: str | None, **options: Any) -> Nights:
        server = FakeGitHub(state, token=TOKEN, **options).start()
        made = Nights(server, db_url, tmp_path / "reports", token)
        opened.append(made)
        return made

    yield make
    for made in opened:
        made.store.close()
        made.server.stop()


def _projects(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in report["projects"]}


# ------------------------------------------------------------------------------ requests


def test_a_license_blob_shared_by_many_repositories_is_read_once(
    nights: Any, graphql_sizes: list[int]
) -> None:
    """Git names a blob by its content: five repositories with the same LICENSE blob cost one
    text in one query, and every one of them gets the text and its analysis."""
    shared = reference_text("MIT", "2026 Shared Authors")
    own = reference_text("MIT", "2026 Someone Else")
    state = GitHubState([_repo(i, license_text=shared) for i in range(5)]
                        + [_repo(5, license_text=own)])  # fmt: skip
    night = nights(state, TOKEN)
    outcome = night.audit(github_config(6))
    assert graphql_sizes == [6, 2]  # the facts of six repositories, then two distinct texts
    projects = _projects(outcome.report.as_json())
    assert {name: (p["license"], p["detected_license"]) for name, p in projects.items()} == {
        f"p{i}": ("MIT", "MIT") for i in range(6)
    }
    stored = night.store.states_as_of(outcome.audit_id, include_own=True)
    texts = {name: state.snapshot.license_file.text for name, state in stored.items()}  # type: ignore[union-attr]
    assert texts == {**{f"p{i}": shared for i in range(5)}, "p5": own}


def test_an_unchanged_tag_is_not_dated_again(nights: Any) -> None:
    """Without a token, REST tags carry no date: the newest tag's commit is looked up once;
    a later audit that finds the same tag on the same commit keeps that date (a commit's
    date never changes) instead of asking again. A new tag is looked up."""
    state = GitHubState([_repo(0, license_text=reference_text("MIT"), tags=2, releases=0)])
    night = nights(state, None, unauth_limit=1000)
    first = night.audit(github_config(1))
    newest_sha = "02" * 20
    assert f"/repos/org/p0/commits/{newest_sha}" in night.paths()
    assert _projects(first.report.as_json())["p0"]["version"] == "t0.2"
    assert _projects(first.report.as_json())["p0"]["published_at"] == _stamp(2)

    again = night.audit(github_config(1))
    assert not [p for p in night.paths() if "/commits/" in p]
    assert again.report.as_json()["summary"]["changes"] == 0
    assert _projects(again.report.as_json())["p0"]["published_at"] == _stamp(2)

    state.repos[0].tags.append(FakeTag("t0.3", "03" * 20, _stamp(3)))
    moved = night.audit(github_config(1))
    assert f"/repos/org/p0/commits/{'03' * 20}" in night.paths()
    assert _projects(moved.report.as_json())["p0"]["published_at"] == _stamp(3)


def test_a_github_answer_slower_than_the_request_deadline_is_cut_off(nights: Any) -> None:
    """Every request runs under the deadline (one watchdog for all of them): an answer that
    does not come in time fails that project only, and the next request on the pool works."""
    state = GitHubState([_repo(i, license_text=reference_text("MIT")) for i in range(3)])
    night = nights(state, None, unauth_limit=1000,
                   faults=FaultPlan(rules=[FaultRule("delay", path=r"^/repos/org/p1$",
                                                     delay=3.0)]))  # fmt: skip
    config = parse_config(
        "settings: {request_deadline: 0.5}\n"
        "github: {retry_base_delay: 0, max_retries: 0, concurrency: 1}\nprojects:\n"
        + "".join(f"  - name: p{i}\n    repo: org/p{i}\n" for i in range(3))
    )
    outcome = night.audit(config)
    statuses = {name: p["status"] for name, p in _projects(outcome.report.as_json()).items()}
    assert statuses == {"p0": "ok", "p1": "error", "p2": "ok"}
    [error] = outcome.report.as_json()["errors"]
    assert error["project"] == "p1"
    assert error["error"].startswith(
        "no answer from GitHub: no complete answer within the request deadline"
    )


# ------------------------------------------------------------------------------- imports


def test_the_schema_constant_is_alembics_head() -> None:
    """A database at HEAD_REVISION opens without Alembic: the constant must be the head."""
    assert code_head() == HEAD_REVISION


def test_an_unchanged_github_night_loads_no_heavy_module(db_url: str, tmp_path: Path) -> None:
    """`crawler audit` on an unchanged night (GitHub only, no pages, no notification, the
    database at head, not on a terminal) imports none of the heavy optional modules, and
    builds no license index (every license text was analysed before)."""
    state = GitHubState([_repo(i, license_text=reference_text("MIT")) for i in range(3)])
    config_file = tmp_path / "sources.yaml"
    config_file.write_text(
        "projects:\n" + "".join(f"  - name: p{i}\n    repo: org/p{i}\n" for i in range(3))
    )
    with FakeGitHub(state, token=TOKEN) as server:
        night = Nights(server, db_url, tmp_path / "reports", TOKEN)
        try:
            night.audit(parse_config(config_file.read_text(), str(config_file)))
        finally:
            night.store.close()
        done = _cli_probe(server, config_file, db_url, tmp_path / "reports")
    assert done.returncode == 0, done.stderr
    assert "0 changes" in done.stdout + done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("LOADED")] == [
        "LOADED "
    ]


def _cli_probe(
    server: FakeGitHub, config_file: Path, db_url: str, reports: Path
) -> subprocess.CompletedProcess[str]:
    """`crawler --quiet audit` in a fresh interpreter that prints, as it exits, which of the
    HEAVY modules it loaded, and "license index" if it built one."""
    probe = (
        "import atexit, runpy, sys\n"
        "def loaded():\n"
        f"    heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "    templates = sys.modules.get('crawler.analysis.license_templates')\n"
        "    if templates is not None and templates._INDEX is not None:\n"
        "        heavy.append('license index')\n"
        "    print('LOADED ' + ' '.join(heavy), file=sys.stderr)\n"
        "atexit.register(loaded)\n"
        "sys.argv = ['crawler', '--quiet', 'audit', '--config', sys.argv[1], '--db',"
        " sys.argv[2], '--reports', sys.argv[3]]\n"
        "runpy.run_module('crawler', run_name='__main__')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN")}
    env.update(server.env(TOKEN))
    return subprocess.run(
        [sys.executable, "-c", probe, str(config_file), db_url, str(reports)],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_without_a_token_an_unchanged_license_blob_needs_no_license_request(nights: Any) -> None:
    """The tree (fetched anyway for the license inventory) names the root license blob, chosen
    by the rule every path shares: the same blob at the chosen path is the same text, so it is
    not asked again; a changed text is read again, and a new root license file the rule does
    not choose (COPYING beside LICENSE) is an inventory change, not a new text to read."""

    def license_reads() -> list[str]:
        return sorted(p for p in night.paths() if p.endswith("/license") or "/contents/" in p)

    state = GitHubState([_repo(i, license_text=reference_text("MIT", f"2026 Org {i}"))
                         for i in range(3)])  # fmt: skip
    night = nights(state, None, unauth_limit=1000)
    night.audit(github_config(3))
    assert license_reads() == [f"/repos/org/p{i}/contents/LICENSE?ref=main" for i in range(3)]

    unchanged = night.audit(github_config(3))
    assert license_reads() == []
    assert unchanged.report.as_json()["summary"]["changes"] == 0
    assert [p["license"] for p in unchanged.report.as_json()["projects"]] == ["MIT"] * 3

    state.repos[1].license_text = reference_text("MIT", "2026 Org 1") + "\nExtra terms apply.\n"
    state.repos[2].files["COPYING"] = reference_text("MIT", "2026 Someone Else")
    changed = night.audit(github_config(3))
    assert license_reads() == ["/repos/org/p1/contents/LICENSE?ref=main"]
    kinds = {(c["project"], c["kind"]) for c in changed.report.as_json()["changes"]}
    assert ("p1", "license_text_changed") in kinds
    assert ("p2", "license_files_changed") in kinds
    assert ("p2", "license_text_changed") not in kinds


def _cached_urls(store: Store) -> list[str]:
    from sqlalchemy import text

    with store.engine.connect() as connection:
        return sorted(row[0] for row in connection.execute(text("SELECT url FROM http_cache")))


def test_an_unchanged_night_sends_one_query_per_batch_and_nothing_else(nights: Any) -> None:
    """With a token, 120 unchanged projects cost three GraphQL queries (batches of 50) and the
    free budget check: no REST request, no tree, no license text."""
    state = GitHubState([_repo(i, license_text=reference_text("MIT")) for i in range(120)])
    night = nights(state, TOKEN)
    night.audit(github_config(120))
    again = night.audit(github_config(120))
    assert [r.path for r in night.server.requests] == ["/rate_limit"] + ["/graphql"] * 3
    assert again.report.as_json()["summary"]["changes"] == 0
    assert again.report.as_json()["summary"]["checked"] == 120


def test_a_commits_tree_is_read_without_validators_and_not_kept(nights: Any) -> None:
    """A tree asked for by its commit's sha can never change: the first audit sends no
    conditional request for it and keeps no copy in the store (on main: a validator and a
    compressed body per repository, written one transaction each)."""
    state = GitHubState([_repo(i, license_text=reference_text("MIT")) for i in range(4)])
    night = nights(state, TOKEN)
    night.audit(github_config(4))
    trees = [r for r in night.server.requests if "/git/trees/" in r.path]
    assert sorted(r.path.split("?")[0] for r in trees) == sorted(
        f"/repos/org/p{i}/git/trees/{f'{i:x}' * 40}" for i in range(4)
    )
    assert [r.conditional for r in trees] == [False] * 4
    assert [url for url in _cached_urls(night.store) if "/git/trees/" in url] == []
    # the head moves: the new commit's tree is read (once), and still not kept
    state.repos[2].head_sha = "c" * 40
    moved = night.audit(github_config(4))
    assert [r.path.split("?")[0] for r in night.server.requests if "/git/trees/" in r.path] == [
        "/repos/org/p2/git/trees/" + "c" * 40
    ]
    assert moved.report.as_json()["summary"]["errors"] == 0
    assert [url for url in _cached_urls(night.store) if "/git/trees/" in url] == []


def test_the_environment_is_read_once_per_session_not_per_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """requests walks os.environ for proxies and CA bundles on every request while trust_env
    is on: the GitHub client reads them once, and its connections keep what it read (a proxy,
    a CA file): PyGithub's session and the plain requests' sender."""
    from crawler.upstream.http import MemoryCache
    from crawler.upstream.sources.github import GitHubSettings
    from crawler.upstream.sources.github.api import GitHubApi

    bundle = tmp_path / "ca.pem"
    bundle.write_text("")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
    api = GitHubApi("https://api.github.com", TOKEN, MemoryCache(), GitHubSettings())
    try:
        plain = api._sender()
        rest = api._requester()._Requester__connection.session
        assert rest.trust_env is False
        for read in (plain, rest):
            assert read.proxies == {"https": "http://proxy.invalid:3128"}
        assert plain.verify == str(bundle)
        assert api._requester()._Requester__connection.verify == str(bundle)
    finally:
        api.close()


def test_a_first_audit_with_a_token_never_loads_pygithub(db_url: str, tmp_path: Path) -> None:
    """A first audit with a token reads facts and license texts by GraphQL and each commit's
    tree (immutable) through the plain session: PyGithub and the JWT, cryptography and NaCl
    stacks it brings are not imported; the license index is built (new texts were read) and
    Alembic creates the new database."""
    state = GitHubState([_repo(i, license_text=reference_text("MIT")) for i in range(3)])
    config_file = tmp_path / "sources.yaml"
    config_file.write_text(
        "projects:\n" + "".join(f"  - name: p{i}\n    repo: org/p{i}\n" for i in range(3))
    )
    with FakeGitHub(state, token=TOKEN) as server:
        done = _cli_probe(server, config_file, db_url, tmp_path / "reports")
        trees = [r for r in server.requests if "/git/trees/" in r.path]
    assert done.returncode == 0, done.stderr
    assert len(trees) == 3 and all(r.status == 200 and r.authenticated for r in trees)
    assert [line for line in done.stderr.splitlines() if line.startswith("LOADED")] == [
        "LOADED alembic license index"
    ]


def test_a_message_is_redacted_in_a_window_around_its_cut() -> None:
    """Only the start of a long answer is redacted before it is cut (a 100 KB GraphQL answer
    was redacted whole for an 80-character message): a token straddling the cut, or spelt
    out inside the window, is still masked; nothing past the cut survives."""
    from crawler.upstream.http import MemoryCache
    from crawler.upstream.sources.github import GitHubSettings
    from crawler.upstream.sources.github.api import REDACT_WINDOW, GitHubApi

    api = GitHubApi("https://api.github.com", TOKEN, MemoryCache(), GitHubSettings())
    try:
        straddling = "x" * 60 + TOKEN + "y" * 200_000
        message = api.safe_message(straddling, 80)
        assert TOKEN[:10] not in message and len(message) == 80
        assert message.startswith("x" * 60) and message.endswith("…")
        late = "z" * (REDACT_WINDOW + 500) + TOKEN
        assert api.safe_message(late, 80) == "z" * 79 + "…"
        assert TOKEN not in api.safe_message("a" * 10 + TOKEN, 300)
    finally:
        api.close()


def test_an_audit_reads_prior_states_a_batch_at_a_time_and_reports_in_catalog_order(
    nights: Any,
) -> None:
    """Memory follows the batch, not the catalog: with batches of 40, 120 projects have their
    prior states read in three statements of 40 names each (never one statement for all), and
    the report is the one a single batch gives: changes, flags and rows in sources.yaml order
    (not the fetch order), the removal once, at the end."""
    from sqlalchemy import event

    state = GitHubState([_repo(i, license_text=reference_text("MIT")) for i in range(120)])
    night = nights(state, TOKEN)
    names = {f"p{i}" for i in range(120)}
    reads: list[set[str]] = []

    def seen(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        if "snapshots.data" in statement:
            values = parameters.values() if isinstance(parameters, dict) else parameters
            reads.append({v for v in values if v in names})

    def audit(config: Config) -> AuditOutcome:
        night.server.reset_log()
        reads.clear()
        return run_audit(config, night.store, night.reports, env=night.env,
                         sleep=lambda _s: None, batch_size=40)  # fmt: skip

    event.listen(night.store.engine, "before_cursor_execute", seen)
    audit(github_config(120))
    assert reads == []  # a first audit has no prior state to read
    for index in (100, 5, 45):  # one new release in each batch
        tag = f"v{index}.9.0"
        release = FakeRelease(tag=tag, name=tag, published_at=_stamp(25), created_at=_stamp(25))
        night.server.state.repos[index].releases.append(release)
    kept = "".join(f"  - name: p{i}\n    repo: org/p{i}\n" for i in range(120) if i != 7)
    second = audit(parse_config(f"github: {{retry_base_delay: 0}}\nprojects:\n{kept}"))
    assert [len(r) for r in reads] == [40, 40, 39]
    assert set().union(*reads) == names - {"p7"}
    report = second.report.as_json()
    assert [(c["project"], c["kind"]) for c in report["changes"]] == [
        ("p5", "new_release"), ("p45", "new_release"), ("p100", "new_release"),
        ("p7", "project_removed"),
    ]  # fmt: skip
    assert [p["name"] for p in report["projects"]] == [f"p{i}" for i in range(120) if i != 7]
    assert {p["name"]: p["version"] for p in report["projects"]}["p45"] == "v45.9.0"
    assert report["summary"]["checked"] == 119
    # the budget is asked once per audit, not per batch; one query per batch of 40
    assert [r.path for r in night.server.requests] == ["/rate_limit"] + ["/graphql"] * 3
    validate_report(report)
    # the worded entries wait on disk, not in memory, until the report is written
    from crawler.report.spool import Spooled

    arrays = (second.report.changes, second.report.flags, second.report.errors,
              second.report.projects)  # fmt: skip
    assert [type(a) for a in arrays] == [Spooled] * 4
    assert [len(a) for a in arrays] == [4, len(report["flags"]), 0, 119]
    assert second.report_dir is not None
    written = (second.report_dir / "report.json").read_bytes()
    assert written == second.report.to_json()


def test_the_batches_of_an_audit_share_its_workers_and_their_connections(nights: Any) -> None:
    """The worker threads (and the HTTP session each keeps) live for the whole audit, not for
    one batch: a first audit of three batches, every tree read, opens at most one connection
    per worker (4 for the queries, 4 for the trees) and one for the audit's own thread,
    where a pool per batch would open three times as many and keep them all open."""
    state = GitHubState([_repo(i, license_text=reference_text("MIT")) for i in range(120)])
    night = nights(state, TOKEN)
    outcome = run_audit(github_config(120, "retry_base_delay: 0, concurrency: 4"), night.store,
                        night.reports, env=night.env, sleep=lambda _s: None,
                        batch_size=40)  # fmt: skip
    trees = [r.path for r in night.server.requests if "/git/trees/" in r.path]
    assert len(trees) == 120 and outcome.report.as_json()["summary"]["checked"] == 120
    assert night.server.connections_opened <= 9
