"""A stored audit → the export's plain inputs. The only module of the export that reads the store.

Everything observed comes from the database: each project's last good state as of the audit
(tracked ref, license facts, pages), when it was last checked, whether this audit checked it.
``sources.yaml``, when given, supplies only what is not stored: the order of the rows and how a
watched table's rows become integration records (its ``integrations`` mapping).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from crawler.analysis.licenses import is_license_file
from crawler.config import Config, PageSpec, ProjectSpec, standing
from crawler.diff.licenses import forge_spdx
from crawler.diff.pending import PendingItem
from crawler.export.export_input import (
    EvidenceLink,
    ExportInput,
    LicenseFacts,
    LicenseFileEntry,
    LinkStatus,
    MaturitySuggestion,
    Pin,
    ProjectInput,
    TableMapping,
    TrackedRef,
    WatchedPage,
    WatchedTable,
    license_facts_from_analysis,
    stale_on,
)
from crawler.export.merge import MergeError
from crawler.model import FetchError, PageSnapshot, ProjectOutcome, ProjectSnapshot, ProjectStatus
from crawler.report.words import NO_SOURCE, riding_count
from crawler.store import AuditInfo, Store
from crawler.untrusted import one_line, shown_url
from crawler.versions import current_version, is_prerelease

if TYPE_CHECKING:
    from crawler.export.site import HistoryPoint, SiteInput

GOOD = ("complete", "partial")
CATALOG_STALE_AFTER = 2.0  # days: Settings.catalog_stale_after_days when no sources.yaml


class NothingToExport(Exception):
    """No finished audit to export, or the one asked for cannot be exported."""


def chosen_audit(store: Store, audit_id: int | None) -> AuditInfo:
    """The audit asked for, else the latest finished one, complete or partial: a project it
    could not read is exported with its last good state and that state's own date (marked
    stale), never by falling back to an older audit for every project."""
    if audit_id is not None:
        audit = store.audit(audit_id)
        if audit is None:
            raise NothingToExport(f"no audit {audit_id} in the database")
        if audit.status not in GOOD:
            raise NothingToExport(
                f"audit #{audit_id} is {audit.status}: only a complete or partial audit is "
                "exported (its facts would not be its own)"
            )
        return audit
    audits = [a for a in store.audits() if a.status in GOOD]
    if not audits:
        raise NothingToExport("no finished audit in the database: run `crawler audit` first")
    return audits[-1]


def _day(stamp: str | None) -> date | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).date()
    except ValueError:
        return None


def _ref(name: str, snapshot: ProjectSnapshot) -> TrackedRef:
    row = current_version(name, snapshot, None)
    if row.version_source is None:
        return TrackedRef("none")
    ref_name = row.version
    if row.version_source == "commit" and snapshot.head is not None:
        ref_name = snapshot.head.sha
    return TrackedRef(
        row.version_source, ref_name, _day(row.published_at), row.prerelease, row.url
    )


def _bundled(snapshot: ProjectSnapshot) -> tuple[LicenseFileEntry, ...]:
    """License files away from the repository root: separately licensed bundled material."""
    root = snapshot.license_file.path if snapshot.license_file else None
    return tuple(
        LicenseFileEntry(entry.path, entry.url)
        for entry in snapshot.license_inventory or ()
        if "/" in entry.path and entry.path != root and _names_a_license(entry.path)
    )


def _names_a_license(path: str) -> bool:
    """LICENSE*, LICENCE*, COPYING* (a NOTICE or a third-party list is not a license)."""
    name = path.rsplit("/", 1)[-1].upper()
    return is_license_file(path) and name.startswith(("LICENSE", "LICENCE", "COPYING"))


def _license(snapshot: ProjectSnapshot) -> LicenseFacts | None:
    if snapshot.forge_license is None and snapshot.license_file is None:
        return None
    lf = snapshot.license_file
    analysis = lf.analysis if lf else None
    return license_facts_from_analysis(
        analysis,
        forge_verdict=forge_spdx(snapshot),
        root_path=lf.path if lf else None,
        root_url=lf.url or None if lf else None,
        bundled=_bundled(snapshot),
    )


def _pages(
    snapshot: ProjectSnapshot,
    spec: ProjectSpec | None,
    observed: date | None,
    fallback: date,
    unread: Mapping[str, date | None],
) -> tuple[WatchedPage, ...]:
    """The project's pages as last read; a page in ``unread`` (the exported audit could not
    read it) is stale, dated the last audit that did read it."""
    specs: dict[str, PageSpec] = {p.name: p for p in spec.pages} if spec else {}
    pages = []
    for page in snapshot.pages:
        page_spec = specs.get(page.name)
        tables = {t.name: t for t in page_spec.tables} if page_spec else {}
        read_on = unread.get(page.name) if page.name in unread else None
        pages.append(
            WatchedPage(
                name=page.name,
                url=shown_url(page.url),  # a state stored before the sources masked it
                # last read: the day its project was last checked (the stored state's fetch
                # day is the night the project last changed, not when the page was last read)
                observed_on=read_on or observed or _page_day(snapshot, page) or fallback,
                tables=tuple(
                    WatchedTable(
                        t.name,
                        t.columns,
                        t.key_columns,
                        t.rows,
                        TableMapping.from_spec(tables[t.name]) if t.name in tables else None,
                    )
                    for t in page.tables
                ),
                pins=tuple(Pin(name, value) for name, value in page.pins),
                integration=page_spec.integration if page_spec else None,
                stale=page.name in unread,
            )
        )
    return tuple(pages)


class _PageReads:
    """When a project's page was last read, from the stored audits: the newest usable audit
    up to the exported one that checked the project and recorded no error for that page."""

    def __init__(self, store: Store, audit: AuditInfo, errors: list[FetchError]) -> None:
        self._store = store
        audits = reversed(store.audits())
        self._earlier = [a for a in audits if a.status in GOOD and a.id < audit.id]
        self._errors: dict[int, set[tuple[str, str]]] = {audit.id: _page_errors(errors)}
        self.audit_id = audit.id

    def failed(self, audit_id: int) -> set[tuple[str, str]]:
        if audit_id not in self._errors:
            self._errors[audit_id] = _page_errors(self._store.audit_results(audit_id)[1])
        return self._errors[audit_id]

    def unread(self, project: str) -> dict[str, date | None]:
        """The pages the exported audit could not read → the day each was last read."""
        names = [page for name, page in self.failed(self.audit_id) if name == project]
        found: dict[str, date | None] = {}
        for page in names:
            found[page] = None
            for earlier in self._earlier:
                if earlier.checked is not None and project not in earlier.checked:
                    continue
                if (project, page) not in self.failed(earlier.id):
                    found[page] = earlier.started_at.date()
                    break
        return found


def _page_errors(errors: list[FetchError]) -> set[tuple[str, str]]:
    return {(e.project, e.source[5:]) for e in errors if e.source.startswith("page:")}


def _page_day(snapshot: ProjectSnapshot, page: PageSnapshot) -> date | None:
    for facet, where in snapshot.provenance:
        if facet == f"page:{page.name}":
            return _day(where.fetched_at)
    return None


def _evidence(snapshot: ProjectSnapshot, ref: TrackedRef) -> tuple[EvidenceLink, ...]:
    links: list[tuple[str, str | None]] = [
        ("repository", snapshot.repo.url if snapshot.repo else None),
        (ref.kind, ref.url) if ref.kind != "none" else ("ref", None),
        ("license file", snapshot.license_file.url if snapshot.license_file else None),
    ]
    links += [(f"{p.registry} package", p.url) for p in snapshot.packages]
    return tuple(EvidenceLink(about, url) for about, url in links if url)


def evidence_of(name: str, snapshot: ProjectSnapshot) -> tuple[EvidenceLink, ...]:
    """The evidence links the export writes for a project's state (the link check reads them)."""
    return _evidence(snapshot, _ref(name, snapshot))


