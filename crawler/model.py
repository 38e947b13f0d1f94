"""Plain, immutable data that flows from the sources through the store to the diff and reports.

Nothing here does I/O, and nothing here names a forge: a repository is a repository whether
GitHub, Gitee or GitLab serves it, and every link is the one its source gave. Timestamps are
ISO-8601 strings in UTC (``2026-11-02T10:00:00Z``) so that a snapshot serialises to the same
bytes every time it is observed: the store deduplicates on their hash.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any, Literal

import msgspec

Timestamp = str  # ISO-8601, UTC, e.g. "2026-11-02T10:00:00Z"


class ReportSection(StrEnum):
    """Where a change is shown in the report; declared by each change kind."""

    RELEASES = "releases"
    LICENSES = "licenses"
    PAGES = "pages"
    PACKAGES = "packages"
    OTHER = "other"


class ChangeKind(StrEnum):
    NEW_RELEASE = "new_release"
    NEW_PRERELEASE = "new_prerelease"
    RELEASE_REMOVED = "release_removed"
    NEW_TAG = "new_tag"
    NEW_COMMIT = "new_commit"
    NEW_PACKAGE_VERSION = "new_package_version"
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

    @property
    def section(self) -> ReportSection:
        return _SECTIONS.get(self, ReportSection.OTHER)


_SECTIONS = {
    ChangeKind.NEW_RELEASE: ReportSection.RELEASES,
    ChangeKind.NEW_PRERELEASE: ReportSection.RELEASES,
    ChangeKind.RELEASE_REMOVED: ReportSection.RELEASES,
    ChangeKind.NEW_TAG: ReportSection.RELEASES,
    ChangeKind.NEW_COMMIT: ReportSection.RELEASES,
    ChangeKind.NEW_PACKAGE_VERSION: ReportSection.PACKAGES,
    ChangeKind.LICENSE_CHANGED: ReportSection.LICENSES,
    ChangeKind.LICENSE_TEXT_CHANGED: ReportSection.LICENSES,
    ChangeKind.LICENSE_FILES_CHANGED: ReportSection.LICENSES,
    ChangeKind.TABLE_CHANGED: ReportSection.PAGES,
    ChangeKind.PIN_CHANGED: ReportSection.PAGES,
    ChangeKind.PAGE_CHANGED: ReportSection.PAGES,
}


class FlagKind(StrEnum):
    LICENSE_NOASSERTION = "license_noassertion"
    NO_TAGGED_RELEASE = "no_tagged_release"
    CHANNEL_MISMATCH = "channel_mismatch"
    STALE = "stale"


VersionSource = Literal["release", "tag", "commit"]
TrackMode = Literal["auto", "releases", "tags", "commits"]


class ProjectStatus(StrEnum):
    OK = "ok"  # checked in this audit
    ERROR = "error"  # could not be checked: the last good state is kept
    DEFERRED = "deferred"  # not attempted (rate budget, deadline, stop requested)
    UNTRACKED = "untracked"  # nowhere the crawler can fetch from


@dataclass(frozen=True, slots=True)
class Tracking:
    """Which of a repository's releases, tags or commits the catalog row follows.

    Stored with every snapshot, so reading a stored state (history, re-rendered reports, the
    export) never depends on today's sources.yaml."""

    track: TrackMode = "auto"
    tag_pattern: str | None = None
    prereleases: Literal["include", "exclude"] = "include"


@dataclass(frozen=True, slots=True)
class Release:
    tag: str
    name: str | None
    published_at: Timestamp | None
    prerelease: bool
    draft: bool
    url: str
    is_latest: bool = False  # the forge's own "latest" mark, when it says


@dataclass(frozen=True, slots=True)
class Tag:
    name: str
    sha: str
    date: Timestamp | None = None
    url: str | None = None  # the tag's page on the forge, as its source builds it


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    date: Timestamp | None
    url: str


@dataclass(frozen=True, slots=True)
class RepoInfo:
    id: int  # the forge's stable numeric id: a rename keeps it, a re-creation does not
    full_name: str  # owner/name, or group/sub/project on GitLab
    default_branch: str
    archived: bool
    url: str  # the repository's web page
    forge: str = "github"  # the source that serves it (crawler.upstream registry name)


@dataclass(frozen=True, slots=True)
class ForgeLicense:
    """The forge's own license verdict (GitHub's licensee, GitLab's, Gitee's), as reported."""

    key: str | None
    spdx_id: str | None
    name: str | None


@dataclass(frozen=True, slots=True)
class LicenseFile:
    """The root license file, its blob SHA and our own analysis of its text."""

    path: str
    blob_sha: str
    url: str
    analysis: dict[str, Any] | None = None  # crawler.analysis.licenses.LicenseAnalysis.to_dict()
    text: str | None = None


