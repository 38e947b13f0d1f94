"""The fake Gitee's world (repositories, releases, tags, files) and how Gitee's Open API v5
answers a repository's paths: the JSON shapes, pagination headers and list orders that
crawler_fakes.gitee serves. See that module for the sources of the shapes."""

from __future__ import annotations

import base64
import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote, unquote

from crawler_fakes.github_state import git_blob_sha

CST = timezone(timedelta(hours=8))  # Gitee answers in China Standard Time


@dataclass
class GiteeRelease:
    tag: str
    created_at: str  # ISO-8601 UTC ('Z'); answered in +08:00
    name: str | None = None
    prerelease: bool = False


@dataclass
class GiteeTag:
    name: str
    sha: str  # the commit it points to
    date: str  # that commit's date, ISO-8601 UTC


@dataclass
class GiteeRepo:
    owner: str
    name: str
    id: int
    default_branch: str = "master"
    status: str = "开始"  # 关闭: closed (archived)
    license: str | None = None  # Gitee's own reading, e.g. "Apache-2.0"
    head_sha: str | None = None  # None: an empty repository
    head_date: str | None = None
    releases: list[GiteeRelease] = field(default_factory=list)
    tags: list[GiteeTag] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path -> text
    # files on other branches or tags, read with ?ref=: ref -> path -> text
    ref_files: dict[str, dict[str, str]] = field(default_factory=dict)
    moved_to: str | None = None  # "owner/name": the old path answers 301
    description: str = ""

    @property
    def full_name(self) -> str:
        return self.moved_to or f"{self.owner}/{self.name}"


@dataclass
class GiteeState:
    repos: list[GiteeRepo] = field(default_factory=list)


@dataclass
class Answer:
    status: int
    body: Any = None  # JSON value, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"


def cst(stamp: str) -> str:
    """``2026-10-01T02:00:00Z`` as Gitee writes it: ``2026-10-01T10:00:00+08:00``."""
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return moment.astimezone(CST).isoformat()


def not_found(what: str = "Not Found") -> Answer:
    return Answer(404, {"message": f"404 {what}"})


def _user(login: str, web: str, api: str, uid: int) -> dict[str, Any]:
    return {
        "id": uid, "login": login, "name": login, "avatar_url": f"{web}/assets/no_portrait.png",
        "url": f"{api}/users/{login}", "html_url": f"{web}/{login}", "remark": "", "type": "User",
    }  # fmt: skip


