"""The machine-readable report: typed structures (``crawler.report.model``) built here once,
described by ``report.schema.json``.

The Markdown report, the notifications and the CLI read these same structures, so they never
disagree. The tests validate every report they produce against the schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

import msgspec

from crawler import __version__
from crawler.diff import Findings
from crawler.diff.licenses import (
    analysis_of,
    detected_license,
    forge_agrees,
    forge_spdx,
    license_label_facts,
)
from crawler.diff.links import LinkVerdict
from crawler.diff.pending import PendingItem
from crawler.diff.source_labels import Names, label_of
from crawler.model import (
    AuditStatus,
    Change,
    CurrentVersion,
    FetchError,
    Flag,
    FlagKind,
    ProjectOutcome,
    ProjectSnapshot,
    ProjectStatus,
    TextSpan,
)
from crawler.report import words
from crawler.report.model import (
    AuditPart,
    ChangeEntry,
    ErrorEntry,
    FlagEntry,
    LicenseReading,
    LinkEntry,
    PackageEntry,
    PendingEntry,
    ProjectEntry,
    Report,
    Requests,
    SpanEntry,
    Summary,
)
from crawler.untrusted import shown_url

SCHEMA_VERSION = 2


@dataclass(frozen=True)
class AuditHeader:
    id: int
    started_at: datetime
    finished_at: datetime | None
    status: AuditStatus
    baseline_audit_id: int | None
    not_selected: int = 0  # projects of sources.yaml that --only left out of this audit



def _shown(url: str | None) -> str | None:
    """A URL as a report may show it (crawler.untrusted.shown_url): the sources store only
    that form; a state stored before they did is shown so too."""
    return shown_url(url) if url else url

def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def change_entry(change: Change, names: Names) -> ChangeEntry:
    return ChangeEntry(
        project=change.project,
        kind=change.kind.value,
        section=change.kind.section.value,
        summary=words.change_summary(change, names),
        before=_plain(change.before),
        after=_plain(change.after),
        evidence_url=_shown(change.evidence_url),
        details=_plain(change.details),
    )


def _plain(value: Any) -> Any:
    """A change's before/after/details as JSON holds them (tuples as lists, dataclasses as
    objects), so that the typed report equals the one read back from report.json."""
    return msgspec.json.decode(msgspec.json.encode(value, enc_hook=_default))


def _packages(snapshot: ProjectSnapshot | None, names: Names) -> tuple[PackageEntry, ...]:
    if snapshot is None:
        return ()
    out = []
    for package in snapshot.packages:
        newest = next((v for v in package.versions if not v.yanked), None)
        out.append(
            PackageEntry(
                registry=package.registry,
                registry_label=label_of(names, package.registry),
                name=package.name,
                url=_shown(package.url),
                version=newest.version if newest else None,
                uploaded_at=newest.uploaded_at if newest else None,
                prerelease=newest.prerelease if newest else False,
                license=package.license,
            )
        )
    return tuple(out)


def license_reading(snapshot: ProjectSnapshot | None, names: Names) -> LicenseReading | None:
    """Our reading of the root license file, for the report: ids, verdict, the text that
    differs from the template (verbatim, with lines) and why the forge may disagree."""
    analysis = analysis_of(snapshot)
    if snapshot is None or snapshot.license_file is None or analysis is None:
        return None
    forge = forge_spdx(snapshot)
    ours = detected_license(snapshot)
    agree = forge_agrees(forge, ours)
    differs = not agree or analysis.verdict != "exact"
    label = label_of(names, snapshot.repo.forge if snapshot.repo else None)
    return LicenseReading(
        path=snapshot.license_file.path,
        url=_shown(snapshot.license_file.url or None),
        blob_sha=snapshot.license_file.blob_sha,
        spdx_ids=tuple(analysis.spdx_ids),
        expression=analysis.expression,
        verdict=analysis.verdict,
        coverage=round(analysis.coverage, 3),
        copyright_holders=tuple(analysis.copyright_holders[:20]),
        extra_text=tuple(_span(span, False) for span in analysis.extra_text[:10]),
        altered_text=tuple(_span(span, True) for span in analysis.altered_text[:10]),
        notes=tuple(analysis.notes[:10]),
        differs_from_forge=differs,
        restricts=any(s.restriction for s in (*analysis.extra_text, *analysis.altered_text)),
        why=words.why_forge_differs(analysis, label, forge, ours, agree) if differs else None,
    )


def _span(span: TextSpan, altered: bool) -> SpanEntry:
    """A span for the report: where, verbatim, and what it does in plain words."""
    return SpanEntry(span.start_line, span.end_line, span.text, span.effect or "other",
                     words.finding_verb(span, altered))  # fmt: skip


def pending_entry(item: PendingItem, audit_id: int) -> PendingEntry:
    """A pending item as the report carries it (``new``: first seen by this audit)."""
    return PendingEntry(
        project=item.project,
        kind=item.kind,
        value=item.value,
        summary=item.summary,
        evidence_url=_shown(item.evidence_url),
        first_audit=item.first_audit_id,
        first_seen=words.day(item.first_seen_at) or "",
        new=item.first_audit_id == audit_id,
        before=item.before,
    )


def link_entries(verdicts: Iterable[LinkVerdict]) -> tuple[LinkEntry, ...]:
    """Tonight's links that failed without being a finding, and those that could not be
    checked, as the report carries them."""
    entries = []
    for verdict in verdicts:
        history = verdict.history
        if history.outcome not in ("failing", "error"):
            continue
        entries.append(
            LinkEntry(
                project=verdict.target.project,
                url=verdict.target.url,
                outcome="error" if history.outcome == "error" else "failing",
                status=history.status,
                reason=history.reason,
                where=verdict.places or (verdict.target.where,),
                failing_since=words.day(history.failing_since) if history.failing_since else None,
            )
        )
    return tuple(entries)


def project_entry(
    row: CurrentVersion,
    snapshot: ProjectSnapshot | None,
    outcome: ProjectOutcome | None,
    names: Names,
) -> ProjectEntry:
    """One project's row of the report, from its catalog row and its state after the audit."""
    repo = snapshot.repo if snapshot else None
    return ProjectEntry(
        name=row.project,
        repo=row.repo,
        forge=repo.forge if repo else None,
        forge_label=label_of(names, repo.forge) if repo else None,
        repo_url=_shown(repo.url) if repo else None,
        status=(outcome.status if outcome else ProjectStatus.OK).value,
        note=outcome.note if outcome else None,
        version_source=row.version_source,
        version=row.version,
        published_at=row.published_at,
        prerelease=row.prerelease,
        newest_prerelease=row.newest_prerelease,
        license=words.license_label(license_label_facts(snapshot), names),
        forge_license=forge_spdx(snapshot),
        detected_license=detected_license(snapshot),
        license_analysis=license_reading(snapshot, names),
        packages=_packages(snapshot, names),
        url=_shown(row.url),
    )


