"""A GitLab-shaped HTTP server (REST API v4) for tests and the offline demo. Standard library.

``FakeGitLab`` serves, under ``/api/v4``, what the crawler reads, with the field names of
GitLab's API documentation: ``/projects/:id`` (numeric id or URL-encoded path; ``license=true``
adds ``license`` and ``license_url``), ``/projects/:id/releases``, ``/repository/tags``,
``/repository/branches/:branch``, ``/repository/tree?ref=`` (one directory, paginated) and
``/repository/files/:path?ref=`` (the JSON itself is
built in ``crawler_fakes.gitlab_state``).
It mimics what clients depend on: offset pagination (``page``/``per_page``, ``Link`` and
``x-page``/``x-next-page``/``x-total`` headers), ``PRIVATE-TOKEN`` authentication (401 for a
wrong token, 404 for a private project without one), weak ETags answered 304 (keeping the
pagination headers, as Rack does), ``RateLimit-*`` headers on every answer and a 429
``Retry later`` with ``Retry-After`` once the budget is spent, a 301 to ``/projects/<id>``
for a project's old path after a rename or transfer, ``upcoming_release`` for a release dated
after ``now``, and faults from a ``FaultPlan``. Web links use ``web_url`` (default: the
server's own address), so tests can tell links the answers gave from links built elsewhere.
"""

from __future__ import annotations

import email.utils
import hashlib
import math
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from crawler_fakes.faults import RAW_KINDS, FaultPlan, FaultRule, send_raw_fault
from crawler_fakes.gitlab_state import (
    DEMO_CONFIG,
    DEMO_NOW,
    GitLabProject,
    GitLabRelease,
    GitLabState,
    GitLabTag,
    ProjectView,
    demo_state,
    epoch,
)
from crawler_fakes.replay import Recordings
from crawler_fakes.server import FakeServer, LoopbackService, abort, compact_json, send_answer

__all__ = [
    "DEMO_CONFIG",
    "DEMO_NOW",
    "FakeGitLab",
    "FaultPlan",
    "FaultRule",
    "GitLabProject",
    "GitLabRelease",
    "GitLabState",
    "GitLabTag",
    "RequestRecord",
    "demo_state",
]


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str  # as sent, query string included
    status: int  # 0 when the connection was reset without an answer
    authenticated: bool
    conditional: bool
    fault: str | None = None


@dataclass
class _Resp:
    status: int
    body: Any = None  # JSON value, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


def _error(status: int, message: str) -> _Resp:
    return _Resp(status, {"message": message})


# ------------------------------------------------------------------------------------ server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "nginx"
    sys_version = ""

    def setup(self) -> None:
        super().setup()  # headers and body go out in two writes: no Nagle delay between them
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        self.server.fake.dispatch(self)  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(FakeServer):
    fake: FakeGitLab