class RepoView:
    """One repository as answered: its API and web addresses and the JSON of its parts."""

    def __init__(self, repo: GiteeRepo, api: str, web: str) -> None:
        self.repo = repo
        self.full = repo.full_name
        self.api = f"{api}/repos/{self.full}"
        self.web = f"{web}/{self.full}"
        self.root_api = api
        self.root_web = web

    def repo_json(self) -> dict[str, Any]:
        repo = self.repo
        owner, _, path = self.full.partition("/")
        stamp = cst(repo.head_date or "2024-01-01T00:00:00Z")
        return {
            "id": repo.id, "full_name": self.full, "human_name": f"{owner}/{path}",
            "url": self.api, "path": path, "name": path,
            "namespace": {"id": repo.id * 3 + 1, "type": "group", "name": owner, "path": owner,
                          "html_url": f"{self.root_web}/{owner}"},
            "owner": _user(owner, self.root_web, self.root_api, repo.id * 7 + 1),
            "assigner": _user(owner, self.root_web, self.root_api, repo.id * 7 + 1),
            "description": repo.description, "private": False, "public": True,
            "internal": False, "fork": False,
            "html_url": f"{self.web}.git", "ssh_url": f"git@gitee.example:{self.full}.git",
            "forks_url": f"{self.api}/forks", "tags_url": f"{self.api}/tags",
            "releases_url": f"{self.api}/releases{{/id}}", "recommend": False, "gvp": False,
            "homepage": None, "language": "Python", "forks_count": 3, "stargazers_count": 12,
            "watchers_count": 4, "default_branch": repo.default_branch if repo.head_sha else None,
            "open_issues_count": 0, "has_issues": True, "has_wiki": True, "issue_comment": False,
            "can_comment": True, "pull_requests_enabled": True, "has_page": False,
            "license": repo.license, "outsourced": False, "project_creator": owner,
            "members": [owner], "pushed_at": stamp, "created_at": cst("2024-01-01T00:00:00Z"),
            "updated_at": stamp, "parent": None, "paas": None, "stared": False,
            "watched": False, "permission": {"pull": True, "push": False, "admin": False},
            "relation": "", "assignees_number": 1, "testers_number": 1, "assignee": [],
            "testers": [], "status": repo.status, "programs": [], "enterprise": None,
            "project_labels": [],
        }  # fmt: skip

    def release_json(self, release: GiteeRelease) -> dict[str, Any]:
        rid = int(hashlib.sha1(f"{self.repo.id}/{release.tag}".encode()).hexdigest()[:7], 16)
        tag = quote(release.tag, safe="")
        owner = self.full.partition("/")[0]
        return {
            "id": rid, "tag_name": release.tag, "target_commitish": self.repo.default_branch,
            "prerelease": release.prerelease, "name": release.name, "body": "",
            "author": _user(owner, self.root_web, self.root_api, self.repo.id * 7 + 1),
            "created_at": cst(release.created_at),
            "assets": [
                {"browser_download_url": f"{self.web}/archive/refs/tags/{tag}.zip",
                 "name": f"{release.tag}.zip"},
                {"browser_download_url": f"{self.web}/archive/refs/tags/{tag}.tar.gz",
                 "name": f"{release.tag}.tar.gz"},
            ],
        }  # fmt: skip

    def tag_json(self, tag: GiteeTag) -> dict[str, Any]:
        who = {"name": "Fake Maintainer", "email": "dev@example.invalid", "date": cst(tag.date)}
        return {"name": tag.name, "message": "", "commit": {"sha": tag.sha, "date": cst(tag.date)},
                "tagger": who}  # fmt: skip

    def commit_json(self) -> dict[str, Any]:
        sha, date = self.repo.head_sha or "", cst(self.repo.head_date or "2024-01-01T00:00:00Z")
        who = {"name": "Fake Developer", "date": date, "email": "dev@example.invalid"}
        return {
            "url": f"{self.api}/commits/{sha}", "sha": sha, "html_url": f"{self.web}/commit/{sha}",
            "comments_url": f"{self.api}/commits/{sha}/comments",
            "commit": {"author": who, "committer": dict(who), "message": f"Commit {sha[:7]}",
                       "tree": {"sha": self.tree_sha(), "url": f"{self.api}/git/trees/{sha}"}},
            "author": None, "committer": None, "parents": [],
        }  # fmt: skip

    def tree_sha(self) -> str:
        listing = "".join(f"{p}:{git_blob_sha(t)}\n" for p, t in sorted(self.repo.files.items()))
        return hashlib.sha1(listing.encode()).hexdigest()

    def tree_json(self, recursive: bool) -> dict[str, Any]:
        entries: dict[str, dict[str, Any]] = {}
        for path, text in sorted(self.repo.files.items()):
            parts = path.split("/")
            for depth in range(1, len(parts)):
                folder = "/".join(parts[:depth])
                if (depth == 1 or recursive) and folder not in entries:
                    sha = hashlib.sha1(folder.encode()).hexdigest()
                    entries[folder] = {
                        "path": folder, "mode": "040000", "type": "tree", "sha": sha,
                        "url": f"{self.api}/git/trees/{sha}",
                    }  # fmt: skip
            if len(parts) == 1 or recursive:
                sha = git_blob_sha(text)
                entries[path] = {"path": path, "mode": "100644", "type": "blob", "sha": sha,
                                 "size": len(text.encode()),
                                 "url": f"{self.api}/git/blobs/{sha}"}  # fmt: skip
        sha = self.tree_sha()
        return {"sha": sha, "url": f"{self.api}/git/trees/{sha}",
                "tree": list(entries.values()), "truncated": False}  # fmt: skip

    def file_json(
        self, path: str, with_content: bool = True, ref: str | None = None
    ) -> dict[str, Any]:
        text = (self.repo.ref_files.get(ref, {}) if ref else self.repo.files).get(path, "")
        branch = ref or self.repo.default_branch
        entry = {
            "type": "file", "encoding": "base64", "size": len(text.encode()),
            "name": path.rpartition("/")[2], "path": path,
            "content": base64.b64encode(text.encode()).decode(), "sha": git_blob_sha(text),
            "url": f"{self.api}/contents/{quote(path)}",
            "html_url": f"{self.web}/blob/{branch}/{quote(path)}",
            "download_url": f"{self.web}/raw/{branch}/{quote(path)}",
            "_links": {"self": f"{self.api}/contents/{quote(path)}",
                       "html": f"{self.web}/blob/{branch}/{quote(path)}"},
        }  # fmt: skip
        if not with_content:
            del entry["content"], entry["encoding"]
        return entry


