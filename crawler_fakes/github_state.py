"""The fake GitHub's world: repositories, releases, tags, files, and the git facts derived
from them (blob and tree SHAs, commits, GitHub's license verdict)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

# --------------------------------------------------------------------------------------- state


@dataclass
class FakeRelease:
    tag: str
    name: str | None
    published_at: str | None  # ISO-8601 'Z'; None for drafts
    created_at: str
    prerelease: bool = False
    draft: bool = False
    make_latest: bool | None = None  # True: explicitly latest; False: never latest


@dataclass
class FakeTag:
    name: str
    sha: str  # the commit the tag points to
    date: str  # that commit's date
    annotated: bool = False  # GraphQL refs then target a Tag object wrapping the commit


@dataclass
class FakeRepo:
    owner: str
    name: str
    id: int
    default_branch: str = "main"
    archived: bool = False
    license_key: str | None = None  # GitHub's verdict; all three None: "no license detected"
    spdx_id: str | None = None
    license_name: str | None = None
    # the SPDX id GitHub sends with its "other" verdict: NOASSERTION, or None for its older
    # shape (``spdx_id: null``; the GraphQL schema's ``License.spdxId`` is nullable too)
    other_spdx_id: str | None = "NOASSERTION"
    license_path: str | None = "LICENSE"
    license_text: str | None = None  # None: no license file at all
    releases: list[FakeRelease] = field(default_factory=list)
    tags: list[FakeTag] = field(default_factory=list)
    head_sha: str | None = None  # None: empty repository
    head_date: str | None = None
    tree: list[tuple[str, str]] = field(default_factory=list)  # (path, blob sha) without text
    files: dict[str, str] = field(default_factory=dict)  # path -> text (contents API)
    # files on other branches or tags, read with ?ref=: ref -> path -> text
    ref_files: dict[str, dict[str, str]] = field(default_factory=dict)
    moved_to: str | None = None  # "owner/name": the old name answers 301
    description: str | None = None

    @property
    def full_name(self) -> str:
        return self.moved_to or f"{self.owner}/{self.name}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tree"] = [list(entry) for entry in self.tree]
        return data

    @staticmethod
    def from_dict(data: dict[str, Any]) -> FakeRepo:
        data = dict(data)
        data["releases"] = [FakeRelease(**r) for r in data.get("releases", [])]
        data["tags"] = [FakeTag(**t) for t in data.get("tags", [])]
        data["tree"] = [
            (e["path"], e["sha"]) if isinstance(e, dict) else (e[0], e[1])
            for e in data.get("tree", [])
        ]
        data["files"] = dict(data.get("files", {}))
        return FakeRepo(**data)


@dataclass
class GitHubState:
    repos: list[FakeRepo] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"repos": [r.to_dict() for r in self.repos]}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> GitHubState:
        return GitHubState(repos=[FakeRepo.from_dict(r) for r in data.get("repos", [])])

    def repo(self, full_name: str) -> FakeRepo:
        for repo in self.repos:
            if full_name.lower() in (repo.full_name.lower(), f"{repo.owner}/{repo.name}".lower()):
                return repo
        raise KeyError(full_name)


def mit_repo(
    owner: str, name: str, repo_id: int, releases: list[FakeRelease], **overrides: Any
) -> FakeRepo:
    """A repository GitHub reads as MIT (with the real MIT text), pushed on 2026-10-01, with
    ``releases``: the plain upstream most tests start from. ``overrides`` set any other field."""
    from crawler.analysis.license_texts import reference_text

    fields: dict[str, Any] = {
        "license_key": "mit",
        "spdx_id": "MIT",
        "license_name": "MIT License",
        "license_text": reference_text("MIT"),
        "head_sha": f"{repo_id:040d}",
        "head_date": "2026-10-01T00:00:00Z",
    }
    fields.update(overrides)
    return FakeRepo(owner=owner, name=name, id=repo_id, releases=releases, **fields)


def release_on(tag: str, stamp: str) -> FakeRelease:
    """A published release whose name is its tag, created and published at ``stamp``."""
    return FakeRelease(tag, tag, stamp, stamp)


# ---------------------------------------------------------------------------------- git facts


def git_blob_sha(data: str | bytes) -> str:
    """The SHA git (and GitHub) gives a file with this content."""
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()


def _oid_bytes(sha: str) -> bytes:
    try:
        return bytes.fromhex(sha) if len(sha) == 40 else hashlib.sha1(sha.encode()).digest()
    except ValueError:
        return hashlib.sha1(sha.encode()).digest()


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, key: object) -> str:
    return base64.b64encode(f"{kind}:{key}".encode()).decode().rstrip("=")


def _b64_lines(data: bytes) -> str:
    """Base64 the way GitHub's contents API sends it: a newline every 60 characters."""
    text = base64.b64encode(data).decode()
    return "".join(text[i : i + 60] + "\n" for i in range(0, len(text), 60))


def latest_release(releases: list[FakeRelease]) -> FakeRelease | None:
    """GitHub's "latest": an explicit make_latest, else the newest full release by created_at."""
    full = [r for r in releases if not r.draft and not r.prerelease]
    explicit = [r for r in full if r.make_latest]
    candidates = explicit or [r for r in full if r.make_latest is not False]
    return max(candidates, key=lambda r: _epoch(r.created_at), default=None)


