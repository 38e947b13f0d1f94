"""Orchestration: config → sources → diff → report → store. The only place that wires the I/O
(sources, pages, database, report files) to the pure core.

The report is written before the audit is recorded as finished: an audit whose report could
not be written (read-only or full disk, a kill in between) never becomes the baseline and opens
nothing pending (its pending changes are opened in the transaction that finishes it), so the
next audit reports its findings again, as new, instead of losing them. Delivering the report
is the caller's (crawler.notify; a finished audit left undelivered is delivered late).
"""

from __future__ import annotations

import gc
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from sqlalchemy.exc import SQLAlchemyError

from crawler.config import Config, ConfigError, ProjectSpec
from crawler.config.credentials import config_secrets
from crawler.diff import DiffRules, Findings, Tracked, diff_audit, forget_memos, removed_projects
from crawler.diff.health import successor_of
from crawler.diff.links import LinkTarget
from crawler.diff.pending import PendingItem, newest_first, pending_changes, taken_by_catalog
from crawler.diff.source_labels import Names as SourceNamesMap
from crawler.failpoints import failpoint
from crawler.findings import findings_between as findings_between  # re-exported
from crawler.findings import location_of as _location
from crawler.findings import source_names as source_names
from crawler.gather import Gatherer, OpenSources, check_credentials, open_sources
from crawler.link_audit import (
    LinkNight,
    LinkStep,
    curated_targets,
    forge_entries,
    project_targets,
)
from crawler.model import (
    AuditStatus,
    Change,
    ChangeKind,
    Flag,
    FlagKind,
    ProjectOutcome,
    ProjectResult,
    ProjectSnapshot,
    ProjectStatus,
    RepoInfo,
    audit_status,
)
from crawler.report.files import write_report
from crawler.report.json_report import (
    AuditHeader,
    ReportParts,
    assemble_report,
    build_report,
    change_entry,
    error_entry,
    flag_entry,
    link_entries,
    pending_entry,
    project_entry,
    riding_entry,
)
from crawler.report.model import (
    MIN_CHECKED_SHARE,
    ChangeEntry,
    ErrorEntry,
    FlagEntry,
    ProjectEntry,
    Report,
)
from crawler.report.spool import InOrder, Spool, joined
from crawler.report.words import change_summary
from crawler.report.words import last_checked as _since
from crawler.report.words import plural as counted
from crawler.store import AuditInfo, Store
from crawler.store.database import StoreError, describe_db_error
from crawler.store.links import link_findings, record_link_findings
from crawler.store.lock import AuditLockLost
from crawler.upstream.forge_links import ForgeLinks
from crawler.upstream.http import redact
from crawler.upstream.pages import PageFetcher

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from crawler.progress import AuditProgress

log = logging.getLogger(__name__)
AUDIT_BATCH = 500  # projects fetched, compared, recorded and worded together; two batches are
# in memory at once (one recorded while the next is fetched): as much as one of 1,000 was
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|PRIVATE", re.IGNORECASE)


@dataclass(frozen=True)
class AuditOutcome:
    audit_id: int
    status: AuditStatus
    report: Report
    report_dir: Path | None
    report_error: str | None = None  # why the report files could not be written
    stopped: bool = False  # asked to stop (SIGTERM): what it left unchecked is not a failure

    @property
    def exit_code(self) -> int:
        """0 all checked and reported; 1 when anything needs a person (errors, stale
        projects, a report that could not be written, an audit that checked too little)."""
        too_little = self.report.summary.checked_too_little() and not self.stopped
        return 1 if self.report_error or self.report.needs_attention or too_little else 0


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
        raise ConfigError(
            f"--only: unknown {'project' if len(unknown) == 1 else 'projects'} {unknown}; "
            f"known: {sorted(names)}"
        )
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
            f"{config.path}: lists {counted(len(listed), 'project')} where the last audit tracked "
            f"{len(baseline.projects)}: {len(dropped)} would be reported removed ({shown}). "
            "If that is intended, run with --allow-removals; otherwise check the file."
        )


def _overall_status(tally: _Tally, stopped: bool) -> AuditStatus:
    if tally.tracked and tally.failed == tally.tracked:
        return "failed"
    if stopped or len(tally.errors) or len(tally.checked) < tally.tracked * MIN_CHECKED_SHARE:
        return "partial"  # checked too little: a night lost to a limit is no quiet night
    return "complete"