def export_input(
    store: Store,
    audit: AuditInfo,
    config: Config | None,
    labels: Mapping[str, str],
) -> ExportInput:
    """``labels`` names each forge for prose: {"github": "GitHub", …}."""
    states = {n: s.snapshot for n, s in store.states_as_of(audit.id, include_own=True).items()}
    outcomes, errors = store.audit_results(audit.id)
    reads = _PageReads(store, audit, errors)
    checked = set(audit.checked) if audit.checked is not None else {
        name
        for name in audit.projects
        if name not in outcomes or outcomes[name].status == ProjectStatus.OK
    }
    last = store.last_checked(audit.id)
    specs = {p.name: p for p in config.projects} if config else {}
    order = [p.name for p in config.projects if p.name in audit.projects] if config else []
    order += [name for name in audit.projects if name not in order]
    audit_day = audit.started_at.date()
    stale_after = config.settings.catalog_stale_after_days if config else CATALOG_STALE_AFTER
    projects = []
    for index, name in enumerate(order):
        snapshot = states.get(name)
        last_checked = last[name].date() if name in last else None
        stale = stale_on(audit_day, last_checked, stale_after)
        placed = _placed(specs.get(name), outcomes.get(name))
        if snapshot is None:
            projects.append(
                replace(
                    ProjectInput(
                        name, index, None, None, None, None, last_checked, name in checked,
                        stale=stale,
                    ),
                    **placed,
                )
            )
            continue
        ref = _ref(name, snapshot)
        repo = snapshot.repo
        projects.append(
            ProjectInput(
                name=name,
                order=index,
                repository_url=repo.url if repo else None,
                forge=labels.get(repo.forge, repo.forge) if repo else None,
                ref=ref if repo else None,
                license=_license(snapshot),
                last_checked=last_checked,
                checked_in_audit=name in checked,
                evidence=_evidence(snapshot, ref),
                pages=_pages(
                    snapshot,
                    specs.get(name),
                    last_checked,
                    audit_day,
                    reads.unread(name)
                    if name in checked
                    else {page.name: last_checked for page in snapshot.pages if stale},
                ),
                stale=stale,
                **placed,
            )
        )
    dormant_after = timedelta(days=config.settings.dormant_after_days if config else 365.0)
    projects = _with_health(store, projects, states, audit.started_at, dormant_after)
    by_name = {p.name: p for p in projects}  # a riding item takes its host's facts, health too
    return ExportInput(
        audit.id, audit_day, tuple(_riding(p, by_name.get(p.part_of or "")) for p in projects)
    )


