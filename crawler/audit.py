"""Orchestration: config → fetch → analyse → store → diff → report. The only place that wires
I/O (GitHub, vendor pages, database, report files) to the pure core."""

from __future__ import annotations

import base64
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crawler.analysis.licenses import analyze_license
from crawler.analysis.tables import ExtractionError, extract_page
from crawler.config import DEFAULT_API_URL, Config, ConfigError, PageSpec, ProjectSpec
from crawler.diff import Findings, diff_audit
from crawler.model import FetchError, PageSnapshot, ProjectResult, ProjectSnapshot, Source
from crawler.report.json_report import build_report, validate_report
from crawler.report.markdown import render_markdown
from crawler.store import AuditInfo, Store
from crawler.upstream.github import GitHubFetcher
from crawler.upstream.github_api import BudgetExhausted, GitHubApi, GitHubError
from crawler.upstream.http import redact
from crawler.upstream.pages import FetchedPage, PageFetcher, PageFetchError

log = logging.getLogger(__name__)
STOP_NOTE = "not checked: stop requested"


@dataclass(frozen=True)
class GitHubAccess:
    api_url: str
    token: str | None

    @staticmethod
    def from_env(config: Config, env: Mapping[str, str] | None = None) -> GitHubAccess:
        """GITHUB_API_URL (set by GitHub Actions), else sources.yaml, else api.github.com."""
        env = os.environ if env is None else env
        api_url = env.get("GITHUB_API_URL") or config.github.api_url or DEFAULT_API_URL
        token = env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or None
        return GitHubAccess(api_url.rstrip("/"), token)


@dataclass(frozen=True)
class AuditOutcome:
    audit_id: int
    status: str
    report: dict[str, Any]
    report_dir: Path

    @property
    def exit_code(self) -> int:
        return 1 if self.report["summary"]["errors"] else 0


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def select_projects(config: Config, only: Sequence[str] | None) -> list[ProjectSpec]:
    if not only:
        return list(config.projects)
    names = {p.name for p in config.projects}
    unknown = [n for n in only if n not in names]
    if unknown:
        raise ConfigError(f"--only: unknown project(s) {unknown}; known: {sorted(names)}")
    return [p for p in config.projects if p.name in only]


def _with_license_analysis(
    snapshot: ProjectSnapshot, prior: ProjectSnapshot | None
) -> ProjectSnapshot:
    """Analyse the root license text once per blob; reuse the analysis while the blob stands."""
    current = snapshot.license_file
    if current is None or current.analysis is not None:
        return snapshot
    earlier = prior.license_file if prior else None
    if earlier and earlier.blob_sha == current.blob_sha and earlier.analysis is not None:
        return replace(snapshot, license_file=replace(current, analysis=earlier.analysis))
    siblings = [e.path for e in snapshot.license_inventory or () if "/" not in e.path]
    analysis = analyze_license(current.text or "", current.path, siblings)
    return replace(snapshot, license_file=replace(current, analysis=analysis.to_dict()))


