"""Shared by the schedule, notify and output tests: a small upstream, a loopback webhook."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from crawler_fakes.github import FakeRepo, GitHubState, mit_repo, release_on

TOKEN = "ghp_opsrun_secret_token_0123456789"
PROJECTS = """\
projects:
  - name: Alpha
    repo: org/alpha
  - name: Beta
    repo: org/beta
"""


def upstream(*alpha_tags: str) -> GitHubState:
    """org/alpha with ``alpha_tags`` released, org/beta at v2.0, and org/catalog (no code)."""

    def repo(name: str, repo_id: int, tags: tuple[str, ...]) -> FakeRepo:
        releases = [release_on(t, f"2026-10-0{i + 1}T00:00:00Z") for i, t in enumerate(tags)]
        return mit_repo("org", name, repo_id, releases, head_sha=f"{repo_id:x}" * 40)

    catalog = FakeRepo(owner="org", name="catalog", id=9, head_sha=None, license_text=None)
    return GitHubState(repos=[repo("alpha", 1, alpha_tags), repo("beta", 2, ("v2.0",)), catalog])


class WebhookReceiver:
    """An HTTP server on 127.0.0.1 that keeps every POST (path, headers, JSON body)."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                receiver.posts.append(
                    {"path": self.path, "headers": dict(self.headers), "raw": raw.decode()}
                )
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def json_bodies(self) -> list[dict[str, Any]]:
        return [json.loads(p["raw"]) for p in self.posts]

    def __enter__(self) -> WebhookReceiver:
        self.thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


CREDENTIAL_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN", "CRAWLER_NOTIFY", "CRAWLER_ISSUE_REPO")


def command_line_env(
    monkeypatch: pytest.MonkeyPatch, db_url: str, workdir: Path | None = None
) -> None:
    """``crawler`` as a user runs it, on this test's database: in ``workdir`` (if given), with
    no token, channel or catalog issue leaking in from the environment that runs the tests."""
    if workdir is not None:
        monkeypatch.chdir(workdir)
    monkeypatch.setenv("CRAWLER_DB_URL", db_url)
    for name in CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