def _outcomes(results: Mapping[str, ProjectResult]) -> dict[str, ProjectOutcome]:
    """Projects not plainly checked: not checked, failed, or checked only in part."""
    return {
        name: ProjectOutcome(r.status, r.note)
        for name, r in results.items()
        if r.status != ProjectStatus.OK or r.note or r.errors
    }


_NEVER_STALE = (ProjectStatus.OK, ProjectStatus.UNTRACKED, ProjectStatus.RIDING)


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
        if outcome is None or outcome.status in _NEVER_STALE:
            continue
        since = last_checked.get(name)
        waited = now - (since or first_audit or now)
        if waited <= stale_after:
            continue
        flags.append(
            Flag(
                project=name,
                kind=FlagKind.STALE,
                new=True,
                details={"last_checked": _iso(since) if since else None, "days": waited.days},
            )
        )
    return flags


def _compare_batch(
    listed: Sequence[str],
    batch: Sequence[ProjectSpec],
    prior: Mapping[str, ProjectSnapshot],
    baseline: AuditInfo | None,
    results: Mapping[str, ProjectResult],
    rules: DiffRules,
) -> tuple[dict[str, ProjectResult], dict[str, ProjectSnapshot], Findings]:
    """The diff of one batch of this audit: the results (a project the diff could not compare
    demoted to an error), each project's state after it, and the findings (removals apart)."""

    def compare(
        results: Mapping[str, ProjectResult],
    ) -> tuple[dict[str, ProjectSnapshot], Findings]:
        checked = {n: r for n, r in results.items() if r.status == ProjectStatus.OK}
        current = {**prior, **{n: r.snapshot for n, r in checked.items() if r.snapshot}}
        findings = diff_audit(
            [Tracked(s.name, _location(s), s.forge_line() if s.forge else 0) for s in batch],
            listed,
            prior,
            baseline.projects if baseline else None,
            current,
            set(checked),
            rules,
            removals=False,
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


def batches(specs: Sequence[ProjectSpec], size: int) -> Iterator[list[ProjectSpec]]:
    for start in range(0, len(specs), size):
        yield list(specs[start : start + size])


_T = TypeVar("_T")


class _Tally:
    """What an audit keeps of each batch once the batch is recorded and its states let go:
    each project's worded row, flags, changes and errors written to a temporary file (their
    places in it kept, 16 bytes an entry), the pending-worthy changes and the outcomes."""

    def __init__(self, order: dict[str, int], hosts: Iterable[str] = ()) -> None:
        self.order = order  # sources.yaml position of each project of the audit
        self.spool = Spool()
        self.rows = InOrder(self.spool, ProjectEntry)
        self.changes = InOrder(self.spool, ChangeEntry)
        self.flags = InOrder(self.spool, FlagEntry)
        self.errors = InOrder(self.spool, ErrorEntry)
        self.problems = InOrder(self.spool, ErrorEntry)
        self.pending: list[Change] = []  # what may open a pending item: few a night
        self.outcomes: dict[str, ProjectOutcome] = {}
        self.checked: list[str] = []
        self.tracked = 0  # projects not untracked
        self.failed = 0  # of which ended in error
        self.batches_recorded = 0
        # what the link step needs of each batch, kept small: the links, the forge answers
        self.collect_links = False  # settings.links_per_night > 0
        self.links: list[LinkTarget] = []
        self.repos: dict[tuple[str, str], RepoInfo] = {}
        self.unsaid: set[str] = set()  # checked tonight, their repository naming no successor
        # the rows of the items others ride on (part_of): a riding item's row is its host's
        self.host_rows: dict[str, ProjectEntry | None] = dict.fromkeys(hosts)

    def position(self, project: str) -> int:
        return self.order.get(project, len(self.order))  # removed projects: after the others

    def ordered(self, items: Iterable[_T], project: Callable[[_T], str]) -> list[_T]:
        return sorted(items, key=lambda item: self.position(project(item)))


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
    batch_size: int = AUDIT_BATCH,
) -> AuditOutcome:
    # What the process holds before the audit (modules, the config) outlives it: frozen, the
    # cyclic collector does not walk it again at every full collection during the audit
    # (those found nothing and cost a tenth of an unchanged night). Unfrozen at the end.
    gc.freeze()
    try:
        return _run_audit(
            config, store, reports_dir, env=env, only=only, sleep=sleep,
            should_stop=should_stop, allow_removals=allow_removals, progress=progress,
            batch_size=batch_size,
        )  # fmt: skip
    except SQLAlchemyError as exc:  # before the audit began, or while it was marked failed
        raise StoreError(f"the audit failed: {store.failed('starting the audit', exc)}") from None
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
    batch_size: int,
) -> AuditOutcome:
    """The audit as its steps: plan the night; gather, compare and store it a batch at a
    time (then the links); report it; record it finished. Delivering the report is the
    caller's (crawler.notify)."""
    night = plan_night(config, store, env, only, allow_removals)
    audit_id = store.begin_audit(config.path, night.listed, night.started)
    asked_to_stop = should_stop or (lambda: False)
    checked = _check_night(
        config, store, audit_id, night, sleep=sleep, asked_to_stop=asked_to_stop,
        progress=progress, batch_size=batch_size,
    )  # fmt: skip
    if store.failure is not None:
        raise StoreError(_store_failed(store, audit_id, checked.results.values()))
    stopped = asked_to_stop()
    reported = report_night(config, store, audit_id, night, checked, stopped)
    return _finish_night(store, audit_id, reports_dir, night, checked, reported, stopped)


