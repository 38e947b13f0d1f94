"""GitHub App authentication: JWT → installation token, renewed before it expires, the
installation's own rate limit, and never a token in a report, the database or an error.

Real HTTP to the GitHub-shaped fake on loopback (its App: ``crawler_fakes.github_app``), a
real database (SQLite and PostgreSQL); the RSA key is made for the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.cli import cli
from crawler.config import parse_config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler.upstream.http import MemoryCache
from crawler.upstream.sources.github import GitHubSettings
from crawler.upstream.sources.github.api import GitHubApi, GitHubError
from crawler.upstream.sources.github.app_auth import (
    REFRESH_BEFORE,
    AppAuthError,
    InstallationTokens,
    app_credentials,
)
from crawler_fakes.github import FakeApp, FakeGitHub, FakeRelease, FakeRepo, GitHubState

APP_ID = "424242"
INSTALLATION = 9001


def _keys() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()  # fmt: skip
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public.decode()


PRIVATE, PUBLIC = _keys()
OTHER_PRIVATE, _ = _keys()


def _state(count: int) -> GitHubState:
    repos = []
    for i in range(count):
        repo = FakeRepo(
            owner="org", name=f"p{i}", id=700 + i, license_key="mit", spdx_id="MIT",
            license_name="MIT License", license_text=reference_text("MIT"),
            head_sha=f"{i:040x}", head_date="2026-10-01T00:00:00Z",
        )  # fmt: skip
        repo.releases.append(FakeRelease("v1.0.0", "v1.0.0", "2026-10-01T00:00:00Z",
                                         "2026-10-01T00:00:00Z"))  # fmt: skip
        repos.append(repo)
    return GitHubState(repos=repos)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    app = FakeApp(APP_ID, PUBLIC, INSTALLATION, rate_limit=15_000)
    with FakeGitHub(_state(6), token="ghp_not_used_here", app=app) as server:
        yield server


def _env(server: FakeGitHub, key: str = PRIVATE) -> dict[str, str]:
    return {"GITHUB_API_URL": server.base_url, "GITHUB_APP_ID": APP_ID,
            "GITHUB_APP_INSTALLATION_ID": str(INSTALLATION),
            "GITHUB_APP_PRIVATE_KEY": key}  # fmt: skip


def _config(count: int) -> Any:
    names = "".join(f"  - name: p{i}\n    repo: org/p{i}\n" for i in range(count))
    return parse_config(f"projects:\n{names}")


def test_an_audit_as_an_installation_exchanges_one_token_and_reads_the_installations_limit(
    github: FakeGitHub, db_url: str, tmp_path: Path
) -> None:
    store = Store(db_url)
    try:
        outcome = run_audit(_config(6), store, tmp_path / "r", env=_env(github),
                            sleep=lambda _s: None)  # fmt: skip
    finally:
        store.close()
    validate_report(outcome.report)
    assert {p["name"]: p["status"] for p in outcome.report.as_json()["projects"]} == {
        f"p{i}": "ok" for i in range(6)
    }
    assert outcome.report.as_json()["errors"] == []
    assert github.app is not None and len(github.app.exchanges) == 1  # one token, reused
    exchange = [r for r in github.requests if r.path.startswith("/app/")]
    assert [(r.method, r.path, r.status) for r in exchange] == [
        ("POST", f"/app/installations/{INSTALLATION}/access_tokens", 201)
    ]
    # every other request carried the installation token, GraphQL included
    others = [r for r in github.requests if not r.path.startswith("/app/")]
    assert {r.path for r in others if r.path == "/graphql"} == {"/graphql"}
    assert all(r.authenticated and r.status in (200, 304) for r in others)
    # the installation's budget paid, not the personal token's
    assert github.points_used.core_authenticated == 0


def test_the_budget_logic_reads_the_installations_remaining_requests(
    github: FakeGitHub,
) -> None:
    tokens = InstallationTokens(github.base_url, _credentials())
    api = GitHubApi(github.base_url, None, MemoryCache(), GitHubSettings(), app_tokens=tokens)
    try:
        api.refresh_budget()
        assert api.authenticated
        assert api.core.remaining == 15_000
        assert api.core.limit == 15_000
        api.get_json("/repos/org/p0")
        assert api.core.remaining == 14_999  # from the installation's bucket
    finally:
        api.close()


def _credentials() -> Any:
    found = app_credentials({"GITHUB_APP_ID": APP_ID, "GITHUB_APP_INSTALLATION_ID":
                             str(INSTALLATION), "GITHUB_APP_PRIVATE_KEY": PRIVATE})  # fmt: skip
    assert found is not None
    return found


def test_the_token_is_renewed_before_it_expires_and_an_expired_one_is_refused(
    github: FakeGitHub,
) -> None:
    clock = [datetime.now(UTC)]
    tokens = InstallationTokens(github.base_url, _credentials(), now=lambda: clock[0])
    api = GitHubApi(github.base_url, None, MemoryCache(), GitHubSettings(), app_tokens=tokens)
    try:
        first = tokens.token()
        assert tokens.token() == first  # reused while it is fresh
        assert tokens.expires_at is not None
        assert tokens.expires_at - clock[0] > timedelta(minutes=55)  # GitHub's hour
        api.get_json("/repos/org/p1")
        # the fake's hour is over: the old token is refused…
        assert github.app is not None
        github.app.expire_tokens()
        refused = api.get_json("/repos/org/p2", allow=(401,))
        assert refused.status == 401
        # …and within REFRESH_BEFORE of its expiry a new one is taken before the request
        clock[0] = tokens.expires_at - REFRESH_BEFORE
        assert api.get_json("/repos/org/p2").status == 200
        clock[0] = datetime.now(UTC)  # back to now: the new token is fresh for an hour
        second = tokens.token()
        assert second != first
        assert len(github.app.exchanges) == 2
        # every token, and every JWT signed to ask for one, is a secret to redact
        assert [t for t in tokens.issued if t.startswith("ghs_")] == [first, second]
        assert [t.count(".") for t in tokens.issued if not t.startswith("ghs_")] == [2, 2]
    finally:
        api.close()


def test_a_refused_exchange_is_an_error_of_each_project_never_a_finding_nor_a_leak(
    github: FakeGitHub, db_url: str, tmp_path: Path
) -> None:
    store = Store(db_url)
    try:
        outcome = run_audit(_config(2), store, tmp_path / "r", env=_env(github, OTHER_PRIVATE),
                            sleep=lambda _s: None)  # fmt: skip
    finally:
        store.close()
    report = outcome.report.as_json()
    assert {p["name"] for p in report["projects"] if p["status"] == "error"} == {"p0", "p1"}
    assert report["changes"] == []  # nothing read, so nothing found (not even "added")
    assert report["flags"] == []
    messages = [e["error"] for e in report["errors"]]
    assert messages and all("HTTP 401" in m for m in messages)
    text = (tmp_path / "r" / "latest" / "report.json").read_text()
    assert "PRIVATE KEY" not in text and OTHER_PRIVATE.splitlines()[1] not in text


def test_installation_tokens_never_reach_the_report_or_the_database(
    github: FakeGitHub, tmp_path: Path
) -> None:
    db = tmp_path / "c.sqlite"
    store = Store(f"sqlite:///{db}")
    try:
        run_audit(_config(3), store, tmp_path / "r", env=_env(github), sleep=lambda _s: None)
    finally:
        store.close()
    assert github.app is not None
    issued = list(github.app._tokens)
    assert len(issued) == 1
    written = db.read_bytes() + b"".join(p.read_bytes() for p in (tmp_path / "r").rglob("*")
                                         if p.is_file())  # fmt: skip
    assert issued[0].encode() not in written
    assert PRIVATE.splitlines()[1].encode() not in written


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"GITHUB_APP_ID": APP_ID}, "GITHUB_APP_INSTALLATION_ID, GITHUB_APP_PRIVATE_KEY(_FILE)"),
        ({"GITHUB_APP_ID": APP_ID, "GITHUB_APP_INSTALLATION_ID": "x",
          "GITHUB_APP_PRIVATE_KEY": "k"}, "must be a number"),
        ({"GITHUB_APP_INSTALLATION_ID": "1", "GITHUB_APP_PRIVATE_KEY_FILE": "/nonexistent/key"},
         "cannot be read"),
    ],
)
def test_incomplete_app_settings_say_what_is_missing(env: dict[str, str], says: str) -> None:
    with pytest.raises(AppAuthError) as raised:
        app_credentials(env)
    assert says in str(raised.value)


def test_the_key_may_come_from_a_file_and_no_app_variable_means_no_app(tmp_path: Path) -> None:
    (tmp_path / "app.pem").write_text(PRIVATE)
    found = app_credentials({"GITHUB_APP_ID": APP_ID, "GITHUB_APP_INSTALLATION_ID": "12",
                             "GITHUB_APP_PRIVATE_KEY_FILE": str(tmp_path / "app.pem")})
    assert found is not None
    assert (found.app_id, found.installation_id, found.private_key) == (APP_ID, 12, PRIVATE.strip())
    assert "PRIVATE" not in repr(found)
    assert app_credentials({"GITHUB_TOKEN": "ghp_x"}) is None


def test_a_first_audit_larger_than_the_budget_says_how_many_nights_it_takes(
    db_url: str, tmp_path: Path
) -> None:
    """Ten projects, a REST budget of four trees: four are checked tonight, six deferred, and
    the report says the rotation needs two more nights; the next night starts with them."""
    with FakeGitHub(_state(10), token="ghp_budget_token") as server:
        store = Store(db_url)
        env = server.env("ghp_budget_token")
        config = parse_config("github: {concurrency: 1}\nprojects:\n" + "".join(
            f"  - name: p{i}\n    repo: org/p{i}\n" for i in range(10)))  # fmt: skip
        try:
            server.set_rate_limit(4, resource="core")
            first = run_audit(config, store, tmp_path / "r", env=env, sleep=lambda _s: None)
            statuses = {p["name"]: p["status"] for p in first.report.as_json()["projects"]}
            assert sorted(n for n, s in statuses.items() if s == "ok") == [
                "p0", "p1", "p2", "p3"]  # fmt: skip
            assert first.report.as_json()["summary"]["deferred"] == 6
            text = (tmp_path / "r" / "latest" / "report.md").read_text()
            assert ("6 projects were not checked (deferred); at this audit's pace the "
                    "rotation reaches them in 2 more nights") in text  # fmt: skip
            server.set_rate_limit(4, resource="core")
            server.reset_log()
            run_audit(config, store, tmp_path / "r", env=env, sleep=lambda _s: None)
            trees = [r.path.split("/")[3] for r in server.requests if "/git/trees/" in r.path]
            assert trees == ["p4", "p5", "p6", "p7"]  # the never-checked lead
        finally:
            store.close()


# -- issue 38 item 11: App failures said for what they are, before the audit starts ------------

SSH_PUBLIC = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 crawler@example"
OPENSSH_PRIVATE = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB\n"
    "-----END OPENSSH PRIVATE KEY-----"
)


def _cli_audit(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> tuple[Result, Store]:
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_APP_PRIVATE_KEY", "CRAWLER_NOTIFY",
                 "GITHUB_APP_PRIVATE_KEY_FILE", "GITHUB_APP_ID", "GITHUB_APP_INSTALLATION_ID"):
        monkeypatch.delenv(name, raising=False)  # fmt: skip
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    monkeypatch.setenv("CRAWLER_DB_URL", db)
    (tmp_path / "sources.yaml").write_text("projects:\n  - name: p0\n    repo: org/p0\n")
    result = CliRunner().invoke(cli, ["audit"])
    return result, Store(db)


def _key_file_env(server: FakeGitHub, path: Path) -> dict[str, str]:
    env = _env(server)
    del env["GITHUB_APP_PRIVATE_KEY"]
    return {**env, "GITHUB_APP_PRIVATE_KEY_FILE": str(path)}


def test_a_key_file_that_is_a_directory_stops_before_the_audit_in_one_line(
    github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was a traceback and a 'failed' audit row, every night."""
    folder = tmp_path / "keys"
    folder.mkdir()
    result, store = _cli_audit(tmp_path, _key_file_env(github, folder), monkeypatch)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        f"Error: GITHUB_APP_PRIVATE_KEY_FILE: {folder} cannot be read (Is a directory)"
    ]
    assert store.audits() == [] and github.requests == []
    store.close()


