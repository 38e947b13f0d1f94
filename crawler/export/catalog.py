"""``ExportInput`` → the ``catalog.json`` dict (see ``catalog.schema.json``). Pure.

Projects keep the input order (``sources.yaml``); platforms and integrations are sorted by id,
so one upstream change is one small hunk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from typing import Any

from crawler.export.export_input import (
    ExportInput,
    LicenseFacts,
    LicenseFileEntry,
    LinkStatus,
    ProjectInput,
)
from crawler.export.integrations import ExportError, IntegrationBuilder, is_http_url, slug
from crawler.export.labels import item_ref_cell, license_cell, plain
from crawler.untrusted import INVISIBLE, shown_url, visible
from crawler.versions import is_release_candidate

SCHEMA_VERSION = 1
MAX_NAME = 200  # a tag, path or name from upstream, in the catalog
MAX_QUOTE = 300  # the first line of extra license text


def _url(url: str | None) -> str | None:
    """An http(s) link as the catalog may publish it (crawler.untrusted.shown_url)."""
    return shown_url(url) if url and is_http_url(url) and len(url) <= 2048 else None


def _cap(text: str | None, limit: int = MAX_NAME) -> str | None:
    """Untrusted text, one line, capped (JSON escaping does the rest)."""
    if text is None:
        return None
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ordered_projects(export: ExportInput) -> list[ProjectInput]:
    """Projects in ``sources.yaml`` order. A ref dated after the audit (commit dates are
    whatever the committer's clock said) is shown undated rather than in the future."""
    projects = []
    for project in sorted(export.projects, key=lambda p: (p.order, p.name)):
        ref = project.ref
        if ref is not None and ref.date is not None and ref.date > export.audit_date:
            project = replace(project, ref=replace(ref, date=None))
        projects.append(project)
    return projects


def project_ids(export: ExportInput) -> dict[str, str]:
    """Project name → catalog id; raises ExportError when two names give one id."""
    ids: dict[str, str] = {}
    problems = []
    for project in ordered_projects(export):
        ident = slug(project.name)
        clash = [name for name, other in ids.items() if other == ident]
        if clash:
            problems.append(
                f"projects {clash[0]!r} and {project.name!r} both get the id {ident!r}: "
                "rename one in sources.yaml"
            )
        ids[project.name] = ident
    if problems:
        raise ExportError(problems)
    return ids


def _file(item: LicenseFileEntry, role: str) -> dict[str, Any]:
    return {
        "path": _cap(item.path),
        "url": _url(item.url),
        "role": role,
        "spdx_ids": list(item.spdx_ids),
    }


def license_record(facts: LicenseFacts) -> dict[str, Any]:
    files = [_file(facts.root_file, "root")] if facts.root_file is not None else []
    files += [_file(item, "bundled") for item in facts.bundled]
    extra = facts.extra_text
    return {
        "forge_verdict": facts.forge_verdict,
        "detected_spdx_ids": list(facts.detected_spdx_ids),
        "referenced_spdx_ids": list(facts.referenced_spdx_ids),
        "expression": facts.expression,
        "verdict": facts.verdict,
        "label": plain(license_cell(facts)),
        "files": files,
        "extra_text": None
        if extra is None
        else {
            "path": _cap(extra.path),
            "line": extra.line,
            "text": _cap(extra.text, MAX_QUOTE),
            "altered": extra.altered,
        },
    }


def _placing(project: ProjectInput, ids: Mapping[str, str]) -> dict[str, Any]:
    """Where the page lists an item and how it is followed: only what sources.yaml says."""
    placing: dict[str, Any] = {}
    if project.layer is not None:
        placing["layer"] = project.layer
    if project.homepage is not None and _url(project.homepage):
        placing["homepage"] = project.homepage
    if project.part_of is not None:
        placing["part_of"] = ids.get(project.part_of, slug(project.part_of))
    if project.not_trackable is not None:
        placing["not_trackable"] = _cap(project.not_trackable, MAX_QUOTE)
    return placing


def project_record(
    project: ProjectInput,
    ident: str,
    audit_date: date | None,
    ids: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``ids`` (name → id) resolves a riding item's ``part_of`` to its host's record.

    A record carries its own dates only where they say something, so that an unchanged night
    changes no record: ``last_checked`` when older than the catalog's date ``audit_date`` (or
    null: never checked), a link's ``last_ok`` and ``checked`` only when it is not working; its
    evidence entries are marked as the crawler's (``crawled``), without the audit's number or
    date, and the release it tracks is linked once, by ``tracked_ref``."""
    ref = project.ref
    tracked = None
    if ref is not None:
        tracked = {
            "kind": ref.kind,
            "name": _cap(ref.name),
            "date": ref.date.isoformat() if ref.date else None,
            "prerelease": ref.prerelease or is_release_candidate(ref.name or ""),
            "url": _url(ref.url),
            "label": plain(item_ref_cell(project)),
        }
    evidence = []
    said = _url(ref.url) if ref is not None else None  # tracked_ref links it: one place
    for link in dict.fromkeys(project.evidence):
        if is_http_url(link.url) and _url(link.url) != said:
            evidence.append({"about": link.about, "url": _url(link.url), "crawled": True})
    checked = _older(project.last_checked, audit_date)
    record = {
        "id": ident,
        "name": project.name,
        "repository": {"url": _url(project.repository_url), "forge": project.forge},
        "tracked_ref": tracked,
        "license": license_record(project.license) if project.license is not None else None,
        "evidence": evidence,
    } | _placing(project, ids or {}) | ({"stale": True} if project.stale else {})
    if project.last_checked is None or checked is not None:
        record["last_checked"] = checked
    if project.links:
        record["links"] = [
            _link(link, audit_date) for link in project.links if is_http_url(link.url)
        ]
    if project.maturity_suggestion is not None:
        record["maturity_suggestion"] = project.maturity_suggestion
    return record


def _older(day: date | None, audit_date: date | None) -> str | None:
    """``day`` when it says something beside the catalog's date: older than it."""
    if day is None or (audit_date is not None and day >= audit_date):
        return None
    return day.isoformat()


def _link(link: LinkStatus, audit_date: date | None) -> dict[str, Any]:
    """A link as last checked. A working link says so by its status alone: the nightly checks
    take turns (``links_per_night``), and the day each was last checked is no news. A link
    that is not working carries the last day it worked and the day it was last checked."""
    record: dict[str, Any] = {
        "url": link.url,
        "status": link.status,
        "moved_to": _url(link.moved_to),
    }
    if link.status != "ok":
        record["last_ok"] = link.last_ok.isoformat() if link.last_ok else None
        record["checked"] = link.checked.isoformat() if link.checked else None
    return record


def build_catalog(export: ExportInput) -> dict[str, Any]:
    """The catalog: projects, platforms, integrations. ExportError lists every problem."""
    ids = project_ids(export)
    builder = IntegrationBuilder(project_ids=ids, audit_date=export.audit_date)
    for project in ordered_projects(export):
        builder.add_project(project)
    builder.check_contradictions()
    if builder.problems:
        raise ExportError(builder.problems)
    catalog: dict[str, Any] = _visible(
        {
            "schema_version": SCHEMA_VERSION,
            "audit": {"id": export.audit_id, "date": export.audit_date.isoformat()},
            "projects": [
                project_record(p, ids[p.name], export.audit_date, ids)
                for p in ordered_projects(export)
            ],
            "platforms": builder.platform_records(),
            "integrations": builder.integration_records(),
        }
    )
    return catalog


def _visible(value: Any) -> Any:
    """Every string of the catalog under the rule of every output (crawler.untrusted): no
    invisible character survives into catalog.json."""
    if isinstance(value, str):
        return " ".join(visible(value).split()) if INVISIBLE.search(value) else value
    if isinstance(value, dict):
        return {key: _visible(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_visible(item) for item in value]
    return value
