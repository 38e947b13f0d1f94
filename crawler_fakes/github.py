"""A GitHub-shaped HTTP server for tests, the offline demo and benchmarks.

``FakeGitHub`` serves the REST v3 endpoints the crawler reads, the issues endpoints it writes
(``crawler_fakes.github_issues``) and ``POST /graphql`` (see
``crawler_fakes.github_graphql``) from a plain in-memory ``GitHubState`` that can be swapped
between audits with ``set_state``. It mimics what clients depend on: rate-limit headers and
budgets (anonymous and authenticated apart, free authenticated 304s), caller-specific ETags,
``Link`` pagination, 301s for renamed repositories, 404/409 bodies, git blob SHAs, an unsorted
release list, and deterministic fault injection (``FaultPlan``).

State objects may also be mutated in place between requests (the name index heals itself).
Deliberate simplifications: one tree per repository (every commit and tag sees the current
files), draft releases are listed to every caller, and ``Last-Modified`` is only sent where the
body is fixed by a commit (commits, branches).
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import hashlib
import math
import multiprocessing
import re
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal, cast
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from crawler_fakes.faults import (
    FAULT_KINDS,
    RAW_KINDS,
    FaultKind,
    FaultPlan,
    FaultRule,
    send_raw_fault,
)
from crawler_fakes.github_app import FakeApp
from crawler_fakes.github_issues import FakeComment, FakeIssue, IssueTracker
from crawler_fakes.github_state import (
    FakeRelease,
    FakeRepo,
    FakeTag,
    GitHubState,
    RepoView,
    _b64_lines,
    _epoch,
    _iso,
    git_blob_sha,
    latest_release,
    mit_repo,
    node_id,
    release_on,
)
from crawler_fakes.replay import Recordings
from crawler_fakes.server import FakeServer, LoopbackService, abort, compact_json, send_answer
from crawler_fakes.synthetic import synthetic_state

__all__ = [
    "FAULT_KINDS",
    "FakeApp",
    "FakeComment",
    "FakeGitHub",
    "FakeIssue",
    "FakeRelease",
    "FakeRepo",
    "FakeTag",
    "FaultKind",
    "FaultPlan",
    "FaultRule",
    "GitHubState",
    "IssueTracker",
    "PointsUsed",
    "RepoView",
    "RequestRecord",
    "git_blob_sha",
    "latest_release",
    "mit_repo",
    "node_id",
    "release_on",
    "synthetic_state",
]

# ------------------------------------------------------------------------------ records/budget


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str  # including the query string
    status: int  # 0 when the connection was reset without an answer
    authenticated: bool
    conditional: bool  # carried If-None-Match or If-Modified-Since
    graphql_cost: int = 0
    fault: str | None = None
    received_at: float = 0.0  # time.monotonic() when the request arrived
    # the fake's own CPU time on this request (routing, GraphQL execution, JSON: its thread's
    # time, and a GraphQL worker process's on it, so neither the latency nor waiting for the
    # GIL counts): what the fake adds
    service_seconds: float = 0.0


@dataclass(frozen=True)
class PointsUsed:
    core_authenticated: int
    core_anonymous: int
    graphql: int


@dataclass
class _Bucket:
    limit: int
    remaining: int
    reset: int

    def refresh(self) -> None:
        now = int(time.time())
        if now >= self.reset:
            self.remaining, self.reset = self.limit, now + 3600

    def doc(self) -> dict[str, int]:
        used = self.limit - self.remaining
        return {"limit": self.limit, "used": used, "remaining": self.remaining, "reset": self.reset}


@dataclass
class _Resp:
    status: int
    body: Any = None  # JSON value, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    last_modified: str | None = None  # ISO timestamp
    content_type: str = "application/json; charset=utf-8"


_DOCS = "https://docs.github.com/rest"


def _error(status: int, message: str, doc: str = _DOCS) -> _Resp:
    return _Resp(status, {"message": message, "documentation_url": doc, "status": str(status)})


def _not_found(doc: str = _DOCS) -> _Resp:
    return _error(404, "Not Found", doc)


_EMPTY = "Git Repository is empty."
_REPO_DOC = "https://docs.github.com/rest/repos/repos#get-a-repository"
# the API's own paths: never a web page, even with the pages on the API's host
_API_PATHS = ("/repos/", "/repositories/", "/rate_limit", "/user", "/users/", "/app",
              "/installation", "/orgs/", "/search/", "/api/")  # fmt: skip
_SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID."
)
_UNICORN = (
    b"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Unicorn! &middot; GitHub</title>"
    b"</head><body><h1>No server is currently available to service your request.</h1>"
    b"<p>Sorry about that. Please try refreshing and contact us if the problem persists.</p>"
    b"</body></html>\n"
)


# ------------------------------------------------------------------------------------ REST API


def _release_json(view: RepoView, rel: FakeRelease) -> dict[str, Any]:
    rid = int(hashlib.sha1(f"{view.repo.id}/{rel.tag}".encode()).hexdigest()[:7], 16)
    tag = quote(rel.tag, safe="")
    return {
        "url": f"{view.api}/releases/{rid}",
        "assets_url": f"{view.api}/releases/{rid}/assets",
        "upload_url": f"{view.api}/releases/{rid}/assets{{?name,label}}",
        "html_url": f"{view.html}/releases/tag/{tag}",
        "id": rid,
        "node_id": node_id("RE", rid),
        "author": {"login": view.repo.owner, "id": view.repo.id, "type": "User"},
        "tag_name": rel.tag,
        "target_commitish": view.repo.default_branch,
        "name": rel.name,
        "draft": rel.draft,
        "prerelease": rel.prerelease,
        "created_at": rel.created_at,
        "published_at": rel.published_at,
        "assets": [],
        "tarball_url": f"{view.api}/tarball/{tag}",
        "zipball_url": f"{view.api}/zipball/{tag}",
        "body": "",
    }


def _commit_json(view: RepoView, sha: str, date: str) -> dict[str, Any]:
    who = {"name": "Fake Developer", "email": "dev@example.invalid", "date": date}
    return {
        "sha": sha,
        "node_id": node_id("C", sha),
        "commit": {"message": f"Commit {sha[:7]}", "author": who, "committer": dict(who)},
        "url": f"{view.api}/commits/{sha}",
        "html_url": f"{view.html}/commit/{sha}",
        "parents": [],
    }


def _file_json(
    view: RepoView, path: str, sha: str, data: bytes | None, ref: str | None = None
) -> dict[str, Any]:
    branch = ref or view.repo.default_branch
    content = data or b""
    return {
        "name": path.rpartition("/")[2],
        "path": path,
        "sha": sha,
        "size": len(content),
        "url": f"{view.api}/contents/{quote(path)}?ref={branch}",
        "html_url": f"{view.html}/blob/{branch}/{quote(path)}",
        "git_url": f"{view.api}/git/blobs/{sha}",
        "download_url": f"{view.raw}/{branch}/{quote(path)}",
        "type": "file",
        "content": _b64_lines(content),
        "encoding": "base64",
    }


def _repo_json(view: RepoView) -> dict[str, Any]:
    repo = view.repo
    owner, _, name = view.full_name.partition("/")
    pushed = view.pushed_at()
    return {
        "id": repo.id,
        "node_id": node_id("R", repo.id),
        "name": name,
        "full_name": view.full_name,
        "private": False,
        "owner": {"login": owner, "id": repo.id * 7 + 1, "type": "Organization"},
        "html_url": view.html,
        "description": repo.description,
        "fork": False,
        "url": view.api,
        "created_at": "2019-01-01T00:00:00Z",
        "updated_at": pushed,
        "pushed_at": pushed,
        "default_branch": repo.default_branch,
        "archived": repo.archived,
        "disabled": False,
        "visibility": "public",
        "license": view.license_verdict(),
        "topics": [],
    }


def _paginate(items: list[Any], query: list[tuple[str, str]], link_base: str) -> _Resp:
    params = dict(query)
    try:
        per_page = min(max(int(params.get("per_page", "30")), 1), 100)
    except ValueError:
        per_page = 30
    try:
        page = max(int(params.get("page", "1")), 1)
    except ValueError:
        page = 1
    last = max(math.ceil(len(items) / per_page), 1)
    resp = _Resp(200, items[(page - 1) * per_page : page * per_page])
    others = [(k, v) for k, v in query if k != "page"]

    def link(number: int, rel: str) -> str:
        return f'<{link_base}?{urlencode([*others, ("page", str(number))])}>; rel="{rel}"'

    links = []
    if page > 1:
        links.append(link(min(page - 1, last), "prev"))
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links.append(link(1, "first"))
    if links:
        resp.headers["Link"] = ", ".join(links)
    return resp


def _rest(  # noqa: C901  (a router: one branch per REST endpoint the fake answers)
    view: RepoView, sub: str, query: list[tuple[str, str]], link_base: str
) -> _Resp:
    """Answer ``/repos/{o}/{r}{sub}`` for one repository."""
    repo = view.repo
    params = dict(query)
    if sub in ("", "/"):
        return _Resp(200, _repo_json(view))
    if sub == "/releases":
        order = sorted(repo.releases, key=lambda r: hashlib.sha1(r.tag.encode()).hexdigest())
        return _paginate([_release_json(view, r) for r in order], query, link_base)
    if sub == "/releases/latest":
        latest = latest_release(repo.releases)
        return _Resp(200, _release_json(view, latest)) if latest else _not_found()
    if sub.startswith("/releases/tags/"):
        tag = unquote(sub.removeprefix("/releases/tags/"))
        found = [r for r in repo.releases if r.tag == tag and not r.draft]
        return _Resp(200, _release_json(view, found[0])) if found else _not_found()
    if sub == "/tags":
        items = [
            {
                "name": t.name,
                "zipball_url": f"{view.api}/zipball/refs/tags/{quote(t.name)}",
                "tarball_url": f"{view.api}/tarball/refs/tags/{quote(t.name)}",
                "commit": {"sha": t.sha, "url": f"{view.api}/commits/{t.sha}"},
                "node_id": node_id("REF", f"{repo.id}/{t.name}"),
            }
            for t in sorted(repo.tags, key=lambda t: -_epoch(t.date))
        ]
        return _paginate(items, query, link_base)
    if sub == "/commits" or sub.startswith("/commits/"):
        if view.empty:
            return _error(409, _EMPTY)
        ref = unquote(sub.removeprefix("/commits").lstrip("/")) or params.get("sha", "HEAD")
        start = view.resolve_commit(ref)
        if start is None:
            return _error(422, f"No commit found for SHA: {ref}")
        if sub.startswith("/commits/"):
            return _Resp(200, _commit_json(view, *start), last_modified=start[1])
        history = [c for c in view.commits() if _epoch(c[1]) <= _epoch(start[1])]
        resp = _paginate([_commit_json(view, *c) for c in history], query, link_base)
        resp.last_modified = start[1]
        return resp
    if sub.startswith("/branches/"):
        branch = unquote(sub.removeprefix("/branches/"))
        if view.empty or branch != repo.default_branch or repo.head_sha is None:
            return _error(404, "Branch not found")
        date = repo.head_date or "1970-01-01T00:00:00Z"
        commit = _commit_json(view, repo.head_sha, date)
        payload = {"name": branch, "commit": commit, "protected": False}
        return _Resp(200, payload, last_modified=date)
    if sub == "/license":
        path = repo.license_path
        verdict = view.license_verdict()
        if path is None or path not in view.files or verdict is None:
            return _not_found()
        sha, data = view.files[path]
        return _Resp(200, {**_file_json(view, path, sha, data), "license": verdict})
    if sub.startswith("/git/trees/"):
        if view.empty:
            return _error(409, _EMPTY)
        ref = unquote(sub.removeprefix("/git/trees/"))
        directory = view.tree_dir_by_sha(ref)
        if directory is None and view.resolve_commit(ref) is not None:
            directory = ""
        if directory is None:
            return _not_found()
        return _Resp(200, _tree_json(view, directory, params.get("recursive") not in (None, "0")))
    if sub.startswith("/git/blobs/"):
        blob_sha = sub.removeprefix("/git/blobs/")
        blob = view.blob_by_sha(blob_sha)
        if blob is None:
            return _not_found()
        content = blob[1] or b""
        return _Resp(
            200,
            {
                "sha": blob_sha,
                "size": len(content),
                "node_id": node_id("B", blob_sha),
                "url": f"{view.api}/git/blobs/{blob_sha}",
                "content": _b64_lines(content),
                "encoding": "base64",
            },
        )
    if sub == "/contents" or sub.startswith("/contents/"):
        if view.empty:
            return _error(404, "This repository is empty.")
        at = params.get("ref")
        path = unquote(sub.removeprefix("/contents")).strip("/")
        if at is not None and at in view.repo.ref_files:
            text = view.repo.ref_files[at].get(path)
            if text is None:
                return _not_found()
            data = text.encode()
            return _Resp(200, _file_json(view, path, git_blob_sha(data), data, ref=at))
        if at is not None and view.resolve_commit(at) is None:
            return _error(404, f"No commit found for the ref {at}")
        path = unquote(sub.removeprefix("/contents")).strip("/")
        if path in view.files:
            sha, data = view.files[path]
            return _Resp(200, _file_json(view, path, sha, data))
        if path in view.dirs:
            listing = []
            for name, (kind, sha) in sorted(view.dirs[path].items()):
                full = f"{path}/{name}" if path else name
                entry = _file_json(view, full, sha, view.files.get(full, ("", None))[1])
                entry.pop("content"), entry.pop("encoding")
                listing.append({**entry, "type": "file" if kind == "blob" else "dir"})
            return _Resp(200, listing)
        return _not_found()
    return _not_found()


def _tree_json(view: RepoView, directory: str, recursive: bool) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []

    def walk(current: str, prefix: str) -> None:
        for name, (kind, sha) in sorted(view.dirs[current].items()):
            path = prefix + name
            if kind == "blob":
                data = view.files[f"{current}/{name}" if current else name][1]
                size = len(data) if data is not None else int(sha[:3], 16) + 100
                entries.append(
                    {
                        "path": path,
                        "mode": "100644",
                        "type": "blob",
                        "sha": sha,
                        "size": size,
                        "url": f"{view.api}/git/blobs/{sha}",
                    }
                )
            else:
                entries.append(
                    {
                        "path": path,
                        "mode": "040000",
                        "type": "tree",
                        "sha": sha,
                        "url": f"{view.api}/git/trees/{sha}",
                    }
                )
                if recursive:
                    walk(f"{current}/{name}" if current else name, path + "/")

    walk(directory, "")
    sha = view.tree_sha(directory)
    return {"sha": sha, "url": f"{view.api}/git/trees/{sha}", "tree": entries, "truncated": False}


# -------------------------------------------------------------------------------------- server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "GitHub.com"
    sys_version = ""
    timeout = 60

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._fake().track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self._fake().track(self.connection, False)

    def _fake(self) -> FakeGitHub:
        return cast(_Server, self.server).fake

    def send_response(self, code: int, message: str | None = None) -> None:
        # the answer starts: this request is no longer in flight (the client may send its next
        # one as soon as it has read this answer, before this thread returns from dispatch)
        self._fake().answering(self)
        super().send_response(code, message)

    def do_GET(self) -> None:
        self._fake().dispatch(self, "GET")

    def do_POST(self) -> None:
        self._fake().dispatch(self, "POST")

    def do_PATCH(self) -> None:
        self._fake().dispatch(self, "PATCH")

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(FakeServer):
    fake: FakeGitHub


def _unserved(make_state: Callable[[], GitHubState]) -> FakeGitHub:
    """A fake that serves no socket: a GraphQL worker process's (``execute_graphql_in``)."""
    return FakeGitHub(make_state())


