"""Proxies and a company CA for every forge and registry (issue 22, item 1).

A recording proxy on loopback stands for the company proxy: with ``HTTP_PROXY`` (the loopback
fakes speak plain HTTP) every GitHub, Gitee, GitLab and PyPI request goes through it, none
when ``NO_PROXY`` covers the host; over HTTPS (fakes with a self-signed certificate, which
stands for the company CA) the proxy sees a CONNECT tunnel per host, and the CA named by
``SSL_CERT_FILE`` or ``REQUESTS_CA_BUNDLE`` is trusted by both HTTP stacks. The request deadline
still cuts off a slow answer through the proxy. Vendor pages keep their documented rule: direct.

Regression: on main only GitHub (requests) used the proxy; the httpx sources connected
directly, because a client given its own transport ignores the environment's proxies.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from crawler import __version__
from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.config import Settings, parse_config
from crawler.logs import configure_output, secrets_from_env
from crawler.store import Store
from crawler.upstream.http import MemoryCache
from crawler.upstream.pages import PageFetcher
from crawler.upstream.sources.github import GitHubSettings
from crawler.upstream.sources.github.api import GitHubApi, GitHubError
from crawler_fakes.faults import FaultPlan, FaultRule
from crawler_fakes.gitee import FakeGitee, demo_states
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from crawler_fakes.gitlab import DEMO_NOW, FakeGitLab
from crawler_fakes.gitlab import demo_state as gitlab_state
from crawler_fakes.pages import FakePageServer
from crawler_fakes.proxy import RecordingProxy, self_signed_certificate, serve_tls
from crawler_fakes.pypi import FakePyPI
from crawler_fakes.pypi import demo_state as pypi_state

TOKEN = "ghp_proxy_test_token_0123456789abcdefghij"
PROXY_VARIABLES = (
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
    "http_proxy", "https_proxy", "all_proxy", "no_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
)  # fmt: skip

CONFIG = """
github: {retry_base_delay: 0, max_retries: 0}
gitee: {retry_base_delay: 0, max_retries: 0}
gitlab: {retry_base_delay: 0, max_retries: 0}
pypi: {retry_base_delay: 0, max_retries: 0}
settings: {allow_private_addresses: true}
projects:
  - name: Released
    repo: corp/released
    pypi: kernel-dsl
  - name: Accel Plugin
    gitee: demo-vendor/accel-plugin
  - name: Compiler Toolkit
    gitlab: demo-group/compilers/toolkit
