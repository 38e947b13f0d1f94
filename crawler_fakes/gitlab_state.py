"""The fake GitLab's world (projects, releases, tags, files) and the JSON it answers with,
in the field names of GitLab's REST documentation (doc/api/projects.md, releases/_index.md,
tags.md, branches.md, repository_files.md). Also the offline demo's two states."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from crawler_fakes.github_state import _b64_lines, git_blob_sha

# ------------------------------------------------------------------------------------- state


@dataclass
class GitLabRelease:
    tag: str
    name: str | None
    released_at: str  # ISO-8601; after the fake's ``now`` it is an upcoming release
    created_at: str | None = None


@dataclass
class GitLabTag:
    name: str
    sha: str  # the commit it points to
    date: str  # that commit's date
    message: str | None = None  # an annotated tag's message


@dataclass
class GitLabProject:
    path: str  # group/sub/project, as it is now
    id: int
    default_branch: str | None = "main"
    archived: bool = False
    private: bool = False  # answered only to a caller with the server's token
    license_key: str | None = None  # GitLab's (licensee's) verdict: "mit", "other"…
    license_name: str | None = None
    license_path: str = "LICENSE"
    license_text: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    # files on other branches or tags, read with ?ref=: ref -> path -> text
    ref_files: dict[str, dict[str, str]] = field(default_factory=dict)
    releases: list[GitLabRelease] = field(default_factory=list)
    tags: list[GitLabTag] = field(default_factory=list)
    head_sha: str | None = None  # None: an empty repository
    head_date: str | None = None
    old_paths: list[str] = field(default_factory=list)  # answer 301 to /projects/<id>
    description: str | None = None

    def tree(self) -> dict[str, str]:
        """path → text of every file at the head."""
        if self.head_sha is None:
            return {}
        texts = dict(self.files)
        if self.license_text is not None:
            texts[self.license_path] = self.license_text
        return texts


@dataclass
class GitLabState:
    projects: list[GitLabProject] = field(default_factory=list)

    def project(self, path: str) -> GitLabProject:
        return next(p for p in self.projects if p.path.lower() == path.lower())


def iso(ts: str) -> str:
    """GitLab writes times with milliseconds: 2026-10-01T10:00:00.000Z."""
    return ts.replace("Z", ".000Z") if ts.endswith("Z") and "." not in ts else ts


def epoch(ts: str) -> float:
    return datetime.fromisoformat(ts).timestamp()


def _commit(web: str, sha: str, date: str) -> dict[str, Any]:
    who = {"author_name": "Fake Developer", "author_email": "dev@example.invalid"}
    return {
        "id": sha, "short_id": sha[:8], "created_at": iso(date), "parent_ids": [],
        "title": f"Commit {sha[:8]}", "message": f"Commit {sha[:8]}", **who,
        "authored_date": iso(date), "committer_name": who["author_name"],
        "committer_email": who["author_email"], "committed_date": iso(date), "trailers": {},
        "web_url": f"{web}/-/commit/{sha}",
    }  # fmt: skip


# ---------------------------------------------------------------------------- documented JSON


class ProjectView:
    """One project as an instance at ``web_url`` (API at ``api_url``) shows it at ``now``."""

    def __init__(self, project: GitLabProject, web_url: str, api_url: str, now: str | None) -> None:
        self.project = project
        self.web_url = web_url
        self.web = f"{web_url}/{project.path}"
        self.api_url = api_url
        self.now = now

    def branch_json(self) -> dict[str, Any]:
        project, web = self.project, self.web
        branch = project.default_branch or ""
        assert project.head_sha is not None and project.head_date is not None
        return {
            "name": branch, "merged": False, "protected": True, "default": True,
            "developers_can_push": False, "developers_can_merge": False, "can_push": False,
            "web_url": f"{web}/-/tree/{quote(branch, safe='/')}",
            "commit": _commit(web, project.head_sha, project.head_date),
        }  # fmt: skip

    def project_json(self, with_license: bool) -> dict[str, Any]:
        project, web = self.project, self.web
        api = f"{self.api_url}/projects/{project.id}"
        group, _, name = project.path.rpartition("/")
        data: dict[str, Any] = {
            "id": project.id, "description": project.description, "name": name,
            "name_with_namespace": project.path.replace("/", " / "), "path": name,
            "path_with_namespace": project.path, "created_at": "2024-01-01T00:00:00.000Z",
            "default_branch": project.default_branch, "tag_list": [], "topics": [],
            "ssh_url_to_repo": f"git@{urlsplit(web).netloc}:{project.path}.git",
            "http_url_to_repo": f"{web}.git", "web_url": web, "readme_url": None,
            "forks_count": 0, "star_count": 0, "last_activity_at": "2026-01-01T00:00:00.000Z",
            "namespace": {"id": project.id + 10_000, "name": group.rpartition("/")[2],
                          "path": group.rpartition("/")[2], "kind": "group", "full_path": group,
                          "web_url": f"{self.web_url}/groups/{group}"},
            "empty_repo": project.head_sha is None, "archived": project.archived,
            "visibility": "private" if project.private else "public",
            "_links": {"self": api, "issues": f"{api}/issues", "repo_branches":
                       f"{api}/repository/branches", "labels": f"{api}/labels",
                       "events": f"{api}/events", "members": f"{api}/members"},
        }  # fmt: skip
        if with_license:
            has_file = project.license_key and project.license_text and project.default_branch
            branch = quote(project.default_branch or "", safe="/")
            path = quote(project.license_path, safe="/")
            data["license_url"] = f"{web}/-/blob/{branch}/{path}" if has_file else None
            data["license"] = (
                {"key": project.license_key, "name": project.license_name,
                 "nickname": None, "html_url": f"http://choosealicense.com/licenses/"
                 f"{project.license_key}/", "source_url": None}
                if project.license_key else None
            )  # fmt: skip
        return data

    def release_json(self, rel: GitLabRelease) -> dict[str, Any]:
        project, web = self.project, self.web
        tag = quote(rel.tag, safe="")
        now = self.now or datetime.now(UTC).isoformat()
        tagged = next((t for t in project.tags if t.name == rel.tag), None)
        sha = tagged.sha if tagged else hashlib.sha1(rel.tag.encode()).hexdigest()
        return {
            "name": rel.name, "tag_name": rel.tag, "description": "",
            "created_at": iso(rel.created_at or rel.released_at),
            "released_at": iso(rel.released_at),
            "upcoming_release": epoch(rel.released_at) > epoch(now),
            "author": {"id": 1, "username": "root", "name": "Administrator", "state": "active",
                       "web_url": f"{self.web_url}/root"},
            "commit": _commit(web, sha, tagged.date if tagged else rel.released_at),
            "commit_path": f"/{project.path}/-/commit/{sha}",
            "tag_path": f"/{project.path}/-/tags/{tag}",
            "assets": {"count": 0, "sources": [], "links": []}, "evidences": [],
            "_links": {"self": f"{web}/-/releases/{tag}",
                       "edit_url": f"{web}/-/releases/{tag}/edit"},
        }  # fmt: skip

    def tag_json(self, tag: GitLabTag) -> dict[str, Any]:
        project, web = self.project, self.web
        release = next((r for r in project.releases if r.tag == tag.name), None)
        return {
            "name": tag.name, "message": tag.message,
            "target": hashlib.sha1(f"tag {tag.name}".encode()).hexdigest()
            if tag.message else tag.sha,
            "commit": _commit(web, tag.sha, tag.date),
            "release": {"tag_name": tag.name, "description": ""} if release else None,
            "protected": False, "created_at": iso(tag.date) if tag.message else None,
        }  # fmt: skip

    def tree_json(self, texts: dict[str, str], directory: str) -> list[dict[str, Any]]:
        """``/repository/tree`` (repositories.md): the entries of one directory, folders
        first then files, each by name, with its blob (or tree) id."""
        prefix = f"{directory.strip('/')}/" if directory.strip("/") else ""
        blobs: dict[str, str] = {}
        trees: set[str] = set()
        for path, text in texts.items():
            if not path.startswith(prefix):
                continue
            name, slash, _ = path[len(prefix) :].partition("/")
            if slash:
                trees.add(name)
            else:
                blobs[name] = git_blob_sha(text.encode())
        entries = [
            {
                "id": hashlib.sha1(f"tree {prefix}{n}".encode()).hexdigest(),
                "name": n,
                "type": "tree",
                "path": f"{prefix}{n}",
                "mode": "040000",
            }
            for n in sorted(trees)
        ]
        entries += [
            {"id": sha, "name": n, "type": "blob", "path": f"{prefix}{n}", "mode": "100644"}
            for n, sha in sorted(blobs.items())
        ]
        return entries  # fmt: skip

    def file_json(self, path: str, text: str, ref: str) -> dict[str, Any]:
        project, data = self.project, text.encode()
        return {
            "file_name": path.rpartition("/")[2], "file_path": path, "size": len(data),
            "encoding": "base64", "content_sha256": hashlib.sha256(data).hexdigest(),
            "ref": ref, "blob_id": git_blob_sha(data), "commit_id": project.head_sha,
            "last_commit_id": project.head_sha, "execute_filemode": False,
            "content": _b64_lines(data).replace("\n", ""),
        }  # fmt: skip


# -------------------------------------------------------------------------------------- demo

DEMO_CONFIG = """\
  - name: Compiler Toolkit
    gitlab: demo-group/compilers/toolkit
  - name: Runtime Shim
    gitlab: demo-group/runtime-shim