@dataclass(frozen=True)
class Night:
    """What an audit is to do, decided before it begins: the projects selected (those that
    ride on another apart: never fetched), the baseline, when each was last checked, and the
    tally its batches are worded into (its temporary file made now: a machine without a
    writable TMPDIR stops here, with no audit left 'running')."""

    env: dict[str, str]
    secrets: list[str]
    specs: list[ProjectSpec]  # selected (--only), in sources.yaml order
    riders: list[ProjectSpec]  # part_of: never fetched, no request
    fetched: list[ProjectSpec]
    baseline: AuditInfo | None
    last_checked: Mapping[str, datetime]
    started: datetime
    listed: list[str]  # every project of sources.yaml
    tally: _Tally
    names: SourceNamesMap
    rules: DiffRules


def plan_night(
    config: Config,
    store: Store,
    env: Mapping[str, str] | None,
    only: Sequence[str] | None,
    allow_removals: bool,
) -> Night:
    """The first step: what tonight checks, and the refusals that stop an audit before it
    begins (an unknown --only, a file that drops most projects, a broken credential)."""
    env = dict(os.environ if env is None else env)
    secrets = [*secrets_in(env), *config_secrets(config, env)]
    specs = select_projects(config, only)
    riders = [spec for spec in specs if spec.part_of is not None]  # never fetched: no request
    fetched = [spec for spec in specs if spec.part_of is None]
    baseline = store.baseline_for()
    check_removals(config, baseline, allow_removals or bool(only))
    last_checked = store.last_checked()
    started = _now()
    listed = [p.name for p in config.projects]
    tally = _Tally({spec.name: i for i, spec in enumerate(specs)}, (str(r.part_of) for r in riders))
    tally.collect_links = config.settings.links_per_night > 0
    check_credentials(fetched, env)  # a broken key: no audit begins (ConfigError, exit 2)
    names = source_names()
    rules = DiffRules(
        now=started,
        names=names,
        channel_grace=timedelta(days=config.settings.channel_grace_days),
        dormant_after=timedelta(days=config.settings.dormant_after_days),
        baseline_at=baseline.started_at if baseline else None,
    )
    return Night(env, secrets, specs, riders, fetched, baseline, last_checked, started, listed,
                 tally, names, rules)  # fmt: skip


@dataclass(frozen=True)
class _Checked:
    """What gathering, comparing and storing the night left: the batch in hand when it
    stopped (what a failing database is told to keep), a lost lock, the link step's night,
    and each source's usage."""

    results: dict[str, ProjectResult]
    lock_lost: AuditLockLost | None
    links: LinkNight | None
    usage: dict[str, Any]