def page_of(items: list[Any], params: dict[str, str]) -> Answer:
    def number(key: str, default: int) -> int:
        try:
            return int(params.get(key, default))
        except ValueError:
            return default

    per_page = min(max(number("per_page", 20), 1), 100)
    page = max(number("page", 1), 1)
    answer = Answer(200, items[(page - 1) * per_page : page * per_page])
    answer.headers["total_count"] = str(len(items))
    answer.headers["total_page"] = str(math.ceil(len(items) / per_page))
    return answer


def answer_repo_path(  # noqa: C901  (a router: one branch per endpoint the fake answers)
    view: RepoView, sub: str, params: dict[str, str]
) -> Answer:
    """Answer ``/repos/{owner}/{repo}{sub}``."""
    repo = view.repo
    if sub == "":
        return Answer(200, view.repo_json())
    if sub == "/releases":
        ordered = sorted(repo.releases, key=lambda r: r.created_at)
        if params.get("direction") == "desc":
            ordered.reverse()
        return page_of([view.release_json(r) for r in ordered], params)
    if sub == "/tags":
        if params.get("sort") == "updated":
            tags = sorted(repo.tags, key=lambda t: (t.date, t.name))
        else:
            tags = sorted(repo.tags, key=lambda t: t.name)
        if params.get("direction") == "desc":
            tags.reverse()
        return page_of([view.tag_json(t) for t in tags], params)
    if repo.head_sha is None:
        return not_found("Not Found")  # an empty repository has no commits, tree or files
    if sub == "/commits":
        if params.get("sha", repo.default_branch) not in (repo.default_branch, repo.head_sha):
            return not_found("Commit")
        return page_of([view.commit_json()], params)
    if sub.startswith("/git/trees/"):
        ref = unquote(sub.removeprefix("/git/trees/"))
        if ref not in (repo.default_branch, repo.head_sha, view.tree_sha()):
            return not_found("Tree")
        return Answer(200, view.tree_json(params.get("recursive") not in (None, "", "0")))
    if sub.startswith("/contents/"):
        path = unquote(sub.removeprefix("/contents/")).strip("/")
        at = params.get("ref")
        if at is not None and at in repo.ref_files:
            if path in repo.ref_files[at]:
                return Answer(200, view.file_json(path, ref=at))
            return not_found("File")
        if path in repo.files:
            return Answer(200, view.file_json(path))
        prefix = f"{path}/"
        inside = sorted(
            p for p in repo.files if p.startswith(prefix) and "/" not in p[len(prefix) :]
        )
        if inside:
            return Answer(200, [view.file_json(p, with_content=False) for p in inside])
        return not_found("File")
    return not_found()
