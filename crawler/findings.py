"""What changed between two stored audits, from the database alone: the audit's own findings
and, later, the exports and the command line read them the same way (``findings_between``)."""

from __future__ import annotations

from datetime import timedelta

from crawler.config import Config, ProjectSpec
from crawler.diff import DiffRules, Findings, SourceNames, Tracked, diff_audit
from crawler.model import FetchError, ProjectOutcome, ProjectSnapshot
from crawler.store import AuditInfo, Store
from crawler.upstream.source import source_kinds


def source_names() -> dict[str, SourceNames]:
    return {n: SourceNames(k.label, k.project_key) for n, k in source_kinds().items()}


def location_of(spec: ProjectSpec) -> str | None:
    if spec.forge is not None:
        return spec.forge.path
    if spec.channels:
        return str(spec.channels[0])
    return spec.homepage


def findings_between(
    store: Store, config: Config | None, before: AuditInfo | None, after: AuditInfo
) -> tuple[Findings, dict[str, ProjectSnapshot], dict[str, ProjectOutcome], list[FetchError]]:
    """What changed from one stored audit to another, from the database alone (sources.yaml,
    when given, only names where projects are fetched from)."""
    baseline = {n: s.snapshot for n, s in store.states_as_of(before.id if before else None).items()}
    current = {n: s.snapshot for n, s in store.states_as_of(after.id, include_own=True).items()}
    outcomes, errors = store.audit_results(after.id)
    observed = (
        set(after.checked)
        if after.checked is not None
        else {
            name for name in after.projects if name not in outcomes or outcomes[name].status == "ok"
        }
    )
    known = {p.name: p for p in config.projects} if config else {}
    tracked = []
    for name in after.projects:
        state = current.get(name)
        spec = known.get(name)
        location = location_of(spec) if spec else None
        if location is None and state is not None and state.repo is not None:
            location = state.repo.full_name
        line = spec.forge_line() if spec and spec.forge else 0
        tracked.append(Tracked(name, location, line))
    settings = config.settings if config else None
    rules = DiffRules(
        now=after.started_at,
        names=source_names(),
        dormant_after=timedelta(days=settings.dormant_after_days if settings else 365.0),
        baseline_at=before.started_at if before else None,
    )
    findings = diff_audit(
        tracked,
        after.projects,
        baseline,
        before.projects if before else None,
        current,
        observed,
        rules,
    )
    return findings, current, outcomes, errors + list(findings.problems)
