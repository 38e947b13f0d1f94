"""A real git server on loopback: ``git http-backend`` (git's own smart HTTP server, a CGI
program) behind a small CGI bridge, over bare repositories the test makes with the git binary.

Nothing of git's protocol is imitated here: every answer about a repository is git's own.
The bridge adds only what a hosting site adds around it, for the faults a client must
survive: a moved repository (``redirects``: a path prefix answered with a 301 to another),
a dumb HTTP server (``dumb``: the repository's files served as they are, ``info/refs`` as
text), an HTML page (``html``), an answer cut off half-way (``truncate``), a very large one
(``oversize``), and whether the server allows object filters (``allow_filter``) and speaks
protocol v2 (``protocol_v2``: off, the ``Git-Protocol`` header is not passed on, as on an old
server). A request log records what was asked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from crawler_fakes.server import FakeServer, LoopbackService, send_answer

BACKEND_TIMEOUT = 30  # seconds: a test's repositories are tiny


def git_binary() -> str | None:
    """The git program, or None where it is not installed (the tests then skip)."""
    return shutil.which("git")


@dataclass
class GitHttpServer(LoopbackService):
    """``with GitHttpServer(root) as server:`` serves ``root/<path>`` at ``server.url(path)``."""

    root: Path
    allow_filter: bool = True
    protocol_v2: bool = True
    redirects: dict[str, str] = field(default_factory=dict)  # "/old.git" -> "/new.git"
    dumb: set[str] = field(default_factory=set)  # repository paths served as plain files
    html: set[str] = field(default_factory=set)  # repository paths answered by an HTML page
    truncate: set[str] = field(default_factory=set)  # repository paths whose answers are cut
    oversize: dict[str, int] = field(default_factory=dict)  # repository path -> bytes of junk
    log: list[tuple[str, str]] = field(default_factory=list)  # (method, path?query)
    agents: set[str] = field(default_factory=set)  # every User-Agent that asked
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def requests(self, method: str | None = None) -> list[str]:
        with self.lock:
            return [target for verb, target in self.log if method in (None, verb)]


def _matching(paths: set[str] | dict[str, int], target: str) -> str | None:
    return next((p for p in paths if target == p or target.startswith(p.rstrip("/") + "/")), None)


class _Handler(BaseHTTPRequestHandler):
    server: FakeServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the fake keeps its own log."""

    @property
    def fake(self) -> GitHttpServer:
        fake: GitHttpServer = self.server.fake  # type: ignore[attr-defined]
        return fake

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def _answer(self, method: str) -> None:
        fake = self.fake
        with fake.lock:
            fake.log.append((method, self.path))
            fake.agents.add(self.headers.get("User-Agent", ""))
        body = self._body()
        path = urlsplit(self.path).path
        for old, new in fake.redirects.items():
            if path == old or path.startswith(old.rstrip("/") + "/"):
                target = new + self.path[len(old) :]
                send_answer(self, 301, b"moved\n", {"Location": target}, "text/plain")
                return
        if _matching(fake.html, path):
            page = b"<!DOCTYPE html><html><body><h1>Sign in</h1></body></html>"
            send_answer(self, 200, page, {}, "text/html; charset=utf-8")
            return
        if _matching(fake.dumb, path):
            self._dumb(path)
            return
        junk = _matching(fake.oversize, path)
        if junk is not None:
            filler = b"0032" + b"x" * 46
            count = fake.oversize[junk] // len(filler) + 1
            send_answer(self, 200, filler * count, {},
                        "application/x-git-upload-pack-advertisement")  # fmt: skip
            return
        status, headers, answer = self._backend(method, path, body)
        content_type = headers.pop("content-type", "application/octet-stream")
        cut = _matching(fake.truncate, path) is not None
        send_answer(self, status, answer, headers, content_type, truncate=cut)

    def _body(self) -> bytes:
        length = self.headers.get("Content-Length")
        return self.rfile.read(int(length)) if length and length.isdigit() else b""

    def _dumb(self, path: str) -> None:
        """The repository's files as a plain web server serves them (git's dumb protocol)."""
        file = (self.fake.root / path.lstrip("/")).resolve()
        if not file.is_relative_to(self.fake.root.resolve()) or not file.is_file():
            send_answer(self, 404, b"Not Found\n", {}, "text/plain")
            return
        send_answer(self, 200, file.read_bytes(), {}, "text/plain")

    def _backend(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """Run git http-backend for this request (RFC 3875: the request in the environment,
        its body on standard input, the answer's headers then body on standard output)."""
        fake = self.fake
        query = urlsplit(self.path).query
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(fake.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            # the server's own settings, whatever the repository's config says
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(fake.root),
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "uploadpack.allowFilter",
            "GIT_CONFIG_VALUE_0": "true" if fake.allow_filter else "false",
        }
        protocol = self.headers.get("Git-Protocol")
        if protocol and fake.protocol_v2:
            env["GIT_PROTOCOL"] = protocol
        binary = git_binary() or "git"
        done = subprocess.run(
            [binary, "http-backend"], input=body, env=env, capture_output=True,
            timeout=BACKEND_TIMEOUT, check=False,
        )  # fmt: skip
        head, _, answer = done.stdout.partition(b"\r\n\r\n")
        status = 200
        headers: dict[str, str] = {}
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                with contextlib.suppress(ValueError):
                    status = int(value.split()[0])
            elif name:
                headers[name.strip().lower()] = value.strip()
        return status, headers, answer


GitHttpServer.handler = _Handler


class GitWorkRepo:
    """``root/<path>`` (bare, served) fed from a working copy beside it, made with the git
    binary (``git_binary()``: None where git is not installed, and this raises)."""

    def __init__(self, root: Path, path: str) -> None:
        binary = git_binary()
        if binary is None:
            raise RuntimeError("the git binary is not installed")
        self.git = binary
        self.bare = root / path
        self.work = root.parent / "work" / path
        self.work.mkdir(parents=True)
        self.run("init", "-q", "-b", "main", cwd=self.work)
        self.run("init", "-q", "--bare", "-b", "main", str(self.bare), cwd=root)

    def run(self, *args: str, cwd: Path | None = None, when: str | None = None) -> str:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.work),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Dev",
            "GIT_AUTHOR_EMAIL": "dev@example.org",
            "GIT_COMMITTER_NAME": "Dev",
            "GIT_COMMITTER_EMAIL": "dev@example.org",
        }
        if when is not None:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
        done = subprocess.run(
            [self.git, *args], cwd=cwd or self.work, env=env, capture_output=True, text=True,
            check=True, timeout=60,
        )  # fmt: skip
        return done.stdout.strip()

    def commit(
        self, when: str, files: dict[str, str] | None = None, *, branch: str = "main"
    ) -> str:
        """A commit on ``branch`` dated ``when`` (ISO 8601), writing ``files``; its id."""
        current = self.run("symbolic-ref", "--short", "HEAD")
        if current != branch:
            exists = self.run("branch", "--list", branch) != ""
            self.run("checkout", "-q", *([] if exists else ["-b"]), branch)
        for name, text in (files or {}).items():
            target = self.work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            self.run("add", name)
        self.run("commit", "-q", "--allow-empty", "-m", f"change of {when}", when=when)
        return self.run("rev-parse", "HEAD")

    def tag(self, name: str, *, message: str | None = None, when: str | None = None) -> str:
        """A lightweight tag, or an annotated one with ``message``; the tag object's id."""
        annotated = ["-a", "-m", message] if message is not None else []
        self.run("tag", *annotated, name, when=when)
        return self.run("rev-parse", f"refs/tags/{name}")

    def push(self) -> None:
        """Every branch and tag to the served repository (tags removed here removed there)."""
        self.run("push", "-q", "--mirror", str(self.bare))

    def point_head_at(self, branch: str) -> None:
        """The served repository's default branch (what HEAD names), as a forge's setting."""
        self.run("symbolic-ref", "HEAD", f"refs/heads/{branch}", cwd=self.bare)
