"""A Gitee-shaped HTTP server (Open API v5, ``/api/v5``) for tests and the offline demo.

Shapes follow Gitee's published models (https://gitee.com/api/v5/swagger; the same field names
are read by Gitee's own CLI, oschina/gitee-cli, and by go-gitee): a repository's ``html_url``
ends in ``.git``, ``license`` is a plain string, ``status`` is 开始 (active) or 关闭 (closed,
the archived state), ``namespace`` holds the owner; releases carry no web link of their own;
tags carry ``commit.{sha,date}``; contents come base64-encoded. Timestamps carry Gitee's
``+08:00`` offset. Lists take ``page``/``per_page`` (at most 100) and answer ``total_count``
and ``total_page`` headers; releases come oldest first unless ``direction=desc``, tags by name
unless ``sort=updated``. A token is accepted as ``access_token`` or ``Authorization: Bearer``.

What clients depend on is mimicked: ``X-RateLimit-*`` headers on every answer (what gitee-cli
reads) with an anonymous and an authenticated budget, a spent budget answered 403; weak ETags
and 304s (Gitee runs on Rack) that keep the pagination and rate headers; a renamed or moved
repository answering its old path with a 301; faults from a ``FaultPlan``; a request log.
Not verified against the live service: the 301 on renames, the 403 on a spent budget.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from crawler.fakes.faults import RAW_KINDS, FaultPlan, FaultRule, send_raw_fault
from crawler.fakes.gitee_state import (
    Answer,
    GiteeRelease,
    GiteeRepo,
    GiteeState,
    GiteeTag,
    RepoView,
    answer_repo_path,
    cst,
    not_found,
)
from crawler.fakes.replay import Recordings
from crawler.fakes.server import FakeServer, LoopbackService

__all__ = [
    "FakeGitee",
    "FaultPlan",
    "FaultRule",
    "GiteeRelease",
    "GiteeRepo",
    "GiteeRequest",
    "GiteeState",
    "GiteeTag",
    "cst",
    "demo_states",
]
API_PREFIX = "/api/v5"


@dataclass(frozen=True)
class GiteeRequest:
    method: str
    path: str  # with the query string, the token removed
    status: int  # 0: the connection was reset without an answer
    authenticated: bool
    conditional: bool
    fault: str | None = None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.fake.dispatch(self)


class _Server(FakeServer):
    fake: FakeGitee


class FakeGitee(LoopbackService):
    """The server. ``with FakeGitee(state) as gitee:`` runs it on 127.0.0.1."""

    server_class = _Server
    handler = _Handler

    def __init__(
        self,
        state: GiteeState,
        *,
        token: str | None = None,
        web_url: str = "https://gitee.example",
        anonymous_limit: int = 60,
        authenticated_limit: int = 5000,
        faults: FaultPlan | None = None,
    ) -> None:
        self.token = token
        self.web_url = web_url.rstrip("/")
        self.faults = faults
        self.recorded: Recordings | None = None  # real answers served ahead of the state
        self.requests: list[GiteeRequest] = []
        self._lock = threading.Lock()
        reset = int(time.time()) + 3600
        self._limits = {False: anonymous_limit, True: authenticated_limit}
        self._remaining = dict(self._limits)
        self._reset = {False: reset, True: reset}
        self.state = state
        self.base_url = ""

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        return self.base_url + API_PREFIX

    def env(self, token: str | None = None) -> dict[str, str]:
        """The environment that points the crawler at this server."""
        return {"GITEE_API_URL": self.api_url, **({"GITEE_TOKEN": token} if token else {})}

    def set_state(self, state: GiteeState) -> None:
        with self._lock:
            self.state = state

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()

    def set_rate_limit(self, remaining: int, *, authenticated: bool = False) -> None:
        with self._lock:
            self._remaining[authenticated] = max(0, remaining)

    # -- requests ------------------------------------------------------------------------------

    def find(self, name: str) -> GiteeRepo | None:
        """The repository answering to this current or former path, case-insensitively."""
        key = name.lower()
        with self._lock:
            repos = list(self.state.repos)
        current = [r for r in repos if r.full_name.lower() == key]
        former = [r for r in repos if f"{r.owner}/{r.name}".lower() == key]
        return next(iter(current or former), None)

    def dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        split = urlsplit(handler.path)
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        given = params.pop("access_token", None)
        scheme, _, bearer = handler.headers.get("Authorization", "").partition(" ")
        if scheme.lower() in ("bearer", "token") and bearer.strip():
            given = bearer.strip()
        authenticated = given is not None
        conditional = bool(handler.headers.get("If-None-Match"))
        shown = re.sub(r"access_token=[^&]*&?", "", handler.path).rstrip("?&")
        fault = self.faults.pick("GET", shown) if self.faults else None

        def log(status: int) -> None:
            record = GiteeRequest("GET", shown, status, authenticated, conditional,
                                  fault.kind if fault else None)  # fmt: skip
            with self._lock:
                self.requests.append(record)

        if fault is not None and fault.kind == "delay":
            time.sleep(fault.delay if fault.delay is not None else self.faults.delay)  # type: ignore[union-attr]
        if fault is not None and fault.kind == "reset":
            log(0)
            with contextlib.suppress(OSError):
                handler.connection.close()
            handler.close_connection = True
            return
        if self.recorded is not None:
            served = self.recorded.serve(handler, "GET", self.base_url)
            if served is not None:
                log(served)
                return

        if fault is not None and fault.kind in RAW_KINDS:
            log(302 if fault.kind == "redirect" else 200)
            send_raw_fault(handler, fault)
            return
        if authenticated and self.token is not None and given != self.token:
            answer = Answer(401, {"message": "401 Unauthorized: Access token does not exist"})
        elif fault is not None and fault.kind not in ("delay", "truncate"):
            answer = self._fault(fault)
        else:
            answer = self._route(split.path, params, split.query)
        answer = self._charge(answer, authenticated)
        body = answer.body if isinstance(answer.body, bytes) else _json(answer.body)
        if answer.status == 200 and answer.content_type.startswith("application/json"):
            identity = hashlib.sha256((given or "anonymous").encode()).hexdigest()
            etag = 'W/"' + hashlib.md5(body + identity.encode()).hexdigest() + '"'
            answer.headers["ETag"] = etag
            answer.headers["Cache-Control"] = "max-age=0, private, must-revalidate"
            sent = {t.strip() for t in (handler.headers.get("If-None-Match") or "").split(",")}
            if etag in sent:
                answer.status = 304  # Rack keeps the other headers, pagination included
        log(answer.status)
        self._send(handler, answer, body, truncate=fault is not None and fault.kind == "truncate")

    def _route(self, path: str, params: dict[str, str], query: str) -> Answer:
        match = re.fullmatch(rf"{API_PREFIX}/repos/([^/]+)/([^/]+)(/.*)?", path)
        if not match:
            return not_found()
        asked, sub = f"{unquote(match[1])}/{unquote(match[2])}", match[3] or ""
        repo = self.find(asked)
        if repo is None:
            return not_found("Not Found Project")
        if repo.full_name.lower() != asked.lower():
            location = f"{self.api_url}/repos/{repo.full_name}{sub}"
            location += f"?{query}" if query else ""
            return Answer(301, {"message": "Moved Permanently"}, {"Location": location})
        return answer_repo_path(RepoView(repo, self.api_url, self.web_url), sub, params)

    def _fault(self, fault: FaultRule) -> Answer:
        plan = self.faults
        retry = str(fault.retry_after or (plan.retry_after if plan else 1))
        if fault.kind == "status_500":
            return Answer(500, {"message": "500 Internal Server Error"})
        if fault.kind == "status_502":
            return Answer(502, b"<html><body><h1>502 Bad Gateway</h1></body></html>",
                           content_type="text/html")  # fmt: skip
        if fault.kind == "html_200":
            page = b"<!DOCTYPE html><html><head><title>Gitee</title></head><body></body></html>"
            return Answer(200, page, content_type="text/html; charset=utf-8")
        status = 429 if fault.kind == "rate_429" else 403
        return Answer(status, {"message": "Too Many Requests"}, {"Retry-After": retry})

    def _charge(self, answer: Answer, authenticated: bool) -> Answer:
        with self._lock:
            now = int(time.time())
            if now >= self._reset[authenticated]:
                self._remaining[authenticated] = self._limits[authenticated]
                self._reset[authenticated] = now + 3600
            if self._remaining[authenticated] <= 0:
                answer = Answer(403, {"message": "Rate Limit Exceeded"})
            else:
                self._remaining[authenticated] -= 1
            answer.headers.update(
                {
                    "X-RateLimit-Limit": str(self._limits[authenticated]),
                    "X-RateLimit-Remaining": str(self._remaining[authenticated]),
                    "X-RateLimit-Reset": str(self._reset[authenticated]),
                }
            )
        return answer

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler, answer: Answer, body: bytes, *, truncate: bool
    ) -> None:
        handler.send_response(answer.status)
        for name, value in answer.headers.items():
            handler.send_header(name, value)
        if answer.status != 304:
            handler.send_header("Content-Type", answer.content_type)
            handler.send_header("Content-Length", str(len(body)))
        if truncate:
            handler.send_header("Connection", "close")
            handler.close_connection = True
        handler.end_headers()
        if answer.status != 304:
            handler.wfile.write(body[: len(body) // 2] if truncate else body)


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


# -- the offline demo ---------------------------------------------------------------------------


def demo_states(license_text: str) -> tuple[GiteeState, GiteeState]:
    """Two nights of a small Gitee organisation for ``crawler demo``: a plugin with releases
    (a new release and a release candidate the second night) and README pins, and a toolkit
    tracked by tag (a new tag, then archived). ``license_text`` is a standard license text
    (the demo takes it from the installed license data)."""

    def world(second: bool) -> GiteeState:
        plugin = GiteeRepo(
            owner="demo-vendor", name="accel-plugin", id=7301, license="Apache-2.0",
            head_sha="a1" * 20, head_date="2026-10-02T01:00:00Z",
            releases=[GiteeRelease("v0.27.0", "2026-09-20T02:00:00Z", "v0.27.0"),
                      GiteeRelease("v0.27.1", "2026-10-02T02:00:00Z", "v0.27.1")],
            files={"LICENSE": license_text,
                   "README.md": "# Accel plugin\n\nRequires vllm >=0.27.1,<0.28.0 and "
                                "runtime >=4.2.0.\n"},
        )  # fmt: skip
        toolkit = GiteeRepo(
            owner="demo-vendor", name="kernel-toolkit", id=7302, license=None,
            head_sha="b2" * 20, head_date="2026-09-10T01:00:00Z",
            tags=[GiteeTag("v1.0.0", "c3" * 20, "2026-08-01T00:00:00Z")],
            files={"LICENSE": license_text + "\nThe logo is not covered by this license.\n"},
        )  # fmt: skip
        if second:
            plugin.releases += [
                GiteeRelease("v0.28.0rc1", "2026-10-20T02:00:00Z", prerelease=True),
                GiteeRelease("v0.27.2", "2026-10-21T02:00:00Z", "v0.27.2"),
            ]
            plugin.files["README.md"] = plugin.files["README.md"].replace("<0.28.0", "<0.29.0")
            toolkit.tags.append(GiteeTag("v1.1.0", "d4" * 20, "2026-10-15T00:00:00Z"))
            toolkit.status = "关闭"
        return GiteeState([plugin, toolkit])

    return world(False), world(True)