"""


def _github() -> GitHubState:
    stamp = "2026-10-01T00:00:00Z"
    return GitHubState(
        repos=[
            FakeRepo(
                owner="corp", name="released", id=1, license_key="mit", spdx_id="MIT",
                license_name="MIT License", license_text=reference_text("MIT"),
                head_sha="1" * 40, head_date=stamp,
                releases=[FakeRelease("v1.0.0", "v1.0.0", stamp, stamp)],
            )
        ]
    )  # fmt: skip


Fakes = tuple[FakeGitHub, FakeGitee, FakeGitLab, FakePyPI]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fakes() -> Iterator[Fakes]:
    gitee_state, _ = demo_states(reference_text("Apache-2.0"))
    with (
        FakeGitHub(_github(), token=TOKEN, unauth_limit=5000) as github,
        FakeGitee(gitee_state) as gitee,
        FakeGitLab(gitlab_state(after=False), now=DEMO_NOW) as gitlab,
        FakePyPI(pypi_state(after=False)) as pypi,
    ):
        yield github, gitee, gitlab, pypi


@pytest.fixture
def proxy() -> Iterator[RecordingProxy]:
    with RecordingProxy() as running:
        yield running


def _env(fakes: Fakes, token: str | None) -> dict[str, str]:
    github, gitee, gitlab, pypi = fakes
    return {**github.env(token), **gitee.env(), **gitlab.env(), **pypi.env()}


def _audit(fakes: Fakes, token: str | None, db_url: str, tmp_path: Path) -> dict[str, Any]:
    store = Store(db_url)
    try:
        outcome = run_audit(
            parse_config(CONFIG), store, tmp_path / "reports", env=_env(fakes, token),
            sleep=lambda _s: None,
        )  # fmt: skip
    finally:
        store.close()
    return outcome.report.as_json()


def _netloc(url: str) -> str:
    return urlsplit(url).netloc


@pytest.mark.parametrize("token", [None, TOKEN], ids=["rest", "graphql"])
def test_every_forge_and_registry_request_goes_through_the_proxy(
    fakes: Fakes,
    proxy: RecordingProxy,
    token: str | None,
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
    report = _audit(fakes, token, db_url, tmp_path)

    assert report["errors"] == []
    assert {p["name"]: p["status"] for p in report["projects"]} == {
        "Released": "ok", "Accel Plugin": "ok", "Compiler Toolkit": "ok",
    }  # fmt: skip
    assert proxy.hosts() == {_netloc(f.base_url) for f in fakes}
    by_host = {
        host: sorted(_path(r.path) for r in proxy.requests if r.host == host)
        for host in proxy.hosts()
    }
    # every request each fake answered came through the proxy, and nothing else did
    for fake in fakes:
        answered = sorted(_path(r.path) for r in fake.requests)
        assert answered, type(fake).__name__
        assert by_host[_netloc(fake.base_url)] == answered, type(fake).__name__
    # ... and each one says which crawler version sent it, as the report does (issue 22, item 5)
    assert {r.user_agent.split(" ")[0] for r in proxy.requests} == {f"crawler/{__version__}"}
    assert report["crawler_version"] == __version__ != "0+unknown"


def _path(path: str) -> str:
    """Without the query: the fakes log it with the token removed, the proxy as sent."""
    return path.partition("?")[0]


def test_no_proxy_covering_the_hosts_sends_nothing_through_the_proxy(
    fakes: Fakes,
    proxy: RecordingProxy,
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
    monkeypatch.setenv("HTTPS_PROXY", proxy.base_url)
    monkeypatch.setenv("NO_PROXY", "example.invalid, 127.0.0.1")
    report = _audit(fakes, TOKEN, db_url, tmp_path)

    assert report["errors"] == []
    assert proxy.requests == []
    assert all(fake.requests for fake in fakes)


@pytest.fixture
def company_ca(
    fakes: Fakes, proxy: RecordingProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every fake on HTTPS with a certificate of a company CA; HTTPS_PROXY set; the CA file."""
    cert, key = self_signed_certificate(tmp_path)
    for fake in fakes:
        serve_tls(fake, cert, key)
    monkeypatch.setenv("HTTPS_PROXY", proxy.base_url)
    return cert