def _check_night(
    config: Config,
    store: Store,
    audit_id: int,
    night: Night,
    *,
    sleep: Callable[[float], None],
    asked_to_stop: Callable[[], bool],
    progress: AuditProgress | None,
    batch_size: int,
) -> _Checked:
    """Gather, compare and store every batch, then check the links; the sources and the page
    fetcher opened for it and closed after. A defect outside any one project marks the audit
    failed and is raised, redacted."""

    def clock() -> str:
        return _iso(_now())

    web = PageFetcher(config.settings, store, env=night.env)
    abandoned = threading.Event()  # the audit ended early: a batch still fetched stops

    def stop() -> bool:  # asked to, or the database failed: nothing could be recorded
        return asked_to_stop() or store.failure is not None or abandoned.is_set()

    gatherer = Gatherer(
        web, clock, secrets=night.secrets, should_stop=stop, progress=progress,
        pin_text_limit=config.settings.pin_text_limit,
        project_deadline=config.settings.project_deadline,
        dormant_after_days=config.settings.dormant_after_days,
    )  # fmt: skip
    results: dict[str, ProjectResult] = {}  # the batch in hand
    if progress is not None:
        progress.start(len(night.fetched))
    try:
        sources = open_sources(
            config, night.fetched, env=night.env, cache=store, web=web, clock=clock,
            sleep=sleep, should_stop=stop, on_fetched=gatherer.on_fetched,
            wants_readme=gatherer.wants_readme,
        )  # fmt: skip
        fetching = ThreadPoolExecutor(max_workers=1, thread_name_prefix="audit-fetch")
        try:
            lock_lost = _batch_by_batch(
                store, audit_id, night, gatherer, sources, fetching, results, batch_size
            )
            links = None
            if lock_lost is None and store.failure is None:  # the sources still open
                links = _link_step(
                    config, store, audit_id, night, sources, web, sleep,
                    lambda: asked_to_stop() or store.failure is not None,
                )  # fmt: skip
            usage = {**sources.usage(), **(links.forge_usage if links else {})}
        finally:
            abandoned.set()  # the audit stopped early: the batch fetched ahead ends at once
            fetching.shutdown(wait=True, cancel_futures=True)
            sources.close()
    except Exception as exc:  # a defect outside any one project: never leak a token
        _record_failed(store, audit_id, [])
        raise RuntimeError(redact(f"audit {audit_id} failed: {exc}", *night.secrets)) from None
    finally:
        web.close()
    return _Checked(results, lock_lost, links, usage)


def _batch_by_batch(
    store: Store,
    audit_id: int,
    night: Night,
    gatherer: Gatherer,
    sources: OpenSources,
    fetching: ThreadPoolExecutor,
    results: dict[str, ProjectResult],
    batch_size: int,
) -> AuditLockLost | None:
    """A batch at a time: its prior states read, fetched, compared, recorded and worded,
    then let go, so memory follows the batch and not the catalog. The next batch is fetched
    (on a thread of its own, one gather at a time) while this one is compared and recorded:
    the sources never wait on the diff or the database, and at most two batches are in
    memory. ``results`` holds the batch in hand; a lost lock is returned."""
    in_hand: _Fetching | None = None
    order = fetch_order(night.fetched, night.last_checked)
    for batch in [*batches(order, batch_size), None]:
        ahead = None
        if batch is not None:
            prior = _prior_states(store, night.baseline, batch)
            ahead = _Fetching(batch, prior, fetching.submit(gatherer.gather, sources, batch, prior))
        if in_hand is not None:
            results.update(in_hand.results.result())
            lock_lost = _tally_batch(store, audit_id, in_hand.batch, in_hand.prior, night, results)
            if lock_lost is not None or store.failure is not None:
                return lock_lost
            results.clear()
        in_hand = ahead
    return None


def _link_step(
    config: Config,
    store: Store,
    audit_id: int,
    night: Night,
    sources: OpenSources,
    web: PageFetcher,
    sleep: Callable[[float], None],
    stop: Callable[[], bool],
) -> LinkNight | None:
    """The links checked once every batch is recorded, the sources still open: a repository
    link is asked of its forge with the projects' budget and pacing (check_links)."""
    forges = ForgeLinks(config, night.env, opened=sources.by_name, cache=store, web=web,
                        sleep=sleep)  # fmt: skip
    return check_links(
        config, store, audit_id, night.started, night.tally, stop, forges, night.fetched
    )


@dataclass(frozen=True)
class Reported:
    """The night's report, and what finishing the audit records with it."""

    report: Report
    status: AuditStatus
    riding: list[ProjectResult]
    open_pending: Callable[[Session], None]
    stats: dict[str, Any]
    finished: datetime


