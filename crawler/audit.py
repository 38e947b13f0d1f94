"""Orchestration: config → sources → diff → report → store. The only place that wires the I/O
(sources, pages, database, report files) to the pure core.

The report is written before the audit is recorded as finished: an audit whose report could
not be written (read-only or full disk, a kill in between) never becomes the baseline, so the
next audit reports its findings again instead of losing them.
"""

from __future__ import annotations

import gc
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from crawler.config import Config, ConfigError, ProjectSpec
from crawler.diff import DiffRules, Findings, Tracked, diff_audit, forget_memos
from crawler.findings import findings_between as findings_between  # re-exported
from crawler.findings import location_of as _location
from crawler.findings import source_names as source_names
from crawler.gather import Gatherer, open_sources
from crawler.model import (
    Flag,
    FlagKind,
    ProjectOutcome,
    ProjectResult,
    ProjectSnapshot,
    ProjectStatus,
)
from crawler.report.json_report import AuditHeader, build_report
from crawler.report.markdown import render_markdown
from crawler.store import AuditInfo, Store
from crawler.upstream.http import redact
from crawler.upstream.pages import PageFetcher

if TYPE_CHECKING:
    from crawler.progress import AuditProgress

log = logging.getLogger(__name__)
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|PRIVATE", re.IGNORECASE)


@dataclass(frozen=True)
class AuditOutcome:
    audit_id: int
    status: str
    report: dict[str, Any]
    report_dir: Path | None
    report_error: str | None = None  # why the report files could not be written

    @property
    def exit_code(self) -> int:
        """0 all checked and reported; 1 when anything needs a person (errors, stale
        projects, a report that could not be written)."""
        summary = self.report["summary"]
        return 1 if self.report_error or summary["errors"] or summary["stale"] else 0


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def secrets_in(env: Mapping[str, str]) -> list[str]:
    """Values of the environment that must never be printed: tokens, passwords, keys."""
    return [v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 6]


def select_projects(config: Config, only: Sequence[str] | None) -> list[ProjectSpec]:
    if not only:
        return list(config.projects)
    names = {p.name for p in config.projects}
    unknown = [n for n in only if n not in names]
    if unknown:
        raise ConfigError(f"--only: unknown project(s) {unknown}; known: {sorted(names)}")
    return [p for p in config.projects if p.name in only]


def fetch_order(
    specs: Sequence[ProjectSpec], last_checked: Mapping[str, datetime]
) -> list[ProjectSpec]:
    """Least recently checked first, so a budget smaller than one audit rotates through the
    catalog instead of starving its tail every night; never-checked projects lead."""
    epoch = datetime.min.replace(tzinfo=UTC)
    ranked = sorted(enumerate(specs), key=lambda p: (last_checked.get(p[1].name, epoch), p[0]))
    return [spec for _, spec in ranked]


def check_removals(config: Config, baseline: AuditInfo | None, allow_removals: bool) -> None:
    """Refuse a configuration that would drop more than half of the tracked projects at once
    (an emptied or truncated sources.yaml), unless asked to."""
    if baseline is None or allow_removals or not baseline.projects:
        return
    listed = {p.name for p in config.projects}
    dropped = [name for name in baseline.projects if name not in listed]
    if len(dropped) * 2 > len(baseline.projects):
        shown = ", ".join(dropped[:5]) + (
            f" and {len(dropped) - 5} more" if len(dropped) > 5 else ""
        )
        raise ConfigError(
            f"{config.path}: lists {len(listed)} project(s) where the last audit tracked "
            f"{len(baseline.projects)}: {len(dropped)} would be reported removed ({shown}). "
            "If that is intended, run with --allow-removals; otherwise check the file."
        )


def write_report(report: dict[str, Any], reports_dir: Path) -> Path:
    """reports/<UTC timestamp>-audit<N>/report.{md,json}, then refresh reports/latest/."""
    stamp = report["audit"]["started_at"].replace(":", "").replace("-", "")
    target = reports_dir / f"{stamp}-audit{report['audit']['id']}"
    target.mkdir(parents=True, exist_ok=True)
    # msgspec writes what json.dumps(indent=2, ensure_ascii=False) writes, twenty times faster
    (target / "report.json").write_bytes(
        msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n"
    )
    (target / "report.md").write_text(render_markdown(report), encoding="utf-8")
    latest = reports_dir / "latest"
    staging = reports_dir / ".latest.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(target, staging)
    shutil.rmtree(latest, ignore_errors=True)
    staging.rename(latest)
    return target