@dataclass(frozen=True, slots=True)
class InventoryEntry:
    path: str
    blob_sha: str
    url: str | None = None  # the file's web page, as its source builds it


@dataclass(frozen=True, slots=True)
class PackageVersion:
    version: str
    uploaded_at: Timestamp | None
    yanked: bool
    prerelease: bool


@dataclass(frozen=True, slots=True)
class PackageInfo:
    """A release channel beside the forge: what users install (a PyPI project, …)."""

    registry: str  # the channel source's registry name, e.g. "pypi"
    name: str
    url: str  # the package's page
    versions: tuple[PackageVersion, ...]  # newest first (by the registry's version order)
    license: str | None = None  # declared license (an SPDX expression where the package says)
    license_source: str | None = None  # where it was declared, e.g. "license_expression"


@dataclass(frozen=True, slots=True)
class ExtractedTable:
    """A table pulled from a page; rows keyed by the identity columns, cells normalised."""

    name: str
    key_columns: tuple[str, ...]
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class PageSnapshot:
    name: str
    url: str
    tables: tuple[ExtractedTable, ...] = ()
    pins: tuple[tuple[str, str | None], ...] = ()  # (pin name, value or None when absent)
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a fact came from and when it was fetched."""

    url: str
    fetched_at: Timestamp


@dataclass(frozen=True, slots=True)
class ProjectSnapshot:
    """Everything observed for one project in one audit."""

    project: str
    tracking: Tracking = Tracking()
    repo: RepoInfo | None = None
    releases: tuple[Release, ...] | None = None  # None: not fetched (track does not need it)
    tags: tuple[Tag, ...] | None = None
    head: Commit | None = None
    forge_license: ForgeLicense | None = None
    license_file: LicenseFile | None = None
    license_inventory: tuple[InventoryEntry, ...] | None = None
    packages: tuple[PackageInfo, ...] = ()
    pages: tuple[PageSnapshot, ...] = ()
    provenance: tuple[tuple[str, Provenance], ...] = ()  # (facet, where and when)

    def to_json(self) -> bytes:
        """The stored form: compact JSON, fields in declaration order, byte-stable."""
        return _ENCODER.encode(self)

    def content_hash(self) -> str:
        """Hash of the observed content, ignoring when it was fetched."""
        timeless = tuple((facet, Provenance(p.url, "")) for facet, p in self.provenance)
        return hashlib.sha256(_ENCODER.encode(replace(self, provenance=timeless))).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return dict(msgspec.to_builtins(self))

    def sharing(self, earlier: ProjectSnapshot | None) -> ProjectSnapshot:
        """This snapshot, holding ``earlier``'s objects for every fact equal to its own (the
        provenance, which says when, stays this one's). Equal in value to ``self``; on an
        unchanged night the new and the stored state of a project are one copy in memory."""
        if earlier is None or earlier is self:
            return self
        same = {
            name: getattr(earlier, name)
            for name in _FACTS
            if getattr(self, name) is not getattr(earlier, name)
            and getattr(self, name) == getattr(earlier, name)
        }
        return replace(self, **same) if same else self

    @staticmethod
    def from_json(data: str | bytes) -> ProjectSnapshot:
        raw = data.encode() if isinstance(data, str) else data
        if raw.startswith(b'{"project"'):  # to_json's own output: the fast path
            return _DECODER.decode(raw)
        return ProjectSnapshot.from_dict(json.loads(raw))

    @staticmethod
    def from_dict(data: dict[str, Any]) -> ProjectSnapshot:
        """Also reads snapshots stored before the model was forge-neutral (revision 0001)."""
        data = dict(data)
        if "github_license" in data:
            data["forge_license"] = data.pop("github_license")
        if "sources" in data:
            data["provenance"] = data.pop("sources")
        return msgspec.convert(data, ProjectSnapshot)


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(ProjectSnapshot)
_FACTS = tuple(f.name for f in fields(ProjectSnapshot) if f.name not in ("project", "provenance"))


@dataclass(frozen=True)
class FetchError:
    """A fetch that failed. Errors are state, never findings: the diff carries forward."""

    project: str
    source: str  # "github", "gitee", "pypi", "license", "page:<name>", ...
    url: str
    message: str


@dataclass(frozen=True)
class ProjectResult:
    """The outcome of fetching one project (or one facet of it) in one audit."""

    project: str
    status: ProjectStatus
    snapshot: ProjectSnapshot | None = None
    errors: tuple[FetchError, ...] = ()
    note: str | None = None  # e.g. why a project is untracked or deferred


@dataclass(frozen=True)
class ProjectOutcome:
    """How an audit ended for one project that was not plainly checked."""

    status: ProjectStatus
    note: str | None


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
    newest_prerelease: str | None = None  # a pre-release above the release shown, on its own