def test_a_missing_key_file_stops_before_the_audit_in_one_line(
    github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "gone.pem"
    result, store = _cli_audit(tmp_path, _key_file_env(github, missing), monkeypatch)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        f"Error: GITHUB_APP_PRIVATE_KEY_FILE: {missing} cannot be read (No such file or "
        "directory)"
    ]
    assert store.audits() == []
    store.close()


HINT = "use the .pem file GitHub gives when you generate the App's private key"


@pytest.mark.parametrize(
    ("key", "says"),
    [
        (SSH_PUBLIC, "an OpenSSH public key, not the App's private key"),
        (OPENSSH_PRIVATE, "an OpenSSH private key, not a PEM one"),
        ("\n".join(PRIVATE.splitlines()[:8]), "not a PEM private key (damaged or cut short)"),
        ("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----",
         "not a PEM private key (damaged or cut short)"),
    ],
)
def test_a_key_that_is_not_the_apps_pem_key_stops_before_the_audit(
    github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, says: str
) -> None:
    """A corrupt PEM or an ssh-rsa key read as 'no answer from GitHub', retried four times per
    project, every night."""
    result, store = _cli_audit(tmp_path, _env(github, key), monkeypatch)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [f"Error: GITHUB_APP_PRIVATE_KEY: {says}: {HINT}"]
    assert store.audits() == [] and github.requests == []
    store.close()