"""


def demo_state(*, after: bool) -> GitLabState:
    """Two GitLab projects for ``crawler demo``: state one, or state two (``after``), in which
    the toolkit publishes a release and announces an upcoming one, and the shim, followed by
    tag, is transferred to another group, tags a new version and is archived. License texts
    come from the installed license data, as everywhere else."""
    from crawler.analysis.license_texts import reference_text

    def release(tag: str, day: str) -> GitLabRelease:
        return GitLabRelease(tag, f"Toolkit {tag}", f"2026-{day}T09:00:00Z")

    toolkit = GitLabProject(
        path="demo-group/compilers/toolkit", id=4101, license_key="apache-2.0",
        license_name="Apache License 2.0", license_text=reference_text("Apache-2.0"),
        head_sha="7" * 40, head_date="2026-10-20T09:00:00Z",
        releases=[release("v2.0.0", "09-15"), release("v2.1.0", "10-20")],
    )  # fmt: skip
    shim = GitLabProject(
        path="demo-group/runtime-shim", id=4102, license_key="mit", license_name="MIT License",
        license_text=reference_text("MIT"), head_sha="8" * 40, head_date="2026-10-02T09:00:00Z",
        tags=[GitLabTag("v0.3.0", "8" * 40, "2026-10-02T09:00:00Z")],
    )  # fmt: skip
    if after:
        # announced for a date far ahead: an upcoming release whatever day the demo runs
        upcoming = GitLabRelease("v3.0.0-rc1", "Toolkit v3.0.0-rc1", "2030-01-15T09:00:00Z")
        toolkit.releases += [release("v2.2.0", "11-10"), upcoming]
        shim.tags.append(GitLabTag("v0.4.0", "9" * 40, "2026-11-12T09:00:00Z"))
        shim.old_paths, shim.path, shim.archived = [shim.path], "runtime-team/shim", True
    return GitLabState([toolkit, shim])


DEMO_NOW = "2026-11-15T00:00:00Z"  # the demo's "now": v3.0.0-rc1 is an upcoming release