def report_night(
    config: Config,
    store: Store,
    audit_id: int,
    night: Night,
    checked: _Checked,
    stopped: bool,
) -> Reported:
    """The report of the night, once every batch is recorded: the riding items' rows, the
    projects removed and gone stale, the audit's status, what is pending after it."""
    tally, baseline, names = night.tally, night.baseline, night.names
    riding = _ride(night.riders, tally)
    removed = removed_projects(night.listed, baseline.projects if baseline else None)
    first = store.first_audit_started() if baseline else None
    stale = stale_flags(
        [s.name for s in night.specs], tally.outcomes, night.last_checked, first,
        night.started, timedelta(days=config.settings.stale_after_days),
    )  # fmt: skip
    status = _overall_status(tally, stopped)
    links = checked.links
    pending, open_pending = _pending(
        config, store, audit_id, night.started,
        [*tally.ordered(tally.pending, lambda c: c.project), *removed], names,
        links.still_bad() if links is not None else None, tally.unsaid,
    )  # fmt: skip
    finished = _now()
    usage = checked.usage
    if links is not None:
        usage = {**usage, "links": links.usage()}
    stats = {"sources": usage}
    header = AuditHeader(
        audit_id,
        night.started,
        finished,
        status,
        baseline.id if baseline else None,
        not_selected=len(config.projects) - len(night.specs),
    )
    report = _assemble(header, tally, removed, stale, names, stats)
    report = msgspec.structs.replace(
        report, pending=tuple(pending_entry(item, audit_id) for item in pending)
    )
    if links is not None:
        report = msgspec.structs.replace(report, links=link_entries(links.verdicts))
    return Reported(report, status, riding, open_pending, stats, finished)


def _assemble(
    header: AuditHeader,
    tally: _Tally,
    removed: Sequence[Change],
    stale: Sequence[Flag],
    names: SourceNamesMap,
    stats: dict[str, Any],
) -> Report:
    """The report from what the batches worded into the tally's spool, in catalog order,
    then the projects removed and the stale flags."""
    spool = tally.spool
    return assemble_report(
        audit=header,
        parts=ReportParts(
            changes=joined(
                spool,
                ChangeEntry,
                tally.changes.places(),
                after=(change_entry(c, names) for c in removed),
            ),
            flags=joined(
                spool,
                FlagEntry,
                tally.flags.places(),
                after=(flag_entry(flag, None, names) for flag in stale),
            ),
            errors=joined(spool, ErrorEntry, tally.errors.places(), tally.problems.places()),
            projects=joined(spool, ProjectEntry, tally.rows.places()),
        ),
        usage=stats,
    )


def _finish_night(
    store: Store,
    audit_id: int,
    reports_dir: Path,
    night: Night,
    checked: _Checked,
    reported: Reported,
    stopped: bool,
) -> AuditOutcome:
    """The last step: the report written, then the audit recorded finished (it becomes a
    baseline, its pending items open) in one transaction; failed instead when the report
    could not be written or the audit lock was lost."""
    lock_lost = checked.lock_lost
    report, status, finished, stats = (
        reported.report, reported.status, reported.finished, reported.stats
    )  # fmt: skip
    baseline = night.baseline
    if lock_lost is None:
        try:  # frozen past the lock's lease, another audit may have run: record nothing then
            store.confirm_audit_lock()
        except AuditLockLost as exc:
            lock_lost = exc
    if lock_lost is not None:
        return _lock_lost(store, audit_id, lock_lost, night.tally, reported)
    report_dir: Path | None = None
    report_error: str | None = None
    try:
        report_dir = write_report(report, reports_dir)
        failpoint("report-written")
    except OSError as exc:
        # Not recorded as a usable audit: the next one diffs against the last reported
        # baseline and reports these findings again.
        report_error = f"could not write the report under {reports_dir}: {exc.strerror or exc}"
        status = "failed"
        log.error("%s", report_error)
    try:
        store.finish_audit(
            audit_id, reported.riding, status, finished, baseline.id if baseline else None,
            stats, checked_earlier=night.tally.checked,
            also=reported.open_pending if status != "failed" else None,
        )  # fmt: skip
    except SQLAlchemyError as exc:
        store.failed("recording the audit", exc)
        raise StoreError(_store_failed(store, audit_id, [])) from None
    failpoint("audit-finished")
    return AuditOutcome(audit_id, status, report, report_dir, report_error, stopped)