class _Placed(TypedDict):
    layer: str | None
    snapshot: bool
    part_of: str | None
    not_trackable: str | None
    homepage: str | None


def _placed(spec: ProjectSpec | None, outcome: ProjectOutcome | None) -> _Placed:
    """Where sources.yaml places an item and how it is followed; without sources.yaml, what
    the audit recorded (a riding item's note is its host's name, an untracked one's its
    reason)."""
    if spec is not None:
        reason = spec.not_trackable
        if reason is None and standing(spec) == "no source":
            reason = NO_SOURCE
        return _Placed(layer=spec.layer, snapshot=spec.snapshot, part_of=spec.part_of,
                       not_trackable=reason, homepage=spec.homepage)  # fmt: skip
    status = outcome.status if outcome else None
    note = outcome.note if outcome else None
    return _Placed(
        layer=None, snapshot=False, homepage=None,
        part_of=note if status == ProjectStatus.RIDING else None,
        not_trackable=(note or NO_SOURCE) if status == ProjectStatus.UNTRACKED else None,
    )  # fmt: skip


def _riding(item: ProjectInput, host: ProjectInput | None) -> ProjectInput:
    """A riding item with its host's release, license and repository facts as of the host's
    state (stale when the host is); its pages and records stay the host's."""
    if item.part_of is None or host is None:
        return item
    return replace(
        host, name=item.name, order=item.order, pages=(), layer=item.layer,
        snapshot=item.snapshot, part_of=item.part_of, not_trackable=None,
        homepage=item.homepage,
    )  # fmt: skip


def _with_health(
    store: Store,
    projects: list[ProjectInput],
    states: Mapping[str, ProjectSnapshot],
    when: datetime,
    dormant_after: timedelta,
) -> list[ProjectInput]:
    """Each project with its links as the link checks last saw them, and the maturity its
    upstream's health suggests (archived; superseded, when its description names a successor
    and says it stopped; dormant)."""
    from crawler.diff.health import dormancy, successor_of
    from crawler.store.links import link_histories

    urls = [link.url for project in projects for link in project.evidence]
    seen = link_histories(store, urls) if urls else {}
    done = []
    for project in projects:
        links = tuple(
            LinkStatus(
                h.url, h.outcome, h.moved_to, h.last_ok.date() if h.last_ok else None,
                h.last_checked.date() if h.last_checked else None,
            )
            for url in dict.fromkeys(link.url for link in project.evidence)
            if (h := seen.get(url)) is not None
        )  # fmt: skip
        snapshot = states.get(project.name)
        suggestion: MaturitySuggestion | None = None
        successor = successor_of(snapshot)
        if snapshot is not None and snapshot.repo is not None and snapshot.repo.archived:
            suggestion = "archived"
        elif successor is not None and successor.stopped:
            suggestion = "superseded"
        elif dormancy(snapshot, when, dormant_after) is not None:
            suggestion = "dormant"
        done.append(replace(project, links=links, maturity_suggestion=suggestion))
    return done


