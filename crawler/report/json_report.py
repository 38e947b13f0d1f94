"""The machine-readable report: one dict, described by ``report.schema.json``.

The Markdown report is rendered from this same dict, so the two never disagree. The tests
validate every report they produce against the schema.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

import msgspec

from crawler import __version__
from crawler.diff import Findings
from crawler.diff.licenses import detected_license, forge_spdx, license_reading
from crawler.diff.names import Names, label_of
from crawler.model import Change, FetchError, ProjectOutcome, ProjectSnapshot, ProjectStatus

SCHEMA_VERSION = 2


@dataclass(frozen=True)
class AuditHeader:
    id: int
    started_at: datetime
    finished_at: datetime | None
    status: str
    baseline_audit_id: int | None
    not_selected: int = 0  # projects of sources.yaml that --only left out of this audit


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def change_to_dict(change: Change) -> dict[str, Any]:
    return {
        "project": change.project,
        "kind": change.kind.value,
        "section": change.kind.section.value,
        "summary": change.summary,
        "before": change.before,
        "after": change.after,
        "evidence_url": change.evidence_url,
        "details": change.details,
    }


def _packages(snapshot: ProjectSnapshot | None, names: Names) -> list[dict[str, Any]]:
    if snapshot is None:
        return []
    out = []
    for package in snapshot.packages:
        newest = next((v for v in package.versions if not v.yanked), None)
        out.append(
            {
                "registry": package.registry,
                "registry_label": label_of(names, package.registry),
                "name": package.name,
                "url": package.url,
                "version": newest.version if newest else None,
                "uploaded_at": newest.uploaded_at if newest else None,
                "prerelease": newest.prerelease if newest else False,
                "license": package.license,
            }
        )
    return out


def build_report(
    *,
    audit: AuditHeader,
    findings: Findings,
    errors: list[FetchError],
    outcomes: dict[str, ProjectOutcome],
    states: dict[str, ProjectSnapshot],
    usage: dict[str, Any],
    names: Names,
) -> dict[str, Any]:
    """``outcomes`` names the projects not plainly checked (error, deferred, untracked, or
    checked with a note); every other project was checked."""
    counts: dict[str, int] = {}
    for change in findings.changes:
        counts[change.kind.value] = counts.get(change.kind.value, 0) + 1
    projects = []
    for row in findings.projects:
        snapshot = states.get(row.project)
        outcome = outcomes.get(row.project)
        repo = snapshot.repo if snapshot else None
        projects.append(
            {
                "name": row.project,
                "repo": row.repo,
                "forge": repo.forge if repo else None,
                "forge_label": label_of(names, repo.forge) if repo else None,
                "repo_url": repo.url if repo else None,
                "status": (outcome.status if outcome else ProjectStatus.OK).value,
                "note": outcome.note if outcome else None,
                "version_source": row.version_source,
                "version": row.version,
                "published_at": row.published_at,
                "prerelease": row.prerelease,
                "newest_prerelease": row.newest_prerelease,
                "license": row.license,
                "forge_license": forge_spdx(snapshot),
                "detected_license": detected_license(snapshot),
                "license_analysis": license_reading(snapshot, names),
                "packages": _packages(snapshot, names),
                "url": row.url,
            }
        )
    status_of = {p["name"]: p["status"] for p in projects}
    with_errors = {e.project for e in errors}
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "crawler_version": __version__,
        "audit": {
            "id": audit.id,
            "started_at": _iso(audit.started_at),
            "finished_at": _iso(audit.finished_at),
            "status": audit.status,
            "baseline_audit_id": audit.baseline_audit_id,
        },
        "summary": {
            "projects": len(projects),
            "checked": sum(1 for s in status_of.values() if s == "ok"),
            "checked_in_part": sum(
                1 for n, s in status_of.items() if s == "ok" and n in with_errors
            ),
            "errors": len(errors),
            "projects_with_errors": len(with_errors),
            "deferred": sum(1 for s in status_of.values() if s == "deferred"),
            "untracked": sum(1 for s in status_of.values() if s == "untracked"),
            "stale": sum(1 for f in findings.flags if f.kind.value == "stale"),
            "changes": len(findings.changes),
            "flags": len(findings.flags),
            "changes_by_kind": dict(sorted(counts.items())),
            **({"not_selected": audit.not_selected} if audit.not_selected > 0 else {}),
        },
        "changes": [change_to_dict(c) for c in findings.changes],
        "flags": [
            {
                "project": f.project,
                "kind": f.kind.value,
                "detail": f.detail,
                "new": f.new,
                "evidence_url": f.evidence_url,
                "details": f.details,
            }
            for f in findings.flags
        ],
        "errors": [
            {"project": e.project, "source": e.source, "url": e.url, "error": e.message}
            for e in errors
        ],
        "projects": projects,
        "requests": usage,
    }
    # Round-trip through JSON so the dict holds exactly what the file will hold (msgspec:
    # the same values as json.dumps/json.loads, a tenth of the time).
    return dict(msgspec.json.decode(msgspec.json.encode(report, enc_hook=_default)))


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


def validate_report(report: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError if the report does not match the shipped schema."""
    import jsonschema

    jsonschema.Draft202012Validator(report_schema()).validate(report)