def _overall_status(results: Mapping[str, ProjectResult], stopped: bool) -> str:
    tracked = [r for r in results.values() if r.status != ProjectStatus.UNTRACKED]
    if tracked and all(r.status == ProjectStatus.ERROR for r in tracked):
        return "failed"
    if stopped or any(r.errors for r in results.values()):
        return "partial"
    return "complete"


def _outcomes(results: Mapping[str, ProjectResult]) -> dict[str, ProjectOutcome]:
    """Projects not plainly checked: not checked, failed, or checked only in part."""
    return {
        name: ProjectOutcome(r.status, r.note)
        for name, r in results.items()
        if r.status != ProjectStatus.OK or r.note or r.errors
    }


def _age(since: datetime | None, now: datetime) -> str:
    if since is None:
        return "never checked yet"
    days = (now - since).days
    ago = "today" if days == 0 else f"{days} day{'s' * (days != 1)} ago"
    return f"last checked {since.date().isoformat()} ({ago})"


def stale_flags(
    names: Sequence[str],
    results: Mapping[str, ProjectOutcome],
    last_checked: Mapping[str, datetime],
    first_audit: datetime | None,
    now: datetime,
    stale_after: timedelta,
) -> list[Flag]:
    """A project the audits have not checked for longer than ``stale_after``: the catalog
    would show old facts as current, so it is a flag and a non-zero exit."""
    flags = []
    for name in names:
        outcome = results.get(name)
        if outcome is None or outcome.status in (ProjectStatus.OK, ProjectStatus.UNTRACKED):
            continue
        since = last_checked.get(name)
        waited = now - (since or first_audit or now)
        if waited <= stale_after:
            continue
        detail = (
            f"not checked for {waited.days} days: {_age(since, now)}; the catalog shows its "
            "last good state"
        )
        flags.append(
            Flag(
                project=name,
                kind=FlagKind.STALE,
                detail=detail,
                new=True,
                details={"last_checked": _iso(since) if since else None, "days": waited.days},
            )
        )
    return flags


def _compare_all(
    config: Config,
    specs: Sequence[ProjectSpec],
    prior: Mapping[str, ProjectSnapshot],
    baseline: AuditInfo | None,
    results: Mapping[str, ProjectResult],
    rules: DiffRules,
) -> tuple[dict[str, ProjectResult], dict[str, ProjectSnapshot], Findings]:
    """The diff of this audit: the results (a project the diff could not compare demoted to an
    error), each project's state after it, and the findings."""

    def compare(
        results: Mapping[str, ProjectResult],
    ) -> tuple[dict[str, ProjectSnapshot], Findings]:
        checked = {n: r for n, r in results.items() if r.status == ProjectStatus.OK}
        current = {**prior, **{n: r.snapshot for n, r in checked.items() if r.snapshot}}
        findings = diff_audit(
            [Tracked(s.name, _location(s)) for s in specs],
            [p.name for p in config.projects],
            prior,
            baseline.projects if baseline else None,
            current,
            set(checked),
            rules,
        )
        return current, findings

    current, findings = compare(results)
    if not findings.problems:
        return dict(results), current, findings
    # Tonight's state of a project that could not be compared must not become its baseline:
    # the next audit would take its changes as seen. It is an error; its last good state stays.
    failed = {p.project: p for p in findings.problems}
    demoted = {
        name: replace(
            r, status=ProjectStatus.ERROR, snapshot=None, errors=(*r.errors, failed[name])
        )
        if name in failed
        else r
        for name, r in results.items()
    }
    current, findings = compare(demoted)
    problems = tuple(p for p in findings.problems if p.project not in failed)
    return demoted, current, replace(findings, problems=problems)