class FakeGitHub(LoopbackService):
    """The server. ``with FakeGitHub(state) as gh:`` starts it on 127.0.0.1 and stops it."""

    server_class = _Server
    handler = _Handler

    def __init__(
        self,
        state: GitHubState,
        *,
        token: str | None = None,
        unauth_limit: int = 60,
        auth_limit: int = 5000,
        graphql_limit: int = 5000,
        latency: float = 0.0,
        faults: FaultPlan | None = None,
        max_graphql_aliases: int | None = None,
        web_url: str = "https://github.com",
        app: FakeApp | None = None,
    ) -> None:
        self.token = token
        self.app = app  # a GitHub App installation: token exchange, its own budget
        self.web_url = web_url  # where its answers say pages live (a GitHub Enterprise host…)
        self.latency = latency
        self.faults = faults
        self.recorded: Recordings | None = None  # real answers served ahead of the state
        self.max_graphql_aliases = max_graphql_aliases
        self.graphql_workers: Executor | None = None  # see execute_graphql_in
        # a test's look at each request as it arrives, before it is answered: (method, path,
        # body); it may block, as a slow server would
        self.on_request: Callable[[str, str, bytes], None] | None = None
        self._elsewhere = threading.local()  # CPU a worker process spent on this request
        self.requests: list[RequestRecord] = []
        self._in_flight = 0
        self._open: set[int] = set()  # handlers whose request is not answered yet
        self.max_in_flight = 0  # the most requests it served at once since reset_log
        self.connections_opened = 0  # TCP connections clients opened to it, ever
        self.issues = IssueTracker()
        self._lock = threading.RLock()
        reset = int(time.time()) + 3600
        self._buckets = {
            "anonymous": _Bucket(unauth_limit, unauth_limit, reset),
            "authenticated": _Bucket(auth_limit, auth_limit, reset),
            "graphql": _Bucket(graphql_limit, graphql_limit, reset),
        }
        if app is not None:
            self._buckets["installation"] = _Bucket(app.rate_limit, app.rate_limit, reset)
        self._used = {"anonymous": 0, "authenticated": 0, "graphql": 0, "installation": 0}
        self._conns: set[socket.socket] = set()
        self.set_state(state)

    # ---- lifecycle

    def execute_graphql_in(
        self, processes: int, make_state: Callable[[], GitHubState]
    ) -> frozenset[int]:
        """Execute GraphQL queries in ``processes`` worker processes, side by side, as GitHub
        does (for benchmarks: this server, one interpreter, executes them one at a time).

        Each worker answers from its own copy of the repositories, built by ``make_state``
        (picklable, e.g. ``functools.partial(synthetic_state, n, seed)``): it must build what
        this fake serves, and the state must not change afterwards, or GraphQL and REST would
        disagree. Parsing, validation, cost and budget stay here. Returns the workers' process
        ids once every worker is up (building a large state takes seconds: none of it falls on
        a measured request). A worker ends with this process, however this one ends."""
        from crawler_fakes.github_graphql import start_worker, worker_ready

        pool = ProcessPoolExecutor(
            processes, mp_context=multiprocessing.get_context("spawn"),
            initializer=start_worker, initargs=(functools.partial(_unserved, make_state),),
        )  # fmt: skip
        # every worker is spawned by the first round of calls; a worker still building its
        # state leaves its call to one that is up, so ask until each has answered once
        started: set[int] = set()
        deadline = time.monotonic() + 600
        while len(started) < processes and time.monotonic() < deadline:
            calls = [pool.submit(worker_ready, 0.2) for _ in range(processes)]
            started.update(call.result() for call in calls)
        if len(started) < processes:
            pool.shutdown(cancel_futures=True)
            raise RuntimeError(f"{len(started)} of {processes} GraphQL workers started")
        self.graphql_workers = pool
        return frozenset(started)

    def spent_elsewhere(self, seconds: float) -> None:
        """A worker process spent ``seconds`` of CPU on the request this thread serves."""
        self._elsewhere.seconds = getattr(self._elsewhere, "seconds", 0.0) + seconds

    def stop(self) -> None:
        super().stop()
        workers, self.graphql_workers = self.graphql_workers, None
        if workers is not None:
            workers.shutdown(cancel_futures=True)

    def drop_connections(self) -> None:
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def env(self, token: str | None = None) -> dict[str, str]:
        """The environment that points the crawler at this server (as GitHub Actions does)."""
        return {"GITHUB_API_URL": self.base_url, **({"GITHUB_TOKEN": token} if token else {})}

    @property
    def graphql_url(self) -> str:
        return self.base_url + "/graphql"

    # ---- state, log, budgets

    def set_state(self, state: GitHubState) -> None:
        with self._lock:
            self.state = state
            self._reindex()

    def _reindex(self) -> None:
        self._names: dict[str, FakeRepo] = {}
        self._ids = {repo.id: repo for repo in self.state.repos}
        self._count = len(self.state.repos)
        for repo in self.state.repos:
            self._names[f"{repo.owner}/{repo.name}".lower()] = repo
        for repo in self.state.repos:  # a current name wins over another repo's old name
            self._names[repo.full_name.lower()] = repo

    def find(self, full_name: str) -> FakeRepo | None:
        """The repository answering to this (current or old) name, case-insensitively."""
        key = full_name.lower()
        with self._lock:
            repo = self._names.get(key)
            known = {repo.full_name.lower(), f"{repo.owner}/{repo.name}".lower()} if repo else ()
            if repo is None or key not in known or self._count != len(self.state.repos):
                self._reindex()
                repo = self._names.get(key)
            return repo

    def view(self, repo: FakeRepo) -> RepoView:
        return RepoView(repo, self.base_url, self.web_url)

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0

    @property
    def points_used(self) -> PointsUsed:
        with self._lock:
            used = self._used
            return PointsUsed(used["authenticated"], used["anonymous"], used["graphql"])

    def set_rate_limit(
        self,
        remaining: int,
        *,
        authenticated: bool = True,
        resource: Literal["core", "graphql"] = "core",
        reset_in: int | None = None,
    ) -> None:
        """Simulate a (nearly) exhausted budget."""
        name = (
            "graphql"
            if resource == "graphql"
            else ("authenticated" if authenticated else "anonymous")
        )
        with self._lock:
            bucket = self._buckets[name]
            bucket.refresh()
            bucket.remaining = max(0, min(remaining, bucket.limit))
            if reset_in is not None:
                bucket.reset = int(time.time()) + reset_in

    def rate_limit_doc(self, authenticated: bool, installation: bool = False) -> dict[str, Any]:
        with self._lock:
            for bucket in self._buckets.values():
                bucket.refresh()
            name = "installation" if installation else "authenticated"
            core = self._buckets[name if authenticated else "anonymous"].doc()
            graphql = (
                self._buckets["graphql"].doc()
                if authenticated
                else {"limit": 0, "used": 0, "remaining": 0, "reset": core["reset"]}
            )
        return {"resources": {"core": core, "graphql": graphql}, "rate": core}

    def charge_graphql(self, cost: int, dry_run: bool) -> dict[str, Any] | None:
        """Take ``cost`` points, or None when the budget cannot pay it. Returns RateLimit."""
        with self._lock:
            bucket = self._buckets["graphql"]
            bucket.refresh()
            if not dry_run:
                if bucket.remaining < cost:
                    return None
                bucket.remaining -= cost
                self._used["graphql"] += cost
            return {
                "cost": cost,
                "limit": bucket.limit,
                "remaining": bucket.remaining,
                "used": bucket.limit - bucket.remaining,
                "resetAt": _iso(bucket.reset),
            }

    def track(self, conn: socket.socket, alive: bool) -> None:
        with self._lock:
            (self._conns.add if alive else self._conns.discard)(conn)
            self.connections_opened += alive

    # ---- requests

    def dispatch(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._open.add(id(handler))
        try:
            self._dispatch(handler, method)
        finally:
            self.answering(handler)

    def answering(self, handler: BaseHTTPRequestHandler) -> None:
        """The request ``handler`` serves is answered (or dropped): once per request."""
        with self._lock:
            if id(handler) in self._open:
                self._open.discard(id(handler))
                self._in_flight -= 1

    def _dispatch(  # noqa: C901  (a router: one branch per endpoint and fault it answers)
        self, handler: BaseHTTPRequestHandler, method: str
    ) -> None:
        received = time.monotonic()
        cpu_start = time.thread_time()
        self._elsewhere.seconds = 0.0
        target = handler.path
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        auth = handler.headers.get("Authorization", "")
        scheme, _, given = auth.strip().partition(" ")
        token = given.strip() if scheme.lower() in ("token", "bearer") else None
        authenticated = bool(auth)
        conditional = bool(
            handler.headers.get("If-None-Match") or handler.headers.get("If-Modified-Since")
        )
        fault = self.faults.pick(method, target) if self.faults else None
        if self.on_request is not None:
            self.on_request(method, target, body)

        def app_token(given: str | None) -> bool:
            return self.app is not None and self.app.valid(given)

        def log(status: int, cost: int = 0) -> None:
            rec = RequestRecord(
                method,
                target,
                status,
                authenticated,
                conditional,
                cost,
                fault.kind if fault else None,
                received,
                time.thread_time() - cpu_start + self._elsewhere.seconds,
            )
            with self._lock:
                self.requests.append(rec)

        def wait_latency() -> None:
            # the latency runs from arrival and covers the fake's own work (as a server's
            # response time does): a busy fake does not add its CPU on top of every wait
            if self.latency:
                time.sleep(max(0.0, self.latency - (time.monotonic() - received)))

        if fault is not None and fault.kind == "delay":
            wait_latency()
            plan_delay = self.faults.delay if self.faults else 0.0
            time.sleep(fault.delay if fault.delay is not None else plan_delay)
        if fault is not None and fault.kind == "reset":
            wait_latency()
            log(0)
            abort(handler)
            return
        if fault is not None and fault.kind in RAW_KINDS:
            wait_latency()
            log(302 if fault.kind == "redirect" else 200)
            send_raw_fault(handler, fault)
            return
        path = urlsplit(target).path
        cost = 0
        if self.recorded is not None:
            wait_latency()
            served = self.recorded.serve(handler, method, self.base_url)
            if served is not None:
                log(served)
                return
        app = self.app
        try:
            if app is not None and app.handles(method, urlsplit(target).path):
                status, doc = app.exchange(urlsplit(target).path, auth)
                resp = _Resp(status, doc)
            elif app is not None and app.knows(token) and not app.valid(token):
                resp = _error(401, "Bad credentials")  # an expired installation token
                authenticated = False
            elif authenticated and (
                token is None or (self.token not in (None, token) and not app_token(token))
            ):
                resp = _error(401, "Bad credentials")
                authenticated = False
            elif fault is not None and fault.kind not in ("delay", "truncate", "graphql_partial"):
                resp = self._fault_response(fault, path, authenticated, token)
            elif path in ("/graphql", "/api/graphql"):
                resp, cost = self._graphql(method, body, authenticated)
                if fault is not None and fault.kind == "graphql_partial":
                    from crawler_fakes.github_graphql import partial

                    resp.body = partial(resp.body, fault)
            elif path.startswith("/raw/"):
                resp = self._raw(path)
            elif (page := self._web_page(path)) is not None:
                resp = page
            elif (answer := self._issues(method, target, body, token is not None)) is not None:
                resp = answer
            else:
                resp = self._rest_with_budget(handler, method, target, token)
        except Exception as exc:  # a bug in the fake: answer it instead of dropping the socket
            resp = _Resp(500, {"message": f"fake GitHub error: {exc!r}"})
        log(resp.status, cost)  # before answering: a client may read the log right after
        wait_latency()
        _send(handler, resp, truncate=fault is not None and fault.kind == "truncate")

    def _fault_response(
        self, fault: FaultRule, path: str, authenticated: bool, token: str | None
    ) -> _Resp:
        if fault.kind == "graphql_error":
            error: dict[str, Any] = {"message": fault.message.replace("{token}", token or "")}
            if fault.alias is not None:
                error["path"] = [fault.alias]
            return _Resp(200, {"data": None, "errors": [error]})
        retry = str(fault.retry_after or (self.faults.retry_after if self.faults else 1))
        doc = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
        if fault.kind == "status_500":
            return _Resp(500, {"message": "Server Error"})
        if fault.kind == "status_502":
            if path in ("/graphql", "/api/graphql"):
                from crawler_fakes.github_graphql import TIMEOUT_BODY

                return _Resp(502, TIMEOUT_BODY)
            return _Resp(502, {"message": "Server Error"})
        if fault.kind == "html_200":
            return _Resp(200, _UNICORN, content_type="text/html; charset=utf-8")
        status = 403 if fault.kind == "secondary_limit" else 429
        resp = _error(status, _SECONDARY, doc)
        graphql = path in ("/graphql", "/api/graphql")
        name = "graphql" if graphql else "authenticated" if authenticated else "anonymous"
        with self._lock:
            resp.headers.update(self._rate_headers(self._buckets[name], name))
        resp.headers["retry-after"] = retry
        return resp

    def _issues(self, method: str, target: str, body: bytes, authenticated: bool) -> _Resp | None:
        """The issues endpoints (crawler_fakes.github_issues); None for any other path."""
        split = urlsplit(target)
        if split.path == "/search/issues" and method == "GET":
            with self._lock:
                known = {r.full_name.lower(): r.full_name for r in self.state.repos}
            found = self.issues.search(split.query, self.base_url, known)
            return _Resp(found.status, found.body)
        match = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/issues.*)", split.path)
        if match is None:
            return None
        repo = self.find(f"{unquote(match[1])}/{unquote(match[2])}")
        if repo is None:
            return _not_found(_REPO_DOC)
        answer = self.issues.answer(
            method, repo.full_name, match[3], split.query, body, self.base_url, authenticated
        )
        return None if answer is None else _Resp(answer.status, answer.body)

    def _web_page(self, path: str) -> _Resp | None:
        """A repository's web page, when this server's pages are on its own host (GitHub
        Enterprise serves both on one host): 200 for a repository's pages, a 301 from an old
        name to the new one, 404 for no such repository. Free of the API budget, as there."""
        if self.web_url.rstrip("/") != self.base_url or path.startswith(_API_PATHS):
            return None
        parts = [unquote(p) for p in path.split("/") if p]
        if len(parts) < 2:
            return None
        html = "text/html; charset=utf-8"
        repo = self.find(f"{parts[0]}/{parts[1]}")
        if repo is None:
            return _Resp(404, b"<p>Not Found</p>", content_type=html)
        if repo.full_name.lower() != f"{parts[0]}/{parts[1]}".lower():
            rest = "/".join(quote(p) for p in parts[2:])
            location = f"{self.base_url}/{repo.full_name}" + (f"/{rest}" if rest else "")
            return _Resp(301, b"", {"Location": location}, content_type=html)
        return _Resp(200, f"<p>{repo.full_name}</p>".encode(), content_type=html)

    def _raw(self, path: str) -> _Resp:
        parts = unquote(path).split("/", 5)  # "", "raw", owner, name, ref, file path
        repo = self.find(f"{parts[2]}/{parts[3]}") if len(parts) == 6 else None
        view = self.view(repo) if repo else None
        if view is None or view.resolve_commit(parts[4]) is None or parts[5] not in view.files:
            return _Resp(404, b"404: Not Found", content_type="text/plain; charset=utf-8")
        return _Resp(200, view.files[parts[5]][1] or b"", content_type="text/plain; charset=utf-8")

    def _graphql(self, method: str, body: bytes, authenticated: bool) -> tuple[_Resp, int]:
        from crawler_fakes import github_graphql

        if method != "POST":
            return _not_found(), 0
        if not authenticated:
            doc = "https://docs.github.com/graphql/guides/forming-calls-with-graphql"
            return _error(401, "This endpoint requires you to be authenticated.", doc), 0
        status, payload, cost = github_graphql.handle(self, body)
        resp = _Resp(status, payload)
        with self._lock:
            bucket = self._buckets["graphql"]
            resp.headers.update(self._rate_headers(bucket, "graphql"))
        return resp, cost

    def _rest_with_budget(
        self, handler: BaseHTTPRequestHandler, method: str, target: str, token: str | None
    ) -> _Resp:
        split = urlsplit(target)
        query = parse_qsl(split.query, keep_blank_values=True)
        path = split.path
        installation = self.app is not None and self.app.knows(token)
        name = "installation" if installation else "authenticated" if token else "anonymous"
        if path == "/rate_limit":
            resp = _Resp(200, self.rate_limit_doc(token is not None, installation))
        elif method != "GET":
            resp = _not_found()
        else:
            resp = self._route(path, split.query, query)
        body = resp.body if isinstance(resp.body, bytes) else compact_json(resp.body)
        resp.body = body
        if resp.status == 200:
            identity = hashlib.sha256(token.encode()).hexdigest() if token else "anonymous"
            etag = 'W/"' + hashlib.sha256(body + identity.encode()).hexdigest() + '"'
            resp.headers["ETag"] = etag
            if resp.last_modified:
                stamp = _epoch(resp.last_modified)
                resp.headers["Last-Modified"] = email.utils.formatdate(stamp, usegmt=True)
            if _not_modified(handler, etag, resp.last_modified):
                resp = _Resp(
                    304,
                    None,
                    {
                        "ETag": etag,
                        **{k: v for k, v in resp.headers.items() if k == "Last-Modified"},
                    },
                )
        with self._lock:
            bucket = self._buckets[name]
            bucket.refresh()
            if path != "/rate_limit" and not (resp.status == 304 and token):
                if bucket.remaining <= 0:
                    who = "user ID 1" if token else "127.0.0.1"
                    resp = _error(403, f"API rate limit exceeded for {who}.", _DOCS)
                    resp.body = compact_json(resp.body)
                else:
                    bucket.remaining -= 1
                    self._used[name] += 1
            resp.headers.update(self._rate_headers(bucket, "core"))
        return resp

    def _route(self, path: str, raw_query: str, query: list[tuple[str, str]]) -> _Resp:
        match = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/.*)?", path)
        by_id = re.fullmatch(r"/repositories/(\d+)(/.*)?", path)
        if match:
            owner, name, sub = unquote(match[1]), unquote(match[2]), match[3] or ""
            repo = self.find(f"{owner}/{name}")
            if repo is None:
                return _not_found(_REPO_DOC)
            if repo.full_name.lower() != f"{owner}/{name}".lower():
                location = f"{self.base_url}/repositories/{repo.id}{sub}"
                location += f"?{raw_query}" if raw_query else ""
                return _Resp(
                    301,
                    {"message": "Moved Permanently", "url": location, "documentation_url": _DOCS},
                    {"Location": location},
                )
            link_base = f"{self.base_url}/repos/{repo.full_name}{sub}"
        elif by_id:
            with self._lock:
                found = self._ids.get(int(by_id[1]))
                if found is None or self._count != len(self.state.repos):
                    self._reindex()
                    found = self._ids.get(int(by_id[1]))
            if found is None:
                return _not_found(_REPO_DOC)
            repo, sub = found, by_id[2] or ""
            link_base = f"{self.base_url}{path}"
        else:
            return _not_found()
        return _rest(self.view(repo), sub, query, link_base)

    @staticmethod
    def _rate_headers(bucket: _Bucket, resource: str) -> dict[str, str]:
        resource = "graphql" if resource == "graphql" else "core"
        return {
            "x-ratelimit-limit": str(bucket.limit),
            "x-ratelimit-remaining": str(bucket.remaining),
            "x-ratelimit-reset": str(bucket.reset),
            "x-ratelimit-used": str(bucket.limit - bucket.remaining),
            "x-ratelimit-resource": resource,
        }


def _not_modified(handler: BaseHTTPRequestHandler, etag: str, last_modified: str | None) -> bool:
    inm = handler.headers.get("If-None-Match")
    if inm:
        strong = etag.removeprefix("W/")
        given = {t.strip().removeprefix("W/") for t in inm.split(",")}
        return "*" in given or strong in given
    ims = handler.headers.get("If-Modified-Since")
    if ims and last_modified:
        try:
            since = email.utils.parsedate_to_datetime(ims).timestamp()
        except (TypeError, ValueError):
            return False
        return int(_epoch(last_modified)) <= int(since)
    return False


def _send(handler: BaseHTTPRequestHandler, resp: _Resp, *, truncate: bool) -> None:
    body = resp.body
    if body is not None and not isinstance(body, bytes):
        body = compact_json(body)
    send_answer(handler, resp.status, body, resp.headers, resp.content_type, truncate=truncate)
