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
    LINKS = "links"
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
    LINK_MOVED = "link_moved"
    LINK_BROKEN = "link_broken"
    UPSTREAM_DORMANT = "upstream_dormant"
    UPSTREAM_SUPERSEDED = "upstream_superseded"

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
    ChangeKind.LINK_MOVED: ReportSection.LINKS,
    ChangeKind.LINK_BROKEN: ReportSection.LINKS,
    ChangeKind.UPSTREAM_DORMANT: ReportSection.LINKS,
    ChangeKind.UPSTREAM_SUPERSEDED: ReportSection.LINKS,
}


class FlagKind(StrEnum):
    LICENSE_NOASSERTION = "license_noassertion"
    NO_TAGGED_RELEASE = "no_tagged_release"
    CHANNEL_MISMATCH = "channel_mismatch"
    STALE = "stale"


VersionSource = Literal["release", "tag", "commit"]
# what a source spent in one audit (requests, 304 answers, retries, points…), for the report
Usage = dict[str, int | float | str | bool | None]
AuditStatus = Literal["running", "complete", "partial", "failed"]
AUDIT_STATUSES: tuple[AuditStatus, ...] = ("running", "complete", "partial", "failed")
# our reading of a license file: word for word, with extra text, modified, or not recognised
LicenseVerdict = Literal["exact", "match_with_extra_text", "modified", "unknown"]
LICENSE_VERDICTS: tuple[LicenseVerdict, ...] = (
    "exact", "match_with_extra_text", "modified", "unknown"
)


def audit_status(value: str) -> AuditStatus:
    """A status read back from the store, checked."""
    for status in AUDIT_STATUSES:
        if status == value:
            return status
    raise ValueError(f"unknown audit status {value!r}")
TrackMode = Literal["auto", "releases", "tags", "commits"]
# the release a row shows: the highest in version order, or the newest final (the forge's mark)
ReleaseShown = Literal["highest_version", "newest_final"]


class ProjectStatus(StrEnum):
    OK = "ok"  # checked in this audit
    ERROR = "error"  # could not be checked: the last good state is kept
    DEFERRED = "deferred"  # not attempted (rate budget, deadline, stop requested)
    UNTRACKED = "untracked"  # nowhere the crawler can fetch from (its note: the reason)
    RIDING = "riding"  # ships with another item (its note: that item's name): never fetched


@dataclass(frozen=True, slots=True)
class Tracking:
    """Which of a repository's releases, tags or commits the catalog row follows.

    Stored with every snapshot, so reading a stored state (history, re-rendered reports, the
    export) never depends on today's sources.yaml."""

    track: TrackMode = "auto"
    tag_pattern: str | None = None
    prereleases: Literal["include", "exclude"] = "include"
    # which release the row shows (``settings.release_shown``): the highest in version order,
    # pre-releases included when ``prereleases`` includes them (the catalog page's own
    # convention: "v0.33.0rc3 (release candidate)"), or the newest final release (the one the
    # forge marks latest, else the highest final one)
    release_shown: ReleaseShown = "highest_version"


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
    # the forge's one-line description, as the upstream wrote it (untrusted; capped by the
    # source, escaped by every renderer); None where the forge gives none (or a git server)
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ForgeLicense:
    """The forge's own license verdict (GitHub's licensee, GitLab's, Gitee's), as reported."""

    key: str | None
    spdx_id: str | None
    name: str | None


SpanEffect = Literal["restriction", "condition", "grant", "other"]


@dataclass(frozen=True, slots=True)
class TextSpan:
    """A piece of a license file kept verbatim: extra text no template explains, or text
    that replaces template words."""

    start_line: int  # 1-based, inclusive
    end_line: int
    text: str  # verbatim
    # what the wording does to the terms, as the analysis read it (crawler.analysis.
    # license_clauses.span_effect); None in analyses stored before spans had one, which the
    # store completes when it reads them (crawler.analysis.licenses.with_effects)
    effect: SpanEffect | None = field(default=None, compare=False)

    @property
    def restriction(self) -> bool:
        """The wording restricts or conditions the license: a reviewer reads it first."""
        return self.effect in ("restriction", "condition")


@dataclass(frozen=True, slots=True)
class LicenseMatch:
    spdx_id: str
    start_line: int
    end_line: int
    coverage: float
    verdict: str  # exact | match_with_extra_text | modified (inside the span) | reference