def riding_entry(name: str, host: str, host_entry: ProjectEntry | None) -> ProjectEntry:
    """A riding item's row: the release and license facts of the item it ships with (the
    host's own row keeps the license reading and the packages), labelled "part of HOST"."""
    note = words.part_of(host)
    if host_entry is None:  # the host was not in this audit (--only)
        return ProjectEntry(
            name=name, repo=None, forge=None, forge_label=None, repo_url=None,
            status="riding", note=note, version_source=None, version=None, published_at=None,
            prerelease=False, newest_prerelease=None, license=None, forge_license=None,
            detected_license=None, license_analysis=None, packages=(), url=None, part_of=host,
        )  # fmt: skip
    return msgspec.structs.replace(
        host_entry, name=name, status="riding", note=note, license_analysis=None,
        packages=(), part_of=host,
    )  # fmt: skip


def flag_entry(flag: Flag, snapshot: ProjectSnapshot | None, names: Names) -> FlagEntry:
    """A flag as the report carries it, worded with the project's state after the audit."""
    return FlagEntry(
        flag.project,
        flag.kind.value,
        words.flag_detail(flag, names, analysis_of(snapshot)),
        flag.new,
        _shown(flag.evidence_url),
        _plain(flag.details),
    )


@dataclass(frozen=True)
class ReportParts:
    """What a report is assembled from once every project's part is worded: an audit that
    works a batch at a time words each batch's entries and lets their states go (its entries
    may be spooled to disk, ``crawler.report.spool``: each is read once here)."""

    changes: Sequence[ChangeEntry]
    flags: Sequence[FlagEntry]
    errors: Sequence[ErrorEntry]
    projects: Sequence[ProjectEntry]