def run_audit(
    config: Config,
    store: Store,
    reports_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    only: Sequence[str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    should_stop: Callable[[], bool] | None = None,
    allow_removals: bool = False,
    progress: AuditProgress | None = None,
) -> AuditOutcome:
    # What the process holds before the audit (modules, the config) outlives it: frozen, the
    # cyclic collector does not walk it again at every full collection during the audit
    # (those found nothing and cost a tenth of an unchanged night). Unfrozen at the end.
    gc.freeze()
    try:
        return _run_audit(
            config, store, reports_dir, env=env, only=only, sleep=sleep,
            should_stop=should_stop, allow_removals=allow_removals, progress=progress,
        )  # fmt: skip
    finally:
        forget_memos()
        gc.unfreeze()


def _run_audit(
    config: Config,
    store: Store,
    reports_dir: Path,
    *,
    env: Mapping[str, str] | None,
    only: Sequence[str] | None,
    sleep: Callable[[float], None],
    should_stop: Callable[[], bool] | None,
    allow_removals: bool,
    progress: AuditProgress | None,
) -> AuditOutcome:
    env = dict(os.environ if env is None else env)
    secrets = secrets_in(env)
    specs = select_projects(config, only)
    baseline = store.baseline_for()
    check_removals(config, baseline, allow_removals or bool(only))
    prior = {
        n: s.snapshot for n, s in store.states_as_of(baseline.id if baseline else None).items()
    }
    last_checked = store.last_checked()
    started = _now()
    audit_id = store.begin_audit(config.path, [p.name for p in config.projects], started)

    def clock() -> str:
        return _iso(_now())

    web = PageFetcher(config.settings, store)
    stop = should_stop or (lambda: False)
    gatherer = Gatherer(
        web,
        clock,
        secrets=secrets,
        should_stop=stop,
        pin_text_limit=config.settings.pin_text_limit,
        project_deadline=config.settings.project_deadline,
        progress=progress,
    )
    try:
        sources = open_sources(
            config, specs, env=env, cache=store, web=web, clock=clock, sleep=sleep,
            should_stop=stop, on_fetched=gatherer.on_fetched,
        )  # fmt: skip
        try:
            results = gatherer.gather(sources, fetch_order(specs, last_checked), prior)
            usage = sources.usage()
        finally:
            sources.close()
    except Exception as exc:  # a defect outside any one project: never leak a token
        store.finish_audit(audit_id, [], "failed", _now(), None, {})
        raise RuntimeError(redact(f"audit {audit_id} failed: {exc}", *secrets)) from None
    finally:
        web.close()

    results = {spec.name: results[spec.name] for spec in specs}  # sources.yaml order
    stopped = stop()
    names = source_names()
    rules = DiffRules(
        now=started, names=names, channel_grace=timedelta(days=config.settings.channel_grace_days)
    )
    results, current, findings = _compare_all(config, specs, prior, baseline, results, rules)
    status = _overall_status(results, stopped)
    outcomes = _outcomes(results)
    first = store.first_audit_started() if baseline else None
    stale = stale_flags(
        [s.name for s in specs], outcomes, last_checked, first, started,
        timedelta(days=config.settings.stale_after_days),
    )  # fmt: skip
    findings = replace(findings, flags=(*findings.flags, *stale))
    outcomes = {
        name: replace(o, note=f"{o.note or 'not checked'}; {_age(last_checked.get(name), started)}")
        if o.status == ProjectStatus.DEFERRED
        else o
        for name, o in outcomes.items()
    }
    errors = [e for r in results.values() for e in r.errors] + list(findings.problems)
    finished = _now()
    stats = {"sources": usage}
    report = build_report(
        audit=AuditHeader(audit_id, started, finished, status, baseline.id if baseline else None),
        findings=findings,
        errors=errors,
        outcomes=outcomes,
        states=current,
        usage=stats,
        names=names,
    )
    report_dir: Path | None = None
    report_error: str | None = None
    try:
        report_dir = write_report(report, reports_dir)
    except OSError as exc:
        # Not recorded as a usable audit: the next one diffs against the last reported
        # baseline and reports these findings again.
        report_error = f"could not write the report under {reports_dir}: {exc.strerror or exc}"
        status = "failed"
        log.error("%s", report_error)
    store.finish_audit(
        audit_id, results.values(), status, finished, baseline.id if baseline else None, stats
    )
    return AuditOutcome(audit_id, status, report, report_dir, report_error)


# -- re-rendering stored audits -------------------------------------------------------------------


def rebuild_report(store: Store, config: Config | None, audit_id: int | None) -> dict[str, Any]:
    audit = store.audit(audit_id) if audit_id is not None else store.latest_audit()
    if audit is None:
        raise ConfigError(f"no audit {audit_id} in the database" if audit_id else "no audits yet")
    if audit.status == "running":
        latest = store.latest_audit()
        hint = f"; the latest finished audit is #{latest.id}" if latest else ""
        raise ConfigError(
            f"audit #{audit.id} never finished (killed, or still running): it has no report of "
            f"its own{hint}"
        )
    before = store.audit(audit.baseline_audit_id) if audit.baseline_audit_id else None
    findings, current, outcomes, errors = findings_between(store, config, before, audit)
    return build_report(
        audit=AuditHeader(
            audit.id, audit.started_at, audit.finished_at, audit.status, audit.baseline_audit_id
        ),
        findings=findings,
        errors=errors,
        outcomes=outcomes,
        states=current,
        usage=audit.stats,
        names=source_names(),
    )