class RepoView:
    """What the git host derives from a FakeRepo: blob and tree SHAs, refs, the latest release."""

    def __init__(self, repo: FakeRepo, base_url: str, web_url: str = "https://github.com") -> None:
        self.repo = repo
        self.full_name = repo.full_name
        self.api = f"{base_url}/repos/{self.full_name}"
        self.html = f"{web_url.rstrip('/')}/{self.full_name}"
        self.raw = f"{base_url}/raw/{self.full_name}"

    @property
    def empty(self) -> bool:
        return self.repo.head_sha is None

    @cached_property
    def files(self) -> dict[str, tuple[str, bytes | None]]:
        """path -> (blob sha, content or None when the state gives only a SHA)."""
        repo = self.repo
        if self.empty:
            return {}
        out: dict[str, tuple[str, bytes | None]] = {p.strip("/"): (s, None) for p, s in repo.tree}
        texts = dict(repo.files)
        if repo.license_path and repo.license_text is not None:
            texts[repo.license_path] = repo.license_text
        for path, text in texts.items():
            data = text.encode()
            out[path.strip("/")] = (git_blob_sha(data), data)
        return out

    @property
    def dirs(self) -> dict[str, dict[str, tuple[str, str]]]:
        """directory ("" for the root) -> {name: ("blob" | "tree", sha)}."""
        return self._trees[0]

    def tree_sha(self, directory: str) -> str:
        return self._trees[1][directory]

    def tree_dir_by_sha(self, sha: str) -> str | None:
        return next((d for d, s in self._trees[1].items() if s == sha), None)

    @cached_property
    def _trees(self) -> tuple[dict[str, dict[str, tuple[str, str]]], dict[str, str]]:
        """Directory listings and git tree SHAs, computed from the leaves up."""
        kids: dict[str, dict[str, tuple[str, str]]] = {"": {}} if not self.empty else {}
        for path, (sha, _) in self.files.items():
            parts = path.split("/")
            for depth in range(len(parts)):
                parent = "/".join(parts[:depth])
                entry = ("blob", sha) if depth == len(parts) - 1 else ("tree", "")
                kids.setdefault(parent, {})[parts[depth]] = entry
        shas: dict[str, str] = {}
        for directory in sorted(kids, key=lambda d: -d.count("/") - (d != "")):
            entries = kids[directory]
            body = b""
            for name in sorted(entries, key=lambda n: n + "/" if entries[n][0] == "tree" else n):
                kind, sha = entries[name]
                mode = b"100644" if kind == "blob" else b"40000"
                body += mode + b" " + name.encode() + b"\0" + _oid_bytes(sha)
            shas[directory] = hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()
            if directory:
                parent, _, name = directory.rpartition("/")
                kids[parent][name] = ("tree", shas[directory])
        return kids, shas

    def blob_by_sha(self, sha: str) -> tuple[str, bytes | None] | None:
        for path, (blob_sha, data) in self.files.items():
            if blob_sha == sha:
                return path, data
        return None

    def commits(self) -> list[tuple[str, str]]:
        """Every commit the state knows (head and tagged ones), newest first."""
        repo = self.repo
        if repo.head_sha is None:
            return []
        seen = {repo.head_sha: repo.head_date or "1970-01-01T00:00:00Z"}
        for tag in repo.tags:
            seen.setdefault(tag.sha, tag.date)
        head_first = sorted(seen.items(), key=lambda c: c[0] != repo.head_sha)
        return sorted(head_first, key=lambda c: -_epoch(c[1]))

    def resolve_commit(self, ref: str) -> tuple[str, str] | None:
        repo = self.repo
        commits = self.commits()
        if not commits:
            return None
        branch = repo.default_branch
        if ref in ("HEAD", branch, f"refs/heads/{branch}", f"heads/{branch}"):
            return commits[0] if commits[0][0] == repo.head_sha else self._by_sha(repo.head_sha)
        name = ref.removeprefix("refs/tags/").removeprefix("tags/")
        for tag in repo.tags:
            if tag.name == name:
                return tag.sha, tag.date
        return self._by_sha(ref) if len(ref) >= 4 else None

    def _by_sha(self, prefix: str | None) -> tuple[str, str] | None:
        matches = [c for c in self.commits() if prefix and c[0].startswith(prefix.lower())]
        return matches[0] if len(matches) == 1 else None

    def license_verdict(self) -> dict[str, str | None] | None:
        """GitHub's license object (REST shape), "other" when a file exists but is unknown."""
        repo = self.repo
        spdx: str | None
        if repo.license_key or repo.spdx_id:
            key = (repo.license_key or repo.spdx_id or "other").lower()
            spdx = repo.spdx_id or (repo.other_spdx_id if key == "other" else "NOASSERTION")
            name = repo.license_name or key
        elif repo.license_text is not None and repo.license_path:
            key, spdx, name = "other", repo.other_spdx_id, "Other"
        else:
            return None
        url = None if key == "other" else f"https://api.github.com/licenses/{key}"
        return {"key": key, "name": name, "spdx_id": spdx, "url": url, "node_id": node_id("L", key)}

    def pushed_at(self) -> str:
        repo = self.repo
        stamps = [repo.head_date, *(t.date for t in repo.tags)]
        stamps += [d for r in repo.releases for d in (r.created_at, r.published_at)]
        known = [s for s in stamps if s]
        return max(known, key=_epoch) if known else "2020-01-01T00:00:00Z"