def build_report(
    *,
    audit: AuditHeader,
    findings: Findings,
    errors: list[FetchError],
    outcomes: dict[str, ProjectOutcome],
    states: Mapping[str, ProjectSnapshot],
    usage: Mapping[str, object],
    names: Names,
) -> Report:
    """``outcomes`` names the projects not plainly checked (error, deferred, untracked, or
    checked with a note); every other project was checked."""
    rows = {
        row.project: project_entry(row, states.get(row.project), outcomes.get(row.project), names)
        for row in findings.projects
    }
    for name, outcome in outcomes.items():  # a riding item's note names the item it rides on
        if outcome.status == ProjectStatus.RIDING and name in rows and outcome.note:
            rows[name] = riding_entry(name, outcome.note, rows.get(outcome.note))
    parts = ReportParts(
        changes=tuple(change_entry(c, names) for c in findings.changes),
        flags=tuple(flag_entry(f, states.get(f.project), names) for f in findings.flags),
        errors=tuple(error_entry(e) for e in errors),
        projects=tuple(rows.values()),
    )
    return assemble_report(audit=audit, parts=parts, usage=usage)


def error_entry(error: FetchError) -> ErrorEntry:
    return ErrorEntry(error.project, error.source, shown_url(error.url), error.message)


def assemble_report(
    *, audit: AuditHeader, parts: ReportParts, usage: Mapping[str, object]
) -> Report:
    counts: dict[str, int] = {}
    for change in parts.changes:
        counts[change.kind] = counts.get(change.kind, 0) + 1
    with_errors = {e.project for e in parts.errors}
    by_status = dict.fromkeys(("ok", "deferred", "untracked", "riding"), 0)
    in_part = 0
    for project in parts.projects:  # one pass: spooled rows are read, not held
        if project.status in by_status:
            by_status[project.status] += 1
        in_part += project.status == "ok" and project.name in with_errors
    return Report(
        schema_version=SCHEMA_VERSION,
        crawler_version=__version__,
        audit=AuditPart(
            id=audit.id,
            started_at=_iso(audit.started_at) or "",
            finished_at=_iso(audit.finished_at),
            status=audit.status,
            baseline_audit_id=audit.baseline_audit_id,
        ),
        summary=Summary(
            projects=len(parts.projects),
            checked=by_status["ok"],
            checked_in_part=in_part,
            errors=len(parts.errors),
            projects_with_errors=len(with_errors),
            deferred=by_status["deferred"],
            untracked=by_status["untracked"],
            stale=sum(1 for f in parts.flags if f.kind == FlagKind.STALE.value),
            changes=len(parts.changes),
            flags=len(parts.flags),
            changes_by_kind=dict(sorted(counts.items())),
            not_selected=audit.not_selected,
            riding=by_status["riding"],
        ),
        changes=parts.changes,
        flags=parts.flags,
        errors=parts.errors,
        projects=parts.projects,
        requests=msgspec.convert(dict(usage), Requests),
    )


def _default(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")


@cache
def report_schema() -> dict[str, Any]:
    text = resources.files("crawler.report").joinpath("report.schema.json").read_text("utf-8")
    return dict(json.loads(text))


def validate_report(report: Report | dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError if the report does not match the shipped schema."""
    import jsonschema

    document = report.as_json() if isinstance(report, Report) else report
    jsonschema.Draft202012Validator(report_schema()).validate(document)