class FakeGitLab(LoopbackService):
    """``with FakeGitLab(state) as gl:`` serves ``state`` on 127.0.0.1 until the block ends."""

    server_class = _Server
    handler = _Handler

    def __init__(
        self,
        state: GitLabState,
        *,
        token: str | None = None,
        web_url: str | None = None,
        link_origin: str | None = None,  # Link headers on another origin (a bad external_url)
        rate_limit: int = 2000,
        now: str | None = None,
        faults: FaultPlan | None = None,
    ) -> None:
        self.state = state
        self.token = token
        self._web_url = web_url
        self.link_origin = link_origin
        self.now = now
        self.faults = faults
        self.recorded: Recordings | None = None  # real answers served ahead of the state
        self.requests: list[RequestRecord] = []
        self.rate_limit = rate_limit
        self._remaining = rate_limit
        self._reset = int(time.time()) + 60
        self._lock = threading.Lock()
        self.base_url = ""

    @property
    def web_url(self) -> str:
        return (self._web_url or self.base_url).rstrip("/")

    def env(self, token: str | None = None) -> dict[str, str]:
        """The environment that points the crawler at this server as its default instance."""
        return {"GITLAB_URL": self.base_url, **({"GITLAB_TOKEN": token} if token else {})}

    def set_state(self, state: GitLabState) -> None:
        with self._lock:
            self.state = state

    def set_rate_limit(self, remaining: int, reset_in: int = 60) -> None:
        with self._lock:
            self._remaining = max(0, min(remaining, self.rate_limit))
            self._reset = int(time.time()) + reset_in

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()

    # ---- requests

    def dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        target = handler.path
        given = handler.headers.get("PRIVATE-TOKEN") or ""
        bearer = handler.headers.get("Authorization", "")
        given = given or bearer.removeprefix("Bearer ").strip()
        conditional = bool(handler.headers.get("If-None-Match"))
        fault = self.faults.pick("GET", target) if self.faults else None

        def log(status: int) -> None:
            record = RequestRecord(
                "GET", target, status, bool(given), conditional, fault.kind if fault else None
            )
            with self._lock:
                self.requests.append(record)

        if fault is not None and fault.kind == "delay":
            plan_delay = self.faults.delay if self.faults else 0.0
            time.sleep(fault.delay if fault.delay is not None else plan_delay)
        if fault is not None and fault.kind == "reset":
            log(0)
            abort(handler)
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
        remaining, reset = self._charge()
        try:
            if given and given != self.token:
                resp = _error(401, "401 Unauthorized")
            elif remaining < 0:
                resp = _Resp(429, b"Retry later\n", {"Retry-After": str(reset - int(time.time()))})
                resp.content_type = "text/plain"
            elif fault is not None and fault.kind not in ("delay", "truncate"):
                resp = self._fault(fault)
            else:
                resp = self._answer(handler, target, authenticated=bool(given))
        except Exception as exc:  # a bug in the fake: answer it instead of dropping the socket
            resp = _error(500, f"fake GitLab error: {exc!r}")
        # a throttled answer says the budget is spent, whatever the counter held
        spent = resp.status == 429
        rate = self._rate_headers(0 if spent else remaining, reset, authenticated=bool(given))
        resp.headers = {**rate, **resp.headers}
        log(resp.status)  # before answering: a client may read the log right after
        _send(handler, resp, truncate=fault is not None and fault.kind == "truncate")

    def _charge(self) -> tuple[int, int]:
        """Count the request (every answered request counts, 304s too): what is left (-1 when
        it was already spent) and when the window resets."""
        with self._lock:
            now = int(time.time())
            if now >= self._reset:
                self._remaining, self._reset = self.rate_limit, now + 60
            self._remaining = max(-1, self._remaining - 1)
            return self._remaining, self._reset

    def _rate_headers(self, remaining: int, reset: int, authenticated: bool) -> dict[str, str]:
        kind = "authenticated" if authenticated else "unauthenticated"
        left = max(remaining, 0)
        return {
            "RateLimit-Name": f"throttle_{kind}_api",
            "RateLimit-Limit": str(self.rate_limit),
            "RateLimit-Observed": str(self.rate_limit - left),
            "RateLimit-Remaining": str(left),
            "RateLimit-Reset": str(reset),
            "RateLimit-ResetTime": email.utils.formatdate(reset, usegmt=True),
        }

    def _fault(self, fault: FaultRule) -> _Resp:
        if fault.kind == "status_500":
            return _error(500, "500 Internal Server Error")
        if fault.kind == "status_502":
            page = b"<html><body><h1>502 Bad Gateway</h1></body></html>\n"
            return _Resp(502, page, content_type="text/html")
        if fault.kind == "html_200":
            page = b"<!DOCTYPE html><html><body>Sign in &middot; GitLab</body></html>\n"
            return _Resp(200, page, content_type="text/html; charset=utf-8")
        retry = fault.retry_after or (self.faults.retry_after if self.faults else 1)
        return _Resp(429, b"Retry later\n", {"Retry-After": str(retry)}, "text/plain")

    def _answer(self, handler: BaseHTTPRequestHandler, target: str, authenticated: bool) -> _Resp:
        split = urlsplit(target)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        parts = split.path.split("/")  # raw: an encoded "%2F" stays inside its segment
        if parts[:4] != ["", "api", "v4", "projects"] or len(parts) < 5:
            return _error(404, "404 Not Found")
        ident, rest = unquote(parts[4]), parts[5:]
        with self._lock:
            state = self.state
        key = ident.lower()  # GitLab finds paths case-insensitively
        project = next((p for p in state.projects if key in (str(p.id), p.path.lower())), None)
        moved = None
        if project is None:
            moved = next(
                (p for p in state.projects if key in (o.lower() for o in p.old_paths)), None
            )
        if moved is not None and not (moved.private and not authenticated):
            location = f"{self.base_url}/api/v4/projects/{moved.id}"  # the query is not kept
            body = f"This resource has been moved permanently to {location}.".encode()
            return _Resp(301, body, {"Location": location}, "text/plain")
        if project is None or (project.private and not authenticated):
            return _error(404, "404 Project Not Found")
        resp = self._route(project, rest, query, f"{self.base_url}{split.path}")
        if resp.status == 200:
            body = resp.body if isinstance(resp.body, bytes) else compact_json(resp.body)
            resp.body = body
            etag = 'W/"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            resp.headers["ETag"] = etag
            given = {t.strip() for t in (handler.headers.get("If-None-Match") or "").split(",")}
            if etag in given or etag.removeprefix("W/") in given:
                resp = _Resp(304, None, resp.headers)  # pagination headers are kept
        return resp

    def _route(
        self, project: GitLabProject, rest: list[str], query: dict[str, str], here: str
    ) -> _Resp:
        view = ProjectView(project, self.web_url, f"{self.base_url}/api/v4", self.now)
        sub = "/".join(rest[:2])
        if not rest:
            return _Resp(200, view.project_json(query.get("license") == "true"))
        if rest == ["releases"]:
            items = sorted(project.releases, key=lambda r: epoch(r.released_at))
            if query.get("sort", "desc") == "desc":
                items.reverse()
            return self._page([view.release_json(r) for r in items], query, here)
        if sub == "repository/tags" and len(rest) == 2:
            by_name = query.get("order_by") == "name"
            tags = sorted(project.tags, key=lambda t: t.name if by_name else epoch(t.date))
            if query.get("sort", "desc") == "desc":
                tags.reverse()
            return self._page([view.tag_json(t) for t in tags], query, here)
        if sub == "repository/branches" and len(rest) == 3:
            if project.head_sha is None or unquote(rest[2]) != project.default_branch:
                return _error(404, "404 Branch Not Found")
            return _Resp(200, view.branch_json())
        if rest == ["repository", "tree"]:
            texts = project.tree()
            if query.get("ref") in project.ref_files:
                texts = project.ref_files[query["ref"]]
            refs = (project.default_branch, "HEAD", project.head_sha, *project.ref_files)
            if project.head_sha is None or query.get("ref", project.default_branch) not in refs:
                return _error(404, "404 Tree Not Found")
            entries = view.tree_json(texts, query.get("path", ""))
            return self._page(entries, query, here)
        if sub == "repository/files" and len(rest) == 3:
            path, texts = unquote(rest[2]), project.tree()
            if query.get("ref") in project.ref_files:
                texts = project.ref_files[query["ref"]]
            refs = (project.default_branch, "HEAD", project.head_sha, *project.ref_files)
            if query.get("ref") not in refs or path not in texts:
                return _error(404, "404 File Not Found")
            return _Resp(200, view.file_json(path, texts[path], query["ref"]))
        return _error(404, "404 Not Found")

    def _page(self, items: list[Any], query: dict[str, str], here: str) -> _Resp:
        """One page of a list, with GitLab's offset pagination headers."""
        per_page = max(1, min(100, int(query.get("per_page") or 20)))
        page = max(1, int(query.get("page") or 1))
        pages = max(1, math.ceil(len(items) / per_page))
        base = here
        if self.link_origin:
            base = self.link_origin.rstrip("/") + urlsplit(here).path

        def link(number: int, rel: str) -> str:
            return (
                f'<{base}?{urlencode(sorted({**query, "page": str(number)}.items()))}>; rel="{rel}"'
            )

        rels = [(page - 1, "prev")] if page > 1 else []
        rels += [(page + 1, "next")] if page < pages else []
        rels += [(1, "first"), (pages, "last")]
        headers = {
            "Link": ", ".join(link(n, rel) for n, rel in rels),
            "x-page": str(page), "x-per-page": str(per_page),
            "x-next-page": str(page + 1) if page < pages else "",
            "x-prev-page": str(page - 1) if page > 1 else "",
            "x-total": str(len(items)), "x-total-pages": str(pages),
        }  # fmt: skip
        return _Resp(200, items[(page - 1) * per_page : page * per_page], headers)




def _send(handler: BaseHTTPRequestHandler, resp: _Resp, *, truncate: bool) -> None:
    body = resp.body
    if body is not None and not isinstance(body, bytes):
        body = compact_json(body)
    send_answer(handler, resp.status, body, resp.headers, resp.content_type, truncate=truncate)