@pytest.mark.parametrize("ca_variable", ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"])
def test_https_goes_through_a_connect_tunnel_and_trusts_the_company_ca(
    fakes: Fakes,
    proxy: RecordingProxy,
    company_ca: Path,
    ca_variable: str,
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ca_variable, str(company_ca))
    report = _audit(fakes, TOKEN, db_url, tmp_path)

    assert report["errors"] == []
    assert {p["status"] for p in report["projects"]} == {"ok"}
    assert {(r.method, r.host) for r in proxy.requests} == {
        ("CONNECT", _netloc(f.base_url)) for f in fakes
    }


def test_without_the_company_ca_https_fails_as_an_error_not_a_finding(
    fakes: Fakes, company_ca: Path, db_url: str, tmp_path: Path
) -> None:
    report = _audit(fakes, TOKEN, db_url, tmp_path)  # the CA is not named

    assert {p["status"] for p in report["projects"]} == {"error"}
    # nothing was read: no project is added (that waits for its first read), and nothing
    # reads as a release or license finding
    assert report["changes"] == []
    assert {e["project"] for e in report["errors"]} == {
        "Released", "Accel Plugin", "Compiler Toolkit",
    }  # fmt: skip


def test_github_keeps_the_proxy_and_ca_it_read_at_the_start_in_every_thread(
    fakes: Fakes,
    proxy: RecordingProxy,
    company_ca: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The GitHub client reads the environment's proxy and CA bundle once (requests would read
    them on every request) and every thread's connections use what it read, through the
    proxy's tunnel, trusting the company CA. Fails before: a thread started after the
    environment changed read it again (no proxy, a CA file that is not there)."""
    github = fakes[0]
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(company_ca))
    api = GitHubApi(github.base_url, TOKEN, MemoryCache(), GitHubSettings(max_retries=0))
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "not-there.pem"))
    read: list[object] = []

    def read_tree() -> None:  # a thread of its own: its own connection, its own tunnel
        try:
            tree = api.get_json(f"/repos/corp/released/git/trees/{'1' * 40}", immutable=True)
            read.append([entry["path"] for entry in tree.data["tree"]])
        except GitHubError as exc:
            read.append(str(exc))

    try:
        for _ in range(2):
            worker = threading.Thread(target=read_tree)
            worker.start()
            worker.join()
    finally:
        api.close()
    assert read == [["LICENSE"], ["LICENSE"]]
    assert [(r.method, r.host) for r in proxy.requests] == [
        ("CONNECT", _netloc(github.base_url))
    ] * 2


def test_the_request_deadline_holds_through_the_proxy(
    fakes: Fakes,
    proxy: RecordingProxy,
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for fake in fakes:  # every answer held back far past the deadline
        fake.faults = FaultPlan(rules=[FaultRule("delay", path=".", times=99, delay=30.0)])
    monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
    config = CONFIG.replace("settings: {", "settings: {request_deadline: 0.5, ")
    config += "  - name: Kernel DSL\n    pypi: kernel-dsl\n"  # PyPI alone: asked, not skipped
    store = Store(db_url)
    try:
        report = run_audit(
            parse_config(config), store, tmp_path / "r", env=_env(fakes, TOKEN),
            sleep=lambda _s: None,
        ).report.as_json()  # fmt: skip
    finally:
        store.close()
    statuses = {p["name"]: p["status"] for p in report["projects"]}
    # a package-only project whose registry failed read nothing: an error like the others
    assert statuses == {
        "Released": "error", "Accel Plugin": "error", "Compiler Toolkit": "error",
        "Kernel DSL": "error",
    }  # fmt: skip
    assert {e["source"] for e in report["errors"]} == {"github-graphql", "gitee", "gitlab", "pypi"}
    assert all("deadline" in e["error"] for e in report["errors"]), report["errors"]
    assert proxy.hosts() == {_netloc(f.base_url) for f in fakes}


def test_vendor_pages_are_fetched_directly_even_with_a_proxy_set(
    proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
    monkeypatch.setenv("HTTPS_PROXY", proxy.base_url)
    with FakePageServer() as pages:
        pages.set_page("/support.html", b"<h1>Supported</h1>")
        settings = Settings(allow_private_addresses=True)
        with PageFetcher(settings, MemoryCache()) as fetcher:
            page = fetcher.fetch(pages.url("/support.html"))
    assert (page.status, page.body) == (200, "<h1>Supported</h1>")
    assert [r.path for r in pages.requests] == ["/support.html"]
    assert proxy.requests == []


def test_a_proxy_s_credentials_are_never_written() -> None:
    env = {
        "HTTPS_PROXY": "http://corp-user:pr0xy-pa55word@proxy.corp.example:3128",
        "http_proxy": "proxy-admin:0ther-secret@10.0.0.1:8080",
    }
    assert set(secrets_from_env(env)) == {
        "corp-user", "pr0xy-pa55word", "proxy-admin", "0ther-secret",
    }  # fmt: skip
    stream = io.StringIO()
    configure_output(0, False, "text", env, stream=stream)
    logging.getLogger("crawler.test").warning("via %s", env["HTTPS_PROXY"])
    assert stream.getvalue().endswith("via http://***:***@proxy.corp.example:3128\n")