def describe(export: ExportInput) -> list[str]:
    """What the export took from where, for the terminal: the audit, the projects it read, and
    each project or page whose facts come from an earlier audit, with their own date."""
    read = sum(p.checked_in_audit and p.part_of is None for p in export.projects)
    riding = sum(p.part_of is not None for p in export.projects)
    closed = sum(p.not_trackable is not None for p in export.projects)
    lines = [
        f"exported audit #{export.audit_id} ({export.audit_date.isoformat()}): "
        f"{len(export.projects)} projects, {read} checked in that audit"
        + (f", {riding_count(riding)}" if riding else "")
        + (f", {closed} not trackable" if closed else "")
    ]
    stale = [p for p in export.projects if p.stale]
    if stale:
        shown = ", ".join(
            f"{one_line(p.name)} (facts of {p.last_checked.isoformat()})"
            for p in stale
            if p.last_checked is not None
        )
        lines.append(f"stale, kept from earlier audits: {shown}")
    unread = [
        one_line(p.name)
        for p in export.projects
        if p.last_checked is None and p.not_trackable is None
    ]
    if unread:
        lines.append(f"never read yet (no facts exported): {', '.join(unread)}")
    pages = [
        f"{one_line(p.name)} page {one_line(page.name)} (facts of {page.observed_on.isoformat()})"
        for p in export.projects
        if p.checked_in_audit
        for page in p.pages
        if page.stale
    ]
    if pages:
        lines.append(f"stale pages, kept from earlier audits: {', '.join(pages)}")
    return lines


def _history(store: Store, name: str, as_of: int) -> list[HistoryPoint]:
    """The versions a project published, as the stored states saw them, oldest first: its
    releases; its tags when it is followed by tag; its head commits when by commit."""
    from crawler.export.site import HistoryPoint

    points: dict[tuple[str, str], HistoryPoint] = {}
    for entry in store.history(name):
        snapshot = entry.snapshot
        if entry.audit_id > as_of or snapshot is None:
            continue
        source = current_version(name, snapshot, None).version_source
        for release in snapshot.releases or ():
            day = _day(release.published_at)
            if day and not release.draft:
                points[("release", release.tag)] = HistoryPoint(
                    day, "release", release.tag, is_prerelease(release)
                )
        if source == "tag":
            for tag in snapshot.tags or ():
                day = _day(tag.date)
                if day:
                    points[("tag", tag.name)] = HistoryPoint(day, "tag", tag.name)
        if source == "commit" and snapshot.head is not None:
            day = _day(snapshot.head.date)
            if day:
                sha = snapshot.head.sha[:7]
                points[("commit", sha)] = HistoryPoint(day, "commit", sha)
    return sorted(points.values(), key=lambda p: (p.date, p.name))


