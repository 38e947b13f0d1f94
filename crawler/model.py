"""Plain, immutable data that flows from the fetchers through the store to the diff and reports.

Nothing here does I/O. Timestamps are ISO-8601 strings in UTC (``2026-11-02T10:00:00Z``) so
that a snapshot serialises to the same JSON, byte for byte, every time it is observed: the
store deduplicates on that JSON's hash.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal

Timestamp = str  # ISO-8601, UTC, e.g. "2026-11-02T10:00:00Z"


class ChangeKind(StrEnum):
    NEW_RELEASE = "new_release"
    NEW_PRERELEASE = "new_prerelease"
    RELEASE_REMOVED = "release_removed"
    NEW_TAG = "new_tag"
    NEW_COMMIT = "new_commit"
    LICENSE_CHANGED = "license_changed"
    LICENSE_TEXT_CHANGED = "license_text_changed"
    LICENSE_FILES_CHANGED = "license_files_changed"
    REPO_MOVED = "repo_moved"
    REPO_ARCHIVED = "repo_archived"
    PROJECT_ADDED = "project_added"
    PROJECT_REMOVED = "project_removed"
    TABLE_CHANGED = "table_changed"
    PIN_CHANGED = "pin_changed"
    PAGE_CHANGED = "page_changed"


class FlagKind(StrEnum):
    LICENSE_NOASSERTION = "license_noassertion"
    NO_TAGGED_RELEASE = "no_tagged_release"


VersionSource = Literal["release", "tag", "commit"]
ProjectStatus = Literal["ok", "error", "deferred", "untracked"]


@dataclass(frozen=True)
class Release:
    tag: str
    name: str | None
    published_at: Timestamp | None
    prerelease: bool
    draft: bool
    url: str
    is_latest: bool = False  # GitHub's own "latest" mark, when the API told us


@dataclass(frozen=True)
class Tag:
    name: str
    sha: str
    date: Timestamp | None = None


@dataclass(frozen=True)
class Commit:
    sha: str
    date: Timestamp | None
    url: str


@dataclass(frozen=True)
class RepoInfo:
    id: int
    full_name: str
    default_branch: str
    archived: bool
    url: str


@dataclass(frozen=True)
class GitHubLicense:
    """GitHub's own verdict (licensee), as the API reports it."""

    key: str | None
    spdx_id: str | None
    name: str | None


@dataclass(frozen=True)
class LicenseFile:
    """The root license file, its blob SHA and our own analysis of its text."""

    path: str
    blob_sha: str
    url: str
    analysis: dict[str, Any] | None = None  # crawler.analysis.licenses.LicenseAnalysis.to_dict()
    text: str | None = None


@dataclass(frozen=True)
class InventoryEntry:
    path: str
    blob_sha: str


@dataclass(frozen=True)
class ExtractedTable:
    """A table pulled from a page; rows keyed by the identity columns, cells normalised."""

    name: str
    key_columns: tuple[str, ...]
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class PageSnapshot:
    name: str
    url: str
    tables: tuple[ExtractedTable, ...] = ()
    pins: tuple[tuple[str, str | None], ...] = ()  # (pin name, value or None when absent)
    text: str | None = None


@dataclass(frozen=True)
class Source:
    """Where a fact came from and when it was fetched."""

    url: str
    fetched_at: Timestamp


@dataclass(frozen=True)
class ProjectSnapshot:
    """Everything observed for one project in one audit."""

    project: str
    repo: RepoInfo | None = None
    releases: tuple[Release, ...] | None = None  # None: not fetched (track does not need it)
    tags: tuple[Tag, ...] | None = None
    head: Commit | None = None
    github_license: GitHubLicense | None = None
    license_file: LicenseFile | None = None
    license_inventory: tuple[InventoryEntry, ...] | None = None
    pages: tuple[PageSnapshot, ...] = ()
    sources: tuple[tuple[str, Source], ...] = ()  # (facet, source)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def content_hash(self) -> str:
        """Hash of the observed content, ignoring when it was fetched."""
        data = self.to_dict()
        data["sources"] = [[facet, src["url"]] for facet, src in data["sources"]]
        blob = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()

    @staticmethod
    def from_dict(data: dict[str, Any]) -> ProjectSnapshot:
        def opt_tuple(items: list[dict[str, Any]] | None, cls: type[Any]) -> tuple[Any, ...] | None:
            return None if items is None else tuple(cls(**item) for item in items)

        repo = data.get("repo")
        head = data.get("head")
        gh_license = data.get("github_license")
        license_file = data.get("license_file")
        return ProjectSnapshot(
            project=data["project"],
            repo=RepoInfo(**repo) if repo else None,
            releases=opt_tuple(data.get("releases"), Release),
            tags=opt_tuple(data.get("tags"), Tag),
            head=Commit(**head) if head else None,
            github_license=GitHubLicense(**gh_license) if gh_license else None,
            license_file=LicenseFile(**license_file) if license_file else None,
            license_inventory=opt_tuple(data.get("license_inventory"), InventoryEntry),
            pages=tuple(
                PageSnapshot(
                    name=p["name"],
                    url=p["url"],
                    tables=tuple(
                        ExtractedTable(
                            name=t["name"],
                            key_columns=tuple(t["key_columns"]),
                            columns=tuple(t["columns"]),
                            rows=tuple(tuple(r) for r in t["rows"]),
                        )
                        for t in p.get("tables", ())
                    ),
                    pins=tuple((n, v) for n, v in p.get("pins", ())),
                    text=p.get("text"),
                )
                for p in data.get("pages", ())
            ),
            sources=tuple((facet, Source(**src)) for facet, src in data.get("sources", ())),
        )


@dataclass(frozen=True)
class FetchError:
    """A fetch that failed. Errors are state, never findings: the diff carries forward."""

    project: str
    source: str  # "github", "license", "page:<name>", ...
    url: str
    message: str


@dataclass(frozen=True)
class ProjectResult:
    """The outcome of fetching one project in one audit."""

    project: str
    status: ProjectStatus
    snapshot: ProjectSnapshot | None = None
    errors: tuple[FetchError, ...] = ()
    note: str | None = None  # e.g. why a project is untracked or deferred


@dataclass(frozen=True)
class Change:
    project: str
    kind: ChangeKind
    summary: str
    before: Any = None
    after: Any = None
    evidence_url: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Flag:
    project: str
    kind: FlagKind
    detail: str
    new: bool
    evidence_url: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CurrentVersion:
    """What the catalog's release table prints for a project."""

    project: str
    repo: str | None
    version_source: VersionSource | None
    version: str | None
    published_at: Timestamp | None
    prerelease: bool
    license: str | None
    url: str | None