def test_with_an_app_the_audit_does_not_warn_about_a_missing_token(
    github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, store = _cli_audit(tmp_path, _env(github), monkeypatch)
    assert result.exit_code == 0, result.output
    assert "GITHUB_TOKEN" not in result.output
    assert [(a.id, a.status) for a in store.audits()] == [(1, "complete")]
    store.close()


@pytest.mark.parametrize(
    "answer",
    [
        {"token": None, "expires_at": None},
        {"token": "ghs_x", "expires_at": "in an hour"},
        {"message": "ok"},
    ],
)
def test_a_garbled_token_answer_is_said_once_and_never_an_attribute_error(
    github: FakeGitHub, db_url: str, tmp_path: Path, answer: dict[str, Any]
) -> None:
    """It was AttributeError: 'NoneType' object has no attribute 'tzinfo'."""
    assert github.app is not None
    github.app.answer = answer
    store = Store(db_url)
    try:
        outcome = run_audit(_config(3), store, tmp_path / "r", env=_env(github),
                            sleep=lambda _s: None)  # fmt: skip
    finally:
        store.close()
    report = outcome.report.as_json()
    assert {p["name"]: p["status"] for p in report["projects"]} == dict.fromkeys(
        ("p0", "p1", "p2"), "error"
    )
    messages = {e["error"] for e in report["errors"]}
    assert len(messages) == 1, messages
    assert messages.pop().startswith(
        "GitHub's answer to the installation token request is not one ("
    )
    exchanges = [r for r in github.requests if r.path.startswith("/app/")]
    assert len(exchanges) == 1  # asked once: the rest of the audit knows the answer


def test_a_jwt_echoed_in_a_refusal_never_reaches_the_report_or_the_database(
    github: FakeGitHub, tmp_path: Path
) -> None:
    """The App's signed JWT is a credential for its ten minutes (item 8): an answer quoting
    it reached the report."""
    assert github.app is not None
    github.app.echo_jwt = True
    db = tmp_path / "c.sqlite"
    store = Store(f"sqlite:///{db}")
    try:
        outcome = run_audit(_config(2), store, tmp_path / "r", env=_env(github),
                            sleep=lambda _s: None)  # fmt: skip
    finally:
        store.close()
    [jwt] = github.app.jwts
    [message] = {e["error"] for e in outcome.report.as_json()["errors"]}
    assert message == (
        "GitHub refused the App's installation token: HTTP 401 A JSON web token could not be "
        "decoded: ***…"  # GitHub's message is capped, then every piece of the JWT masked
    )
    written = db.read_bytes() + b"".join(
        p.read_bytes() for p in (tmp_path / "r").rglob("*") if p.is_file()
    )
    assert jwt.encode() not in written and jwt.split(".")[2][:20].encode() not in written


def test_a_401_names_the_credential_in_use(github: FakeGitHub) -> None:
    """With App authentication a 401 said 'check GITHUB_TOKEN'."""
    tokens = InstallationTokens(github.base_url, _credentials())
    api = GitHubApi(github.base_url, None, MemoryCache(), GitHubSettings(), app_tokens=tokens)
    try:
        api.get_json("/repos/org/p0")
        assert github.app is not None
        github.app.expire_tokens()  # GitHub no longer takes the token the App holds
        with pytest.raises(GitHubError) as refused:
            api.get_json("/repos/org/p1")
    finally:
        api.close()
    assert str(refused.value) == (
        "GitHub rejected the App's installation token (HTTP 401): check that the App is still "
        "installed (GITHUB_APP_INSTALLATION_ID) and not suspended"
    )
    plain = GitHubApi(github.base_url, "ghp_wrong_token_value", MemoryCache(), GitHubSettings(),
                      credential="GH_TOKEN")  # fmt: skip
    try:
        with pytest.raises(GitHubError) as wrong:
            plain.get_json("/repos/org/p0")
    finally:
        plain.close()
    assert str(wrong.value) == "GitHub rejected the token (HTTP 401): check GH_TOKEN"


def test_a_scheduler_with_a_broken_key_stops_at_start(
    github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not an 'audit failed' line at every tick for as long as the container runs."""
    monkeypatch.chdir(tmp_path)
    for name, value in _env(github, SSH_PUBLIC).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CRAWLER_DB_URL", f"sqlite:///{tmp_path / 'db.sqlite'}")
    (tmp_path / "sources.yaml").write_text("projects:\n  - name: p0\n    repo: org/p0\n")
    result = CliRunner().invoke(cli, ["schedule", "--run-now"])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        f"Error: GITHUB_APP_PRIVATE_KEY: an OpenSSH public key, not the App's private key: {HINT}"
    ]