def previous_export(site: Path | None, audit: AuditInfo) -> int | None:
    """The audit the site in ``site`` last showed, when older than ``audit``; when it showed
    ``audit`` itself (exported again), what that export counted its changes from. None when
    there is no earlier site, or it cannot be read."""
    import json
    import re

    from crawler.export.site.render import DATA_FILE, INDEX_FILE, SINCE_ATTRIBUTE

    if site is None:
        return None
    try:
        shown = json.loads((site / DATA_FILE).read_text(encoding="utf-8"))["audit"]["id"]
        if not isinstance(shown, int) or shown > audit.id:
            return None
        if shown < audit.id:
            return shown
        found = re.search(
            rf'<body[^>]*\b{SINCE_ATTRIBUTE}="(\d+)"',
            (site / INDEX_FILE).read_text(encoding="utf-8"),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return int(found.group(1)) if found else None


def site_input(
    store: Store, audit: AuditInfo, export: ExportInput, catalog: dict[str, Any],
    config: Config | None, stale_after_days: int, site: Path | None = None,
) -> SiteInput:  # fmt: skip
    """What the Compatibility Explorer shows: the catalog, each project's release history and
    the changes since the previous export into ``site`` (a first export: the changes the
    exported audit found)."""
    from crawler.export.site import ChangesSince, SiteChange, SiteInput
    from crawler.findings import findings_between, source_names
    from crawler.report.words import change_summary

    names = source_names()
    exported = previous_export(site, audit)
    before = store.audit(exported) if exported else None
    if before is None:  # a first export, or its audit is gone (pruned, another database)
        exported = None
        base = audit.baseline_audit_id
        before = store.audit(base) if base else None
    findings = findings_between(store, config, before, audit)[0]
    since = (
        ChangesSince(before.id, before.started_at.date(), exported is not None)
        if before is not None
        else None
    )
    return SiteInput(
        catalog=catalog,
        checked_on=export.audit_date,
        history={p.name: _history(store, p.part_of or p.name, audit.id) for p in export.projects},
        changes=[
            SiteChange(c.project, c.kind.value, change_summary(c, names),
                       shown_url(c.evidence_url) if c.evidence_url else None)
            for c in findings.changes
        ],
        stale_after_days=stale_after_days,
        since=since,
        errors=[(e.project, e.url, e.message) for e in store.audit_results(audit.id)[1]],
    )


def export_audit(
    store: Store,
    config: Config | None,
    audit_id: int | None,
    out_dir: Path,
    *,
    into: Path | None = None,
    site: Path | None = None,
    labels: Mapping[str, str],
    follow_links_outside: bool = False,
) -> ExportOutcome:
    """Write the export of one audit; with ``into``, also merge its catalog into a curated file
    (the curated file is rewritten only when the merged result validates) and write the merge
    report beside the export. Every file is checked, then all are written as one set
    (crawler.export.file_set: none leads out of its folder through a link unless
    ``follow_links_outside``; a failure leaves every file as it was). ExportError, MergeError
    or NothingToExport when it cannot, ExportWriteError when a file cannot be written."""
    from crawler.export.catalog import build_catalog
    from crawler.export.file_set import OutputFile, write_set
    from crawler.export.merge import merge_file
    from crawler.export.validate import validate_catalog
    from crawler.export.writer import dump_json, export_output

    audit = chosen_audit(store, audit_id)
    export = export_input(store, audit, config, labels)
    files = export_output(export, out_dir)
    if site is not None:
        from crawler.export.site.render import site_output

        stale = config.settings.stale_after_days if config else 3.0
        explorer = site_input(
            store, audit, export, build_catalog(export), config, max(1, round(stale)), site
        )
        files += site_output(explorer, site)
    merge_report: dict[str, Any] | None = None
    merged: dict[str, Any] | None = None
    if into is not None:
        merged, merge_report = merge_file(into, build_catalog(export))
        problems = validate_catalog(merged, today=export.audit_date)
        if problems:
            raise MergeError(
                f"{into}: the merged catalog would not validate, so it was not written: "
                + "; ".join(str(p) for p in problems[:10])
            )
        files += [
            OutputFile(into, dump_json(merged).encode("utf-8"), None),  # the user named it
            OutputFile(out_dir / "merge-report.json", dump_json(merge_report).encode(), out_dir),
        ]
    written = write_set(files, follow_links_outside=follow_links_outside)
    taken: list[PendingItem] = []
    if merged is not None:
        from crawler.store.pending import close_taken

        taken = close_taken(store, merged, datetime.now(UTC).replace(microsecond=0))
    newer = tuple(a.id for a in store.audits() if a.id > audit.id and a.status == "failed")
    return ExportOutcome(export, tuple(written), merge_report, tuple(taken), newer)


@dataclass(frozen=True)
class ExportOutcome:
    export: ExportInput
    written: tuple[Path, ...]
    merge_report: dict[str, Any] | None
    taken: tuple[PendingItem, ...] = ()  # pending changes the merged catalog now holds
    failed_since: tuple[int, ...] = ()  # newer audits that failed (read nothing): not exported