def _lock_lost(
    store: Store, audit_id: int, lost: AuditLockLost, tally: _Tally, reported: Reported
) -> AuditOutcome:
    """Another audit may have run while this one was frozen past its lease: nothing more is
    recorded, reported or sent, and the audit is marked failed (never a baseline)."""
    report_error = (
        f"{lost}: nothing of this audit was recorded, reported or sent"
        if not tally.batches_recorded
        else f"{lost}: this audit stopped; what it recorded is marked failed (never a "
        "baseline) and nothing was reported or sent"
    )
    log.error("%s", report_error)
    store.finish_audit(audit_id, [], "failed", reported.finished, None, reported.stats)
    return AuditOutcome(audit_id, "failed", reported.report, None, report_error)


def _ride(riders: Sequence[ProjectSpec], tally: _Tally) -> list[ProjectResult]:
    """Each riding item's row, from the row of the item it ships with, and its result to
    record: status riding, its note the host's name (a fact; the report words it)."""
    results = []
    for spec in riders:
        host = str(spec.part_of)
        entry = riding_entry(spec.name, host, tally.host_rows.get(host))
        tally.rows.add(tally.position(spec.name), entry)
        results.append(ProjectResult(spec.name, ProjectStatus.RIDING, note=host))
    return results


@dataclass(frozen=True)
class _Fetching:
    """A batch being fetched: its projects, their prior states, and the gather's results."""

    batch: list[ProjectSpec]
    prior: dict[str, ProjectSnapshot]
    results: Future[dict[str, ProjectResult]]


def _prior_states(
    store: Store, baseline: AuditInfo | None, batch: Sequence[ProjectSpec]
) -> dict[str, ProjectSnapshot]:
    """The last good state of each project of ``batch`` (as of the baseline)."""
    return {
        name: state.snapshot
        for name, state in store.states_as_of(
            baseline.id if baseline else None, projects=[spec.name for spec in batch]
        ).items()
    }


def _tally_batch(
    store: Store,
    audit_id: int,
    batch: Sequence[ProjectSpec],
    prior: Mapping[str, ProjectSnapshot],
    night: Night,
    results: dict[str, ProjectResult],
) -> AuditLockLost | None:
    """One fetched batch (``results`` holds what it fetched, and receives what the diff made
    of it: what a failing database is told to keep): compared, worded into the night's
    tally, recorded."""
    if store.failure is not None:
        return None
    current, findings, outcomes = compare_batch(batch, prior, night, results)
    word_batch(night.tally, batch, results, current, findings, outcomes, night.names)
    forget_memos()  # the batch's catalog rows are worded: let its snapshots go
    return _record_batch(store, audit_id, night.tally, results)


def compare_batch(
    batch: Sequence[ProjectSpec],
    prior: Mapping[str, ProjectSnapshot],
    night: Night,
    results: dict[str, ProjectResult],
) -> tuple[dict[str, ProjectSnapshot], Findings, dict[str, ProjectOutcome]]:
    """The compare step of one batch: ``results`` updated with what the diff made of them (a
    project it could not compare demoted to an error), each project's state after tonight,
    the findings, and the outcomes of the projects not plainly checked (a deferred one says
    since when it was last checked)."""
    compared, current, findings = _compare_batch(
        night.listed, batch, prior, night.baseline, results, night.rules
    )
    results.update(compared)
    outcomes = _outcomes(results)
    for name, outcome in outcomes.items():
        if outcome.status == ProjectStatus.DEFERRED:
            since = _since(night.last_checked.get(name), night.started)
            outcomes[name] = replace(outcome, note=f"{outcome.note or 'not checked'}; {since}")
    return current, findings, outcomes


