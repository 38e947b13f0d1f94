"""The report as typed structures: what ``report.json`` holds, field for field.

Built once by ``crawler.report.json_report.build_report`` and serialised once (``to_json``);
the Markdown report, the notifications, the CLI summary and the exit code read these
structures, never a dict. ``report.schema.json`` describes the same shape for other readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, BinaryIO, Literal

import msgspec

from crawler.model import AuditStatus, LicenseVerdict
from crawler.report.spool import plain

ProjectStatusName = Literal["ok", "error", "deferred", "untracked", "riding"]
SectionName = Literal["releases", "licenses", "pages", "packages", "links", "other"]
SpanEffectName = Literal["restriction", "condition", "grant", "other"]
FlagKindName = Literal["license_noassertion", "no_tagged_release", "channel_mismatch", "stale"]
Scalar = int | float | str | bool | None
# what each source spent, by source name: {"sources": {"github": {"requests": 12, ...}}}
Requests = dict[str, dict[str, dict[str, Scalar]]]


class _Part(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


class AuditPart(_Part, frozen=True):
    id: int
    started_at: str  # ISO 8601 UTC, "2026-11-30T02:00:00Z"
    finished_at: str | None
    status: AuditStatus
    baseline_audit_id: int | None


# An audit that checked fewer than this share of the projects it tracks (untracked ones apart)
# did not do its job, whatever stopped it (a rate limit spent until tomorrow, a source that
# defers everything): it ends ``partial`` and exits 1, so cron mail speaks up that very night.
MIN_CHECKED_SHARE = 0.1


class Summary(_Part, frozen=True, omit_defaults=True):
    projects: int
    checked: int
    checked_in_part: int
    errors: int
    projects_with_errors: int
    deferred: int
    untracked: int
    stale: int
    changes: int
    flags: int
    changes_by_kind: dict[str, int]
    not_selected: int = 0  # left out by --only; absent from the JSON when none were
    riding: int = 0  # items shown with the facts of the item they ship with (absent: none)

    def checked_too_little(self) -> bool:
        """Fewer than MIN_CHECKED_SHARE of the trackable projects were checked."""
        trackable = self.projects - self.untracked
        return trackable > 0 and self.checked < trackable * MIN_CHECKED_SHARE


class ChangeEntry(_Part, frozen=True):
    project: str
    kind: str  # a crawler.model.ChangeKind value
    section: SectionName
    summary: str
    before: Any
    after: Any
    evidence_url: str | None
    details: dict[str, Any]  # the change kind's own facts (an open object in the schema)


class FlagEntry(_Part, frozen=True):
    project: str
    kind: FlagKindName
    detail: str
    new: bool
    evidence_url: str | None
    details: dict[str, Any]


class ErrorEntry(_Part, frozen=True):
    project: str
    source: str
    url: str
    error: str


class SpanEntry(_Part, frozen=True):
    start_line: int
    end_line: int
    text: str
    effect: SpanEffectName
    finding: str  # the same in a reviewer's words: "adds a restriction", …


class LicenseReading(_Part, frozen=True):
    path: str
    url: str | None
    blob_sha: str
    spdx_ids: tuple[str, ...]
    expression: str | None
    verdict: LicenseVerdict
    coverage: float
    copyright_holders: tuple[str, ...]
    extra_text: tuple[SpanEntry, ...]
    altered_text: tuple[SpanEntry, ...]
    notes: tuple[str, ...]
    differs_from_forge: bool
    restricts: bool
    why: str | None


class PackageEntry(_Part, frozen=True):
    registry: str
    registry_label: str
    name: str
    url: str | None
    version: str | None
    uploaded_at: str | None
    prerelease: bool
    license: str | None


class ProjectEntry(_Part, frozen=True):
    name: str
    repo: str | None
    forge: str | None
    forge_label: str | None
    repo_url: str | None
    status: ProjectStatusName
    note: str | None
    version_source: Literal["release", "tag", "commit"] | None
    version: str | None
    published_at: str | None
    prerelease: bool
    newest_prerelease: str | None
    license: str | None
    forge_license: str | None
    detected_license: str | None
    license_analysis: LicenseReading | None
    packages: tuple[PackageEntry, ...]
    url: str | None
    part_of: str | None = None  # a riding item: the item whose facts its row shows


class PendingEntry(_Part, frozen=True):
    """A change the catalog has not taken yet (crawler.diff.pending)."""

    project: str
    kind: str
    value: str
    summary: str
    evidence_url: str | None
    first_audit: int
    first_seen: str  # YYYY-MM-DD
    new: bool  # first seen by this audit
    before: str | None = None  # what it replaced (v1.0 of v1.0 → v1.1), when known


class LinkEntry(_Part, frozen=True):
    """A link that failed tonight but is not a finding (yet), or that could not be checked."""

    project: str
    url: str
    outcome: Literal["failing", "error"]
    status: int | None
    reason: str
    where: tuple[str, ...]
    failing_since: str | None  # YYYY-MM-DD


# the arrays that grow with the catalog (pending: absent from a re-rendered report)
_STREAMED = ("changes", "flags", "errors", "projects", "pending")


class Report(_Part, frozen=True):
    """An audit's report. Its long arrays are any sequence: tuples when built in memory (a
    re-rendered audit, tests), lists when read from report.json, and entries spooled to a
    temporary file by an audit (``crawler.report.spool``), read back one at a time."""

    schema_version: int
    crawler_version: str
    audit: AuditPart
    summary: Summary
    changes: Sequence[ChangeEntry]
    flags: Sequence[FlagEntry]
    errors: Sequence[ErrorEntry]
    projects: Sequence[ProjectEntry]
    requests: Requests
    # newest first; absent from a re-rendered report (the pending list is tonight's)
    pending: tuple[PendingEntry, ...] | msgspec.UnsetType = msgspec.UNSET
    # links failing but not reported yet, and links that could not be checked (the audit's own,
    # kept in the store for a re-rendered report); unset when the audit did not check links
    links: tuple[LinkEntry, ...] | msgspec.UnsetType = msgspec.UNSET

    def to_json(self) -> bytes:
        """report.json's bytes: two-space indent, UTF-8 as is, a final newline."""
        return msgspec.json.format(msgspec.json.encode(self, enc_hook=plain), indent=2) + b"\n"

    def write_json(self, out: BinaryIO, chunk: int = 200) -> None:
        """Write ``to_json()``'s bytes, the long arrays ``chunk`` entries at a time: a catalog
        of 100,000 projects is never one 150 MB string (twice: encoded, then indented), nor
        its rows all in memory at once."""
        streamed = [name for name in _STREAMED if getattr(self, name) is not msgspec.UNSET]
        empty = msgspec.structs.replace(self, **dict.fromkeys(streamed, ()))
        rest = msgspec.json.format(msgspec.json.encode(empty, enc_hook=plain), indent=2)
        for name in streamed:
            entries: Sequence[Any] = getattr(self, name)
            key = b'\n  "' + name.encode() + b'": ['
            # the top-level key (indented two spaces; a JSON string holds no raw newline)
            before, rest = rest.split(key + b"]", 1)
            out.write(before + key)
            for start in range(0, len(entries), chunk):
                rows = msgspec.json.encode(entries[start : start + chunk], enc_hook=plain)
                # "[\n  {…},\n  {…}\n]": its entries, indented one level more
                body = msgspec.json.format(rows, indent=2)[1:-2].replace(b"\n", b"\n  ")
                out.write((b"," if start else b"") + body)
            out.write(b"\n  ]" if entries else b"]")
        out.write(rest + b"\n")

    def as_json(self) -> dict[str, Any]:
        """The report as the JSON file holds it (for validation and for readers of the file)."""
        return dict(msgspec.json.decode(msgspec.json.encode(self, enc_hook=plain)))

    @staticmethod
    def from_json(data: bytes | str) -> Report:
        return msgspec.json.decode(data, type=Report)

    @property
    def needs_attention(self) -> bool:
        """Anything a person must look at: an error or a stale project (the exit status 1)."""
        return bool(self.summary.errors or self.summary.stale)
