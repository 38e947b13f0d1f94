"""The machine-readable report: one dict, validated against ``report.schema.json``.

The Markdown report is rendered from this same dict, so the two never disagree.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from crawler.diff import Findings, detected_license, github_spdx, license_reading
from crawler.model import Change, FetchError, ProjectSnapshot

SCHEMA_VERSION = 1


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def change_to_dict(change: Change) -> dict[str, Any]:
    return {
        "project": change.project,
        "kind": change.kind.value,
        "summary": change.summary,
        "before": change.before,
        "after": change.after,
        "evidence_url": change.evidence_url,
        "details": change.details,
    }


def build_report(
    *,
    audit_id: int,
    started_at: datetime,
    finished_at: datetime | None,
    status: str,
    baseline_audit_id: int | None,
    findings: Findings,
    errors: list[FetchError],
    statuses: dict[str, str],
    states: dict[str, ProjectSnapshot],
    stats: dict[str, Any],
) -> dict[str, Any]:
    """``statuses`` maps each project to ok | error | deferred | untracked (with a note)."""
    counts: dict[str, int] = {}
    for change in findings.changes:
        counts[change.kind.value] = counts.get(change.kind.value, 0) + 1
    status_of = {name: value.split(":", 1)[0] for name, value in statuses.items()}
    projects = []
    for row in findings.projects:
        snapshot = states.get(row.project)
        raw_status = statuses.get(row.project, "ok")
        state, _, note = raw_status.partition(":")
        projects.append(
            {
                "name": row.project,
                "repo": row.repo,
                "status": state,
                "note": note or None,
                "version_source": row.version_source,
                "version": row.version,
                "published_at": row.published_at,
                "prerelease": row.prerelease,
                "license": row.license,
                "github_license": github_spdx(snapshot),
                "detected_license": detected_license(snapshot),
                "license_analysis": license_reading(snapshot),
                "url": row.url,
            }
        )
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "audit": {
            "id": audit_id,
            "started_at": _iso(started_at),
            "finished_at": _iso(finished_at),
            "status": status,
            "baseline_audit_id": baseline_audit_id,
        },
        "summary": {
            "projects": len(findings.projects),
            "checked": sum(1 for p in projects if p["status"] == "ok"),
            "errors": sum(1 for s in status_of.values() if s == "error"),
            "deferred": sum(1 for s in status_of.values() if s == "deferred"),
            "untracked": sum(1 for s in status_of.values() if s == "untracked"),
            "changes": len(findings.changes),
            "flags": len(findings.flags),
            "changes_by_kind": dict(sorted(counts.items())),
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
        "requests": stats,
    }
    # Round-trip through JSON so the dict holds exactly what the file will hold.
    return dict(json.loads(json.dumps(report, default=_default)))


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
    jsonschema.Draft202012Validator(report_schema()).validate(report)