@dataclass(frozen=True, slots=True)
class LicenseAnalysis:
    """Our reading of one license text (crawler.analysis.licenses.analyze_license), stored
    with the snapshot as it is: decoded once with the snapshot, never rebuilt from a dict."""

    spdx_ids: tuple[str, ...]  # in file order
    expression: str | None  # only on explicit evidence
    verdict: LicenseVerdict
    coverage: float
    matches: tuple[LicenseMatch, ...]
    copyright_holders: tuple[str, ...]
    extra_text: tuple[TextSpan, ...]
    altered_text: tuple[TextSpan, ...]
    notes: tuple[str, ...]
    engine: int = 0  # the analysis engine that read it; an older one is read again

    def to_dict(self) -> dict[str, Any]:
        return dict(msgspec.to_builtins(self))


@dataclass(frozen=True, slots=True)
class LicenseFile:
    """The root license file, its blob SHA and our own analysis of its text."""

    path: str
    blob_sha: str
    url: str
    analysis: LicenseAnalysis | None = None
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

    @property
    def holds_items(self) -> bool:
        """A list (or a paragraph's enumeration) read as a table: one row per item."""
        return self.columns == ITEM_COLUMNS


# The columns of a list read as a table (in canonical order): the item's visible text (its
# identity), the label line it stands under ("Supported Hardware:"), its first link, and the
# item it is nested in.
ITEM_COLUMNS = ("Item", "Label", "Link", "Parent")


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
class ReadmeTop:
    """The top of a repository's README (its banner and its first heading's section, Markdown
    read to text, crawler.analysis.successor.readme_top), read only for a repository that is
    archived or dormant and whose description names no successor (crawler.gather)."""

    text: str  # upstream text (untrusted), capped; links kept as ``[text](url)``; "" for none
    url: str  # the README's web page: the evidence link ("" when there is no README.md)
    # the default branch's head commit it was read at: a README changes only with a commit, so
    # while the head stays there it is not asked again ("" when unknown: asked every night)
    commit: str = ""


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
    # the README's top, read for a successor where the description names none (archived or
    # dormant repositories only); None: not read tonight, or no README.md
    readme: ReadmeTop | None = None

    def to_json(self) -> bytes:
        """The stored form: compact JSON, fields in declaration order, byte-stable."""
        return _ENCODER.encode(self)

    def content_hash(self) -> str:
        """Hash of the observed content, ignoring when it was fetched."""
        timeless = tuple((facet, Provenance(p.url, "")) for facet, p in self.provenance)
        encoded = _ENCODER.encode(replace(self, provenance=timeless))
        # a snapshot without a README hashes as it did before the field existed: the first
        # night after an upgrade writes no new row for an unchanged project
        if encoded.endswith(_NO_README):
            encoded = encoded.removesuffix(_NO_README) + b"}"
        return hashlib.sha256(encoded).hexdigest()

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
_NO_README = b',"readme":null}'  # the last field, when absent
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
    """A fact that changed; ``crawler.report.words.change_summary`` words it."""

    project: str
    kind: ChangeKind
    before: Any = None
    after: Any = None
    evidence_url: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Flag:
    """A standing condition worth a look; ``crawler.report.words.flag_detail`` words it."""

    project: str
    kind: FlagKind
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


# what a link check found out; crawler.diff.links judges it against the link's history
LinkFailure = Literal["not_found", "unresolved", "unreachable", "refused"]


@dataclass(frozen=True, slots=True)
class LinkAnswer:
    """Tonight's answer for one link (``crawler.upstream.links``), before any judgement.

    ``failure``: ``not_found`` (404/410), ``unresolved`` (the name no longer resolves),
    ``unreachable`` (timeout, 5xx, TLS, connection refused), ``refused`` (our own rules: a
    redirect loop, a redirect to a private address, an answer past the size cap); None when
    the link answered. ``moved_to`` is the final URL when every hop that moved it was
    permanent (301/308) or the forge says the repository was renamed; temporary redirects
    (302/303/307) are followed and leave it None. ``archived``: the forge's API says the
    repository a link names is archived."""

    url: str
    status: int | None
    failure: LinkFailure | None = None
    moved_to: str | None = None
    reason: str = ""
    etag: str | None = None
    last_modified: str | None = None
    via: Literal["http", "forge"] = "http"
    requests: int = 0  # HTTP requests it cost (0: a forge answer already in hand)
    archived: bool = False  # a repository the forge says is archived (read-only)