def word_batch(
    tally: _Tally,
    batch: Sequence[ProjectSpec],
    results: Mapping[str, ProjectResult],
    current: Mapping[str, ProjectSnapshot],
    findings: Findings,
    outcomes: dict[str, ProjectOutcome],
    names: SourceNamesMap,
) -> None:
    """One compared batch worded into the tally (its spool keeps the entries in catalog
    order): outcomes, counts, errors, changes, flags, rows, and what the link step needs."""
    tally.outcomes.update(outcomes)
    at = tally.position
    for result in results.values():
        if result.status != ProjectStatus.UNTRACKED:
            tally.tracked += 1
            tally.failed += result.status == ProjectStatus.ERROR
        if result.status == ProjectStatus.OK and successor_of(result.snapshot) is None:
            tally.unsaid.add(result.project)
        for error in result.errors:
            tally.errors.add(at(error.project), error_entry(error))
    for error in findings.problems:
        tally.problems.add(at(error.project), error_entry(error))
    for change in findings.changes:
        tally.changes.add(at(change.project), change_entry(change, names))
    tally.pending += pending_changes(findings.changes)
    for flag in findings.flags:
        tally.flags.add(at(flag.project), flag_entry(flag, current.get(flag.project), names))
    for row in findings.projects:
        entry = project_entry(row, current.get(row.project), outcomes.get(row.project), names)
        tally.rows.add(at(row.project), entry)
        if row.project in tally.host_rows:
            tally.host_rows[row.project] = entry
    _collect_links(tally, batch, results, current)


def _collect_links(
    tally: _Tally,
    batch: Sequence[ProjectSpec],
    results: Mapping[str, ProjectResult],
    current: Mapping[str, ProjectSnapshot],
) -> None:
    """What the link step needs of the batch, kept small: its links and its forge answers."""
    for spec in batch if tally.collect_links else ():
        tally.links += project_targets(spec, current.get(spec.name))
        checked = results.get(spec.name)
        if checked is not None and checked.status == ProjectStatus.OK and checked.snapshot:
            tally.repos.update(forge_entries(spec, checked.snapshot))


def _record_batch(
    store: Store, audit_id: int, tally: _Tally, results: Mapping[str, ProjectResult]
) -> AuditLockLost | None:
    """The store step of one batch: its results recorded, once the audit lock is confirmed
    (a lost lock is returned; a failing database remembered by the store)."""
    try:  # frozen past the lock's lease, another audit may have run: record nothing then
        store.confirm_audit_lock()
    except AuditLockLost as exc:
        return exc
    try:
        tally.checked += store.record_results(audit_id, results.values())
    except SQLAlchemyError as exc:
        store.failed("recording the audit", exc)
        return None
    tally.batches_recorded += 1
    failpoint("batch-recorded")
    return None


def check_links(
    config: Config,
    store: Store,
    audit_id: int,
    now: datetime,
    tally: _Tally,
    stop: Callable[[], bool],
    forges: ForgeLinks,
    selected: Sequence[ProjectSpec],
) -> LinkNight | None:
    """The audit's link step (crawler.link_audit): sources.yaml's links, the evidence links
    and the curated catalog's, checked within tonight's budget (a repository link of an item
    not tracked tonight asked of its forge's API: ``forges``); its changes join the audit's.
    None when the step is off (``links_per_night: 0``), was stopped, or failed (logged: a
    link check never fails the audit). What it reported is kept with the audit, for its report
    to re-render."""
    if config.settings.links_per_night == 0 or stop():
        return None
    path = curated_catalog_path(config)
    curated = read_curated(path) if path is not None and path.exists() else None
    targets = [*tally.links, *curated_targets(curated, config.settings.catalog or "catalog")]
    tracked = {(s.forge.source, s.forge.path.lower()) for s in selected if s.forge is not None}
    try:
        night = LinkStep(config.settings, store, now=now).run(
            targets, tally.repos, stop, forges=forges, tracked=tracked
        )
        night = replace(night, forge_usage=forges.usage())
        ordered = tally.ordered(night.changes, lambda c: c.project)  # as the report has them
        record_link_findings(store, audit_id, ordered, night.verdicts)
    except Exception:
        log.exception("the link check failed; the audit goes on without it")
        return None
    finally:
        forges.close()
    for change in night.changes:
        tally.changes.add(tally.position(change.project), change_entry(change, source_names()))
    tally.pending += pending_changes(night.changes)
    return night


def _record_failed(store: Store, audit_id: int, results: Iterable[ProjectResult]) -> str:
    """Mark the audit failed, keeping what it learnt (a failed audit is never a baseline);
    how that went, in a sentence."""
    try:
        store.finish_audit(audit_id, results, "failed", _now(), None, {})
    except SQLAlchemyError as exc:
        reason = describe_db_error(exc, store.url)
        return (
            f"It could not be marked failed either ({reason}): it stays 'running', which no "
            "later audit uses as a baseline."
        )
    return "It is recorded as failed, with what it had fetched."