class PageReader:
    """Fetch and extract a project's watched pages; a failure keeps the last good extraction."""

    def __init__(self, fetcher: PageFetcher, api: GitHubApi, clock: Callable[[], str]) -> None:
        self.fetcher = fetcher
        self.api = api
        self.clock = clock

    def _body(self, page: PageSpec) -> tuple[str, str | None, str]:
        url = page.url
        if url is None and self.api.api_url == DEFAULT_API_URL:
            # github.com's raw file host does not spend the API budget
            url = f"https://raw.githubusercontent.com/{page.repo}/HEAD/{page.path}"
        if url is not None:
            fetched: FetchedPage = self.fetcher.fetch(url)
            if page.url is None:
                blob = f"https://github.com/{page.repo}/blob/HEAD/{page.path}"
                return (
                    fetched.body,
                    "text/markdown" if (page.path or "").endswith(".md") else None,
                    blob,
                )
            return fetched.body, fetched.content_type, fetched.url
        response = self.api.get_json(f"/repos/{page.repo}/contents/{page.path}")
        data = response.data
        text = base64.b64decode(data.get("content") or "").decode("utf-8", errors="replace")
        url = str(data.get("html_url") or f"https://github.com/{page.repo}/blob/HEAD/{page.path}")
        return text, "text/markdown", url

    def read(
        self, spec: ProjectSpec, snapshot: ProjectSnapshot, prior: ProjectSnapshot | None
    ) -> tuple[ProjectSnapshot, list[FetchError], list[str]]:
        """The snapshot with its pages, the page errors, and notes on pages not checked."""
        pages: list[PageSnapshot] = []
        errors: list[FetchError] = []
        notes: list[str] = []
        sources = list(snapshot.sources)
        earlier = {p.name: p for p in (prior.pages if prior else ())}
        for page in spec.pages:
            where = page.url or f"https://github.com/{page.repo}/blob/HEAD/{page.path}"
            try:
                body, content_type, url = self._body(page)
                pages.append(extract_page(page, body, content_type, url))
                sources.append((f"page:{page.name}", Source(url, self.clock())))
            except BudgetExhausted:  # not checked tonight: keep the last extraction, no error
                notes.append(f"page '{page.name}' not checked: rate budget spent")
                if page.name in earlier:
                    pages.append(earlier[page.name])
            except (PageFetchError, ExtractionError, GitHubError, ValueError) as exc:
                errors.append(FetchError(spec.name, f"page:{page.name}", where, str(exc)))
                if page.name in earlier:
                    pages.append(earlier[page.name])  # carry the last good extraction forward
        return replace(snapshot, pages=tuple(pages), sources=tuple(sources)), errors, notes


def _overall_status(results: Mapping[str, ProjectResult]) -> str:
    tracked = [r for r in results.values() if r.status != "untracked"]
    if tracked and all(r.status == "error" for r in tracked):
        return "failed"
    if any(r.errors for r in results.values()):
        return "partial"
    return "complete"


def _statuses(results: Mapping[str, ProjectResult]) -> dict[str, str]:
    """Projects not plainly ok: not checked, failed, or checked only in part (with a note)."""
    return {
        name: f"{r.status}:{r.note or ''}"
        for name, r in results.items()
        if r.status != "ok" or r.note
    }


