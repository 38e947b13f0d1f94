"""A Gitea-shaped HTTP server (REST API v1, ``/api/v1``) for tests and the demo.

Shapes follow Gitea's ``modules/structs`` (Repository, Release, Tag with ``CommitMeta``,
Commit, ContentsResponse) and its API conventions: lists take ``page`` and ``limit`` (at most
50) and answer ``X-Total-Count`` and a ``Link`` header; releases come newest first, tags
newest first by their commit's date; one file's contents come base64-encoded, a directory's
as a list without content; errors are ``{"message", "url"}``; a repository records the
licenses Gitea detected (``licenses``, Gitea 1.23+; ``None`` leaves the field out, as Forgejo
does). A token is taken as ``Authorization: token <t>`` (or ``Bearer``); a wrong one is 401.
Answers carry an ETag and honour ``If-None-Match`` with a 304. Timestamps carry the server's
offset (``+02:00`` here). A request log records what was asked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from crawler_fakes.server import FakeServer, LoopbackService, send_answer

API_PREFIX = "/api/v1"
MAX_LIMIT = 50  # Gitea's default [api] MAX_RESPONSE_ITEMS
CEST = timezone(timedelta(hours=2))


def _local(stamp: str) -> str:
    """``2026-10-01T00:00:00Z`` as a Gitea server in +02:00 writes it."""
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(CEST)
    return moment.isoformat()


def _sha(text: str) -> str:
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class GiteaRelease:
    tag: str
    published_at: str  # ISO-8601 UTC ('Z')
    name: str | None = None
    prerelease: bool = False
    draft: bool = False


@dataclass
class GiteaTag:
    name: str
    sha: str
    date: str  # the commit's date, ISO-8601 UTC


@dataclass
class GiteaRepo:
    owner: str
    name: str
    id: int
    default_branch: str = "main"
    archived: bool = False
    licenses: list[str] | None = None  # what Gitea detected; None: the field is absent
    head_sha: str | None = None  # None: an empty repository
    head_date: str | None = None
    releases: list[GiteaRelease] = field(default_factory=list)
    tags: list[GiteaTag] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path -> text
    # files on other branches or tags, read with ?ref=: ref -> path -> text
    ref_files: dict[str, dict[str, str]] = field(default_factory=dict)
    description: str = ""  # Gitea answers "" for none

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass
class GiteaState:
    repos: list[GiteaRepo] = field(default_factory=list)


@dataclass(frozen=True)
class GiteaRequest:
    path: str  # with the query string
    status: int
    authenticated: bool
    conditional: bool


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.fake.dispatch(self)


class _Server(FakeServer):
    fake: FakeGitea


class FakeGitea(LoopbackService):
    """The server. ``with FakeGitea(state) as gitea:`` runs it on 127.0.0.1."""

    server_class = _Server
    handler = _Handler

    def __init__(
        self, state: GiteaState, *, token: str | None = None, web_url: str = "https://gitea.example"
    ) -> None:
        self.state = state
        self.token = token
        self.web_url = web_url.rstrip("/")
        self.requests: list[GiteaRequest] = []
        self._lock = threading.Lock()

    @property
    def api_url(self) -> str:
        return self.base_url + API_PREFIX

    def env(self, token: str | None = None) -> dict[str, str]:
        """The environment that points the crawler at this server."""
        return {"GITEA_API_URL": self.api_url, **({"GITEA_TOKEN": token} if token else {})}

    def set_state(self, state: GiteaState) -> None:
        with self._lock:
            self.state = state

    def dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        split = urlsplit(handler.path)
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        scheme, _, given = handler.headers.get("Authorization", "").partition(" ")
        authenticated = scheme.lower() in ("token", "bearer") and bool(given.strip())
        headers: dict[str, str] = {}
        if authenticated and self.token is not None and given.strip() != self.token:
            status, body = 401, {"message": "user does not exist", "url": self.web_url}
        else:
            status, body = self._route(split.path, params, headers)
        data = json.dumps(body, ensure_ascii=False).encode()
        sent = handler.headers.get("If-None-Match")
        if status == 200:
            headers["ETag"] = '"' + hashlib.sha256(data + given.encode()).hexdigest()[:40] + '"'
            if sent == headers["ETag"]:
                status = 304
        with self._lock:
            self.requests.append(GiteaRequest(handler.path, status, authenticated, bool(sent)))
        send_answer(handler, status, data, headers, "application/json;charset=utf-8")

    # -- answers -------------------------------------------------------------------------------

    def _route(
        self, path: str, params: dict[str, str], headers: dict[str, str]
    ) -> tuple[int, Any]:
        match = re.fullmatch(rf"{API_PREFIX}/repos/([^/]+)/([^/]+)(/.*)?", path)
        with self._lock:
            repos = list(self.state.repos)
        asked = f"{unquote(match[1])}/{unquote(match[2])}".lower() if match else ""
        repo = next((r for r in repos if r.full_name.lower() == asked), None)
        if match is None or repo is None:
            return 404, {"message": "The target couldn't be found.", "url": self.web_url}
        sub = match[3] or ""
        web = f"{self.web_url}/{repo.full_name}"
        if sub == "":
            return 200, self._repo_json(repo, web)
        if sub == "/releases":
            ordered = sorted(repo.releases, key=lambda r: r.published_at, reverse=True)
            return 200, self._page([self._release_json(r, web) for r in ordered], params, headers)
        if sub == "/tags":
            ordered_tags = sorted(repo.tags, key=lambda t: t.date, reverse=True)
            items = [self._tag_json(t, web) for t in ordered_tags]
            return 200, self._page(items, params, headers)
        if repo.head_sha is None:
            return 404, {"message": "The target couldn't be found.", "url": self.web_url}
        if sub == "/commits":
            if params.get("sha", repo.default_branch) not in (repo.default_branch, repo.head_sha):
                return 404, {"message": "object does not exist", "url": self.web_url}
            commit = {
                "sha": repo.head_sha, "created": _local(repo.head_date or ""),
                "html_url": f"{web}/commit/{repo.head_sha}",
                "commit": {"committer": {"date": _local(repo.head_date or "")}},
            }  # fmt: skip
            return 200, self._page([commit], params, headers)
        if sub == "/contents":
            listing = [self._file_json(repo, web, p, content=False) for p in sorted(repo.files)]
            return 200, [entry for entry in listing if "/" not in entry["path"]]
        if sub.startswith("/contents/"):
            wanted = unquote(sub.removeprefix("/contents/")).strip("/")
            at = params.get("ref")
            if at is not None and at in repo.ref_files:
                if wanted in repo.ref_files[at]:
                    return 200, self._file_json(repo, web, wanted, content=True, ref=at)
                return 404, {"message": "The target couldn't be found.", "url": self.web_url}
            if wanted in repo.files:
                return 200, self._file_json(repo, web, wanted, content=True)
        return 404, {"message": "The target couldn't be found.", "url": self.web_url}

    def _page(self, items: list[Any], params: dict[str, str], headers: dict[str, str]) -> Any:
        try:
            page = max(int(params.get("page", 1)), 1)
            limit = min(max(int(params.get("limit", MAX_LIMIT)), 1), MAX_LIMIT)
        except ValueError:
            page, limit = 1, MAX_LIMIT
        headers["X-Total-Count"] = str(len(items))
        return items[(page - 1) * limit : page * limit]

    def _repo_json(self, repo: GiteaRepo, web: str) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": repo.id, "name": repo.name, "full_name": repo.full_name,
            "owner": {"login": repo.owner}, "empty": repo.head_sha is None,
            "html_url": web, "clone_url": f"{web}.git", "default_branch": repo.default_branch,
            "archived": repo.archived, "private": False, "fork": False, "mirror": False,
            "description": repo.description,
        }  # fmt: skip
        if repo.licenses is not None:
            data["licenses"] = list(repo.licenses)
        return data

    def _release_json(self, release: GiteaRelease, web: str) -> dict[str, Any]:
        return {
            "tag_name": release.tag, "name": release.name or "", "draft": release.draft,
            "prerelease": release.prerelease,
            "created_at": _local(release.published_at),
            "published_at": _local(release.published_at),
            "html_url": f"{web}/releases/tag/{quote(release.tag, safe='')}",
        }  # fmt: skip

    def _tag_json(self, tag: GiteaTag, web: str) -> dict[str, Any]:
        return {
            "name": tag.name, "id": tag.sha, "message": "",
            "commit": {"sha": tag.sha, "url": f"{web}/commit/{tag.sha}",
                       "created": _local(tag.date)},
        }  # fmt: skip

    def _file_json(
        self, repo: GiteaRepo, web: str, path: str, *, content: bool, ref: str | None = None
    ) -> dict[str, Any]:
        text = repo.ref_files[ref][path] if ref else repo.files[path]
        entry: dict[str, Any] = {
            "name": path.rpartition("/")[2], "path": path, "sha": _sha(text), "type": "file",
            "size": len(text.encode()),
            "html_url": f"{web}/src/branch/{quote(ref or repo.default_branch)}/{quote(path)}",
        }  # fmt: skip
        if content:
            entry["encoding"] = "base64"
            entry["content"] = base64.b64encode(text.encode()).decode()
        return entry