def _store_failed(store: Store, audit_id: int, results: Iterable[ProjectResult]) -> str:
    """The one message of an audit the database failed under (the upstream is not blamed)."""
    recorded = _record_failed(store, audit_id, results)
    return (
        f"audit #{audit_id} failed: {store.failure}. {recorded} Nothing was delivered; the "
        "next audit reports these findings again."
    )


def curated_catalog_path(config: Config) -> Path | None:
    """``settings.catalog``, relative to the folder of sources.yaml."""
    if config.settings.catalog is None:
        return None
    return Path(config.path).parent / config.settings.catalog


def read_curated(path: Path) -> dict[str, Any] | None:
    """The curated catalog, or None (logged) when it cannot be read: then nothing is taken."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.error("curated catalog %s unreadable (%s): nothing pending is taken from it", path, exc)
        return None
    return data if isinstance(data, dict) else None


def _pending(
    config: Config,
    store: Store,
    audit_id: int,
    started: datetime,
    changes: Sequence[Change],
    names: SourceNamesMap,
    bad_links: set[str] | None = None,
    unsaid: AbstractSet[str] = frozenset(),
) -> tuple[list[PendingItem], Callable[[Session], None]]:
    """Everything pending after tonight, newest first, and what opens tonight's new items in
    the transaction that finishes the audit (never before: a night killed before its report
    leaves nothing open, and the next audit counts those changes as new). The link findings
    whose link is fixed (``bad_links``: the cited links that still do not answer where cited;
    None when links were not checked), the successor findings of projects that no longer name
    one (``unsaid``) and what the curated catalog (if configured) already holds are closed
    now, or never opened."""
    from crawler.store.pending import (
        as_items,
        close_fixed_links,
        close_pending,
        close_withdrawn_successors,
        new_pending,
        open_pending,
        opener,
    )

    if bad_links is not None:
        close_fixed_links(store, bad_links, started)
    if unsaid:
        close_withdrawn_successors(store, unsaid, started)
    found = new_pending(store, changes, lambda change: change_summary(change, names))
    stored, tonight = open_pending(store), as_items(found, audit_id, started)
    path = curated_catalog_path(config)
    curated = read_curated(path) if path is not None else None
    if curated is not None:
        taken = set(taken_by_catalog([*stored, *tonight], curated))
        close_pending(store, sorted(i for i in taken if i > 0), "merged", started)
        found = [new for new, item in zip(found, tonight, strict=True) if item.id not in taken]
        stored = [item for item in stored if item.id not in taken]
        tonight = [item for item in tonight if item.id not in taken]
    return newest_first([*stored, *tonight]), opener(found, audit_id, started)


# -- re-rendering stored audits -------------------------------------------------------------------


def rebuild_report(store: Store, config: Config | None, audit_id: int | None) -> Report:
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
    link_changes, listed = link_findings(store, audit.id)  # its link step's, as reported
    # an --only audit: the projects neither checked nor given an outcome were not selected
    left_out = (
        {n for n in audit.projects if n not in audit.checked and n not in outcomes}
        if audit.checked is not None
        else set()
    )
    order = [p.name for p in config.projects] if config is not None else audit.projects
    position = {name: i for i, name in enumerate(order)}
    findings = replace(  # neither their rows nor their flags: they were not looked at
        findings,
        projects=tuple(p for p in findings.projects if p.project not in left_out),
        flags=tuple(f for f in findings.flags if f.project not in left_out),
        changes=tuple(  # in sources.yaml order, as the audit's own report: then the curated
            sorted(  # catalog's records, then the projects removed
                [*findings.changes, *link_changes],
                key=lambda c: position.get(
                    c.project, len(position) + (c.kind is ChangeKind.PROJECT_REMOVED)
                ),
            )
        ),
    )
    report = build_report(
        audit=AuditHeader(
            audit.id,
            audit.started_at,
            audit.finished_at,
            audit_status(audit.status),
            audit.baseline_audit_id,
            not_selected=len(left_out),
        ),
        findings=findings,
        errors=errors,
        outcomes=outcomes,
        states=current,
        usage=audit.stats,
        names=source_names(),
    )
    checked_links = "links" in (audit.stats or {}).get("sources", {})
    return msgspec.structs.replace(report, links=link_entries(listed)) if checked_links else report