def write_report(report: dict[str, Any], reports_dir: Path) -> Path:
    """reports/<UTC timestamp>/report.{md,json}, then refresh reports/latest/."""
    validate_report(report)
    stamp = report["audit"]["started_at"].replace(":", "").replace("-", "")
    target = reports_dir / f"{stamp}-audit{report['audit']['id']}"
    target.mkdir(parents=True, exist_ok=True)
    (target / "report.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (target / "report.md").write_text(render_markdown(report), encoding="utf-8")
    latest = reports_dir / "latest"
    staging = reports_dir / ".latest.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(target, staging)
    shutil.rmtree(latest, ignore_errors=True)
    staging.rename(latest)
    return target


def run_audit(
    config: Config,
    store: Store,
    reports_dir: Path,
    *,
    access: GitHubAccess,
    only: Sequence[str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    should_stop: Callable[[], bool] | None = None,
) -> AuditOutcome:
    specs = select_projects(config, only)
    baseline = store.baseline_for()
    prior = {
        n: s.snapshot for n, s in store.states_as_of(baseline.id if baseline else None).items()
    }
    started = _now()
    audit_id = store.begin_audit(config.path, [p.name for p in config.projects], started)

    def clock() -> str:
        return _iso(_now())

    api = GitHubApi(
        access.api_url,
        access.token,
        store,
        config.github,
        timeout=config.settings.timeout,
        sleep=sleep,
    )
    page_fetcher = PageFetcher(config.settings, store)
    try:
        results = _fetch(config, specs, prior, api, page_fetcher, clock, should_stop)
    except Exception as exc:  # never let a token escape in a traceback message
        store.finish_audit(audit_id, [], "failed", _now(), None, {})
        raise RuntimeError(redact(f"audit {audit_id} failed: {exc}", access.token)) from None
    finally:
        api.close()
        page_fetcher.close()

    status = _overall_status(results)
    if status == "complete" and any(r.note == STOP_NOTE for r in results.values()):
        status = "partial"
    stats: dict[str, Any] = {
        **api.stats.as_dict(),
        "rate_remaining": api.core.remaining,
        "authenticated": api.authenticated,
    }
    finished = _now()
    store.finish_audit(
        audit_id, results.values(), status, finished, baseline.id if baseline else None, stats
    )
    current = dict(prior)
    current.update({n: r.snapshot for n, r in results.items() if r.status == "ok" and r.snapshot})
    fetched = {n for n, r in results.items() if r.status == "ok"}
    findings = diff_audit(
        config.projects, prior, baseline.projects if baseline else None, current, fetched
    )
    errors = [e for r in results.values() for e in r.errors]
    report = build_report(
        audit_id=audit_id,
        started_at=started,
        finished_at=finished,
        status=status,
        baseline_audit_id=baseline.id if baseline else None,
        findings=findings,
        errors=errors,
        statuses=_statuses(results),
        states=current,
        stats=stats,
    )
    return AuditOutcome(audit_id, status, report, write_report(report, reports_dir))


def _fetch(
    config: Config,
    specs: list[ProjectSpec],
    prior: dict[str, ProjectSnapshot],
    api: GitHubApi,
    page_fetcher: PageFetcher,
    clock: Callable[[], str],
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, ProjectResult]:
    results: dict[str, ProjectResult] = {}
    for spec in specs:
        if spec.repo is None and not spec.pages:
            note = f"not on GitHub ({spec.homepage}): not trackable yet"
            results[spec.name] = ProjectResult(spec.name, "untracked", note=note)
        elif spec.repo is None:  # off GitHub, but its pages can still be watched
            note = f"not on GitHub ({spec.homepage}): releases not trackable yet; pages watched"
            snapshot = ProjectSnapshot(project=spec.name)
            results[spec.name] = ProjectResult(spec.name, "ok", snapshot=snapshot, note=note)
    fetcher = GitHubFetcher(api, config.github, clock)
    results.update(fetcher.fetch_all([s for s in specs if s.repo], prior))
    reader = PageReader(page_fetcher, api, clock)
    for spec in specs:
        result = results[spec.name]
        if should_stop is not None and should_stop():  # minimal: the lead's rewrite replaces it
            results[spec.name] = ProjectResult(spec.name, "deferred", note=STOP_NOTE)
            continue
        if result.status != "ok" or result.snapshot is None:
            continue
        snapshot = _with_license_analysis(result.snapshot, prior.get(spec.name))
        errors: list[FetchError] = []
        notes: list[str] = []
        if spec.pages:
            snapshot, errors, notes = reader.read(spec, snapshot, prior.get(spec.name))
        combined = "; ".join(n for n in (result.note, *notes) if n) or None
        results[spec.name] = replace(
            result, snapshot=snapshot, errors=(*result.errors, *errors), note=combined
        )
    return results


# -- re-rendering stored audits -------------------------------------------------------------------


def findings_between(
    store: Store, config: Config, before: AuditInfo | None, after: AuditInfo
) -> tuple[Findings, dict[str, ProjectSnapshot], dict[str, str], list[FetchError]]:
    baseline = {n: s.snapshot for n, s in store.states_as_of(before.id if before else None).items()}
    current = {n: s.snapshot for n, s in store.states_as_of(after.id).items()}
    statuses, errors = store.audit_results(after.id)
    specs = _specs_for(config, after.projects)
    fetched = {name for name in after.projects if name not in statuses}
    findings = diff_audit(specs, baseline, before.projects if before else None, current, fetched)
    return findings, current, statuses, errors


def _specs_for(config: Config, names: Sequence[str]) -> list[ProjectSpec]:
    known = {p.name: p for p in config.projects}
    return [known.get(n) or ProjectSpec(name=n, homepage="(not in sources.yaml)") for n in names]


def rebuild_report(store: Store, config: Config, audit_id: int | None) -> dict[str, Any]:
    audit = store.audit(audit_id) if audit_id is not None else store.latest_audit()
    if audit is None:
        raise ConfigError(f"no audit {audit_id} in the database" if audit_id else "no audits yet")
    before = store.audit(audit.baseline_audit_id) if audit.baseline_audit_id else None
    findings, current, statuses, errors = findings_between(store, config, before, audit)
    return build_report(
        audit_id=audit.id,
        started_at=audit.started_at,
        finished_at=audit.finished_at,
        status=audit.status,
        baseline_audit_id=audit.baseline_audit_id,
        findings=findings,
        errors=errors,
        statuses=statuses,
        states=current,
        stats=audit.stats,
    )
