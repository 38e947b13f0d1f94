"""The fetch stage of an audit: every source's facts for every project, the license texts
analysed, the watched pages read. I/O at the edges, one result per project.

Nothing that goes wrong for one project (or one page, or one source) may end the audit: an
unexpected exception becomes an error for the projects it touched, whose last good state is
then kept, and the others carry on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING

from crawler.analysis.successor import readme_top
from crawler.config import DEFAULT_PIN_TEXT_LIMIT, Config, Location, PageSpec, ProjectSpec
from crawler.diff.health import wants_readme
from crawler.model import (
    FetchError,
    LicenseAnalysis,
    LicenseFile,
    PageSnapshot,
    ProjectResult,
    ProjectSnapshot,
    ProjectStatus,
    Provenance,
    ReadmeTop,
    Usage,
)
from crawler.report.words import no_source_note
from crawler.upstream.guard import capped, failed, open_source, sealed
from crawler.upstream.http import ResponseCache
from crawler.upstream.pages import PageFetcher, PageFetchError
from crawler.upstream.source import (
    README,
    BatchedReadmes,
    RepoFile,
    Source,
    SourceContext,
    SourceDeferred,
    SourceError,
    source_kinds,
)
from crawler.versions import instant

if TYPE_CHECKING:
    from crawler.analysis.license_keys import CopyrightKeyedReadings
    from crawler.progress import AuditProgress

log = logging.getLogger(__name__)
Clock = Callable[[], str]


def _message(exc: BaseException, secrets: Iterable[str | None]) -> str:
    """An exception as one redacted, capped line (crawler.upstream.guard)."""
    return capped(f"{exc}" or type(exc).__name__, secrets)


@dataclass
class OpenSources:
    """The sources an audit uses, opened once and closed at the end."""

    by_name: dict[str, Source]

    def close(self) -> None:
        for source in self.by_name.values():
            try:
                source.close()
            except Exception:  # closing must not hide the audit's outcome
                log.warning("closing source %s failed", source.kind.name, exc_info=True)

    def usage(self) -> dict[str, Usage]:
        return {name: source.usage() for name, source in self.by_name.items()}


def _count(value: int | float | str | bool | None) -> int:
    return int(value) if isinstance(value, int | float) else 0


def used_sources(specs: Sequence[ProjectSpec]) -> list[str]:
    names = {loc.source for spec in specs for loc in spec.locations()}
    names |= {p.location.source for spec in specs for p in spec.pages if p.location is not None}
    return sorted(names)


def check_credentials(specs: Sequence[ProjectSpec], env: Mapping[str, str]) -> None:
    """Each source the audit uses checks the credentials it is given (ConfigError): a broken
    key stops the audit before it begins, not as an error of every project, every night."""
    kinds = source_kinds()
    for name in used_sources(specs):
        kinds[name].check_credentials(env)


def open_sources(
    config: Config,
    specs: Sequence[ProjectSpec],
    *,
    env: Mapping[str, str],
    cache: ResponseCache,
    web: PageFetcher,
    clock: Clock,
    sleep: Callable[[float], None],
    should_stop: Callable[[], bool] = lambda: False,
    on_fetched: Callable[[ProjectResult], None] = lambda _result: None,
    wants_readme: Callable[[ProjectSnapshot, ProjectSnapshot | None], bool] = (
        lambda _snapshot, _prior: False
    ),
) -> OpenSources:
    kinds = source_kinds()
    opened: dict[str, Source] = {}
    for name in used_sources(specs):
        context = SourceContext(
            settings=config.source_settings(name),
            common=config.settings,
            env=env,
            cache=cache,
            web=web,
            clock=clock,
            sleep=sleep,
            should_stop=should_stop,
            on_fetched=on_fetched,
            wants_readme=wants_readme,
        )
        opened[name] = open_source(kinds[name], context)
    return OpenSources(opened)


class Gatherer:
    """Runs the fetch stage for one audit, a batch at a time, and reports each project once
    it is final. Its steps: the forges (``fetch_forges``), then the release channels
    (``add_channels``), then each project completed (license analyses, pages: ``PageReader``)."""

    def __init__(
        self,
        web: PageFetcher,
        clock: Clock,
        *,
        secrets: Iterable[str | None] = (),
        should_stop: Callable[[], bool] = lambda: False,
        pin_text_limit: int = DEFAULT_PIN_TEXT_LIMIT,
        project_deadline: float | None = None,
        progress: AuditProgress | None = None,
        analyse: Callable[[str, str, Sequence[str]], LicenseAnalysis] | None = None,
        dormant_after_days: float = 365.0,
    ) -> None:
        self.clock = clock
        self.secrets = tuple(secrets)
        self.should_stop = should_stop
        self.pages = PageReader(web, clock, self.secrets, pin_text_limit, project_deadline)
        self.readmes = ReadmeReader(clock, self.secrets, dormant_after_days)
        self.completer = Completer(self.pages, self.secrets, self.readmes)
        self._analyse = analyse or _analyse_license
        self.sources = OpenSources({})
        self._specs: dict[str, ProjectSpec] = {}
        self._prior: Mapping[str, ProjectSnapshot] = {}
        self._analyses = LicenseAnalyses((), self._analyse)
        self._final: dict[str, ProjectResult] = {}  # projects completed as their source ended
        self._lock = threading.Lock()
        self._progress = ProgressCount(progress, self._lock)

    def gather(
        self,
        sources: OpenSources,
        specs: Sequence[ProjectSpec],
        prior: Mapping[str, ProjectSnapshot],
    ) -> dict[str, ProjectResult]:
        """Fetch ``specs`` (one batch of the audit: called once per batch, with the prior
        states of that batch) and complete each project."""
        self.sources = self.pages.sources = self.readmes.sources = sources
        self._specs = {spec.name: spec for spec in specs}
        self._prior = prior
        self._analyses.remember(prior.values())
        self._final = {}
        results = fetch_forges(sources, specs, prior, self.secrets)
        add_channels(sources, specs, prior, results, self.secrets)
        for spec in specs:
            final = self._final.get(spec.name)
            if final is not None:
                results[spec.name] = final
                continue
            result = self._finish(spec, results[spec.name], prior)
            results[spec.name] = result
            self._progress.done(result, sources)
        self._final, self._prior, self._specs = {}, {}, {}
        return results

    def _finish(
        self, spec: ProjectSpec, result: ProjectResult, prior: Mapping[str, ProjectSnapshot]
    ) -> ProjectResult:
        """A project its sources read, completed; when a stop is asked, its pages are left
        for the next audit (their last extraction kept)."""
        if result.status != ProjectStatus.OK or result.snapshot is None:
            return result
        if spec.pages and self.should_stop():  # its pages are left for the next audit
            note = "; ".join(n for n in (result.note, "pages not read: stop requested") if n)
            snapshot = self._analyses.apply(result.snapshot)
            snapshot = _keep_pages(snapshot, prior.get(spec.name))
            return replace(result, snapshot=snapshot, note=note)
        return self.completer.complete(spec, result, prior, self._analyses)

    def wants_readme(self, snapshot: ProjectSnapshot, prior: ProjectSnapshot | None) -> bool:
        """What the sources are told of the README rule (``ReadmeReader.wanted``), so that
        one that can read the READMEs with its batch reads just those."""
        return self.readmes.wanted(snapshot, prior)

    def on_fetched(self, result: ProjectResult) -> None:
        """A source finished one project (called from its worker threads). A project that
        needs nothing more (no channel, no page) is completed and reported at once, so the
        progress display moves while the source is still working on the others."""
        spec = self._specs.get(result.project)
        if spec is None or spec.channels or spec.pages:
            return
        result = sealed(result, self.secrets)
        if result.status == ProjectStatus.OK and result.snapshot is not None:
            result = self.completer.complete(spec, result, self._prior, self._analyses)
        with self._lock:
            self._final[result.project] = result
        self._progress.done(result, self.sources)


class Completer:
    """A project its sources read, completed: its license texts analysed (once per text) and
    its pages read; a surprise in one project is that project's error, never the audit's."""

    def __init__(
        self,
        pages: PageReader,
        secrets: Sequence[str | None],
        readmes: ReadmeReader | None = None,
    ) -> None:
        self.pages = pages
        self.secrets = secrets
        self.readmes = readmes

    def complete(
        self,
        spec: ProjectSpec,
        result: ProjectResult,
        prior: Mapping[str, ProjectSnapshot],
        analyses: LicenseAnalyses,
    ) -> ProjectResult:
        try:
            return self._complete(spec, result, prior.get(spec.name), analyses)
        except Exception as exc:  # never let one project's surprise end the audit
            log.warning("project %s failed", spec.name, exc_info=True)
            error = FetchError(
                spec.name, "crawler", "", f"internal error: {_message(exc, self.secrets)}"
            )
            return ProjectResult(
                spec.name, ProjectStatus.ERROR, errors=(*result.errors, error), note=result.note
            )

    def _complete(
        self,
        spec: ProjectSpec,
        result: ProjectResult,
        prior: ProjectSnapshot | None,
        analyses: LicenseAnalyses,
    ) -> ProjectResult:
        assert result.snapshot is not None
        snapshot = analyses.apply(result.snapshot)
        errors: list[FetchError] = []
        notes: list[str] = []
        read = len(snapshot.provenance)  # facets fetched tonight so far (a channel's)
        if self.readmes is not None:
            snapshot = self.readmes.read(spec, snapshot, prior)
        if spec.pages:
            snapshot, errors, notes = self.pages.read(spec, snapshot, prior)
            read += sum(error.source.startswith("page:") for error in errors) < len(spec.pages)
        note = "; ".join(n for n in (result.note, *notes) if n) or None
        errors = [*result.errors, *errors]
        if spec.forge is None and errors and not read:
            # no forge, and no channel or page could be read: nothing was learnt, so the project
            # is an error (its last good state kept), not a project read with nothing in it
            return replace(
                result, status=ProjectStatus.ERROR, snapshot=None, errors=tuple(errors), note=note
            )
        return replace(result, snapshot=snapshot, errors=tuple(errors), note=note)


class ProgressCount:
    """Tells the progress display each project done, with the requests spent since the last
    one and the smallest rate budget left (``lock``: the sources' worker threads report too)."""

    def __init__(self, progress: AuditProgress | None, lock: threading.Lock) -> None:
        self.progress = progress
        self._lock = lock
        self._requests_seen = 0

    def done(self, result: ProjectResult, sources: OpenSources) -> None:
        if self.progress is None:
            return
        usage = sources.usage()
        spent = sum(_count(u.get("requests")) for u in usage.values())
        left = [u.get("rate_remaining") for u in usage.values()]
        budgets = [_count(n) for n in left if n]
        with self._lock:
            requests, self._requests_seen = spent - self._requests_seen, spent
            self.progress.project_done(
                result.project,
                result.status.value,
                requests,
                min(budgets) if budgets else None,
            )


# -- the sources -------------------------------------------------------------------------------


def fetch_forges(
    sources: OpenSources,
    specs: Sequence[ProjectSpec],
    prior: Mapping[str, ProjectSnapshot],
    secrets: Sequence[str | None],
) -> dict[str, ProjectResult]:
    """Each project from its forge, a source at a time; a project with no forge is read
    with nothing yet (its channels and pages follow), or untracked (with its reason)."""
    results: dict[str, ProjectResult] = {}
    groups: dict[str, list[ProjectSpec]] = defaultdict(list)
    for spec in specs:
        if spec.forge is not None:
            groups[spec.forge.source].append(spec)
        elif spec.channels or spec.pages:
            note = None if spec.channels else "no repository to fetch; its pages are watched"
            snapshot = ProjectSnapshot(project=spec.name, tracking=spec.tracking)
            results[spec.name] = ProjectResult(spec.name, ProjectStatus.OK, snapshot, note=note)
        else:  # not trackable: its reason is its note (a riding item never comes here)
            note = spec.not_trackable or no_source_note(spec.homepage)
            results[spec.name] = ProjectResult(spec.name, ProjectStatus.UNTRACKED, note=note)
    for name, group in groups.items():
        source = sources.by_name[name]
        results.update(fetch_group(source, group, prior, secrets))
    return results


def fetch_group(
    source: Source,
    group: list[ProjectSpec],
    prior: Mapping[str, ProjectSnapshot],
    secrets: Sequence[str | None],
) -> dict[str, ProjectResult]:
    """One source's projects: a source that fails, or forgets a project, fails those
    projects only; every error redacted of every secret, one cap."""
    try:
        fetched = source.fetch(group, prior)
    except Exception as exc:  # a defect or surprise in one source: its projects only
        log.warning("source %s failed", source.kind.name, exc_info=True)
        why = f"{source.kind.label} source failed unexpectedly: {exc}"
        fetched = {spec.name: failed(spec.name, source.kind.name, "", why) for spec in group}
    for spec in group:  # a source that forgot a project must not lose it
        if spec.name not in fetched:
            why = f"{source.kind.label} returned nothing for this project"
            fetched[spec.name] = failed(spec.name, source.kind.name, "", why)
    # every source's errors read alike: redacted of every secret, one cap
    return {spec.name: sealed(fetched[spec.name], secrets) for spec in group}


def add_channels(
    sources: OpenSources,
    specs: Sequence[ProjectSpec],
    prior: Mapping[str, ProjectSnapshot],
    results: dict[str, ProjectResult],
    secrets: Sequence[str | None],
) -> None:
    """Release channels add their facet to a project the forge checked; a channel that
    fails keeps its last good facet and adds an error, the rest of the project stands."""
    groups: dict[str, list[ProjectSpec]] = defaultdict(list)
    for spec in specs:
        if results[spec.name].status != ProjectStatus.OK:
            continue
        for channel in spec.channels:
            groups[channel.source].append(spec)
    for name, group in groups.items():
        source = sources.by_name[name]
        fetched = fetch_group(source, group, prior, secrets)
        for spec in group:
            results[spec.name] = _merge_channel(
                results[spec.name], fetched[spec.name], prior.get(spec.name), name
            )


# -- the README's top, for a successor -------------------------------------------------------


class ReadmeReader:
    """The top of README.md, read for an archived or dormant repository whose description
    names no successor (crawler.diff.health.wants_readme): with the project's batch where its
    source reads them so (``BatchedReadmes``: GitHub's GraphQL, many READMEs a query), else one
    request through the forge's own client, conditional where it keeps validators; and none
    while the default branch's head is the commit the last reading was made at (a README
    changes only with a commit, so an unchanged night asks nothing). A README that could not be
    read (an error, a spent budget) keeps the last one read: a failure never takes a successor
    back; a 404 (no README.md) is an answer."""

    def __init__(
        self, clock: Clock, secrets: Sequence[str | None], dormant_after_days: float
    ) -> None:
        self.clock = clock
        self.secrets = secrets
        self.dormant_after = timedelta(days=dormant_after_days)  # settings.dormant_after_days
        self.sources = OpenSources({})  # the audit's: the README is read through them

    def wanted(self, snapshot: ProjectSnapshot, prior: ProjectSnapshot | None) -> bool:
        """Whether the README is to be read tonight (a request): the repository is archived or
        dormant, its description names no successor, and the last reading may be out of date."""
        now = instant(self.clock())
        if now is None or not wants_readme(snapshot, now, self.dormant_after):
            return False
        return _kept_reading(snapshot, prior) is None

    def read(
        self, spec: ProjectSpec, snapshot: ProjectSnapshot, prior: ProjectSnapshot | None
    ) -> ProjectSnapshot:
        now = instant(self.clock())
        source = self.sources.by_name.get(spec.forge.source) if spec.forge else None
        if spec.forge is None or source is None or now is None:
            return snapshot
        if not wants_readme(snapshot, now, self.dormant_after):
            return snapshot
        kept = _kept_reading(snapshot, prior)
        if kept is not None:
            return replace(snapshot, readme=kept)  # no request
        kept = prior.readme if prior is not None else None
        head = snapshot.head.sha if snapshot.head is not None else ""
        try:
            # read with the batch (no request of its own), else through the forge's client
            file = _batched(source, spec.name) or source.read_file(spec.forge, README)
        except (SourceError, PageFetchError) as exc:
            if getattr(exc, "status", None) == 404:
                return replace(snapshot, readme=ReadmeTop("", "", head))  # no README.md
            log.info("README of %s not read: %s", spec.name, _message(exc, self.secrets))
            return replace(snapshot, readme=kept)
        except Exception:  # the README is a hint: never the project's error
            log.warning("README of %s not read", spec.name, exc_info=True)
            return replace(snapshot, readme=kept)
        return replace(snapshot, readme=ReadmeTop(readme_top(file.text), file.url, head))


def _batched(source: Source, project: str) -> RepoFile | None:
    return source.batched_readme(project) if isinstance(source, BatchedReadmes) else None


def _kept_reading(snapshot: ProjectSnapshot, prior: ProjectSnapshot | None) -> ReadmeTop | None:
    """The last reading, when it still holds (``_readme_unchanged``); None: read again."""
    kept = prior.readme if prior is not None else None
    head = snapshot.head.sha if snapshot.head is not None else ""
    return kept if kept is not None and _readme_unchanged(kept, head, snapshot, prior) else None


def _readme_unchanged(
    kept: ReadmeTop, head: str, snapshot: ProjectSnapshot, prior: ProjectSnapshot | None
) -> bool:
    """No commit since the README was read (its head is tonight's), or the repository was
    archived then and is still (an archived repository is read-only)."""
    if head and kept.commit == head:
        return True
    before = prior.repo if prior is not None else None
    now = snapshot.repo
    return bool(now and now.archived and before and before.archived)


# -- pages -------------------------------------------------------------------------------------


class PageReader:
    """A project's watched pages read (a URL through the page fetcher, a repository file
    through its source), within the project's deadline; a page that fails keeps its last
    good extraction."""

    def __init__(
        self,
        web: PageFetcher,
        clock: Clock,
        secrets: Sequence[str | None],
        pin_text_limit: int = DEFAULT_PIN_TEXT_LIMIT,
        project_deadline: float | None = None,
    ) -> None:
        self.web = web
        self.clock = clock
        self.secrets = secrets
        self.pin_text_limit = pin_text_limit
        self.project_deadline = project_deadline  # seconds for all the pages of one project
        self.sources = OpenSources({})  # the audit's: a repository file is read through them

    def read(
        self, spec: ProjectSpec, snapshot: ProjectSnapshot, prior: ProjectSnapshot | None
    ) -> tuple[ProjectSnapshot, list[FetchError], list[str]]:
        """The snapshot with its pages, the page errors, and notes on pages not checked.
        A page that fails keeps its last good extraction."""
        pages: list[PageSnapshot] = []
        errors: list[FetchError] = []
        notes: list[str] = []
        provenance = list(snapshot.provenance)
        earlier = {p.name: p for p in (prior.pages if prior else ())}
        started = time.monotonic()
        for page in spec.pages:
            limit = self.project_deadline
            if limit is not None and time.monotonic() - started > limit:
                message = (
                    f"not read: the project's pages took longer than its {limit:g}s deadline "
                    "(settings.project_deadline)"
                )
                errors.append(self._error(spec, page, message))
                if page.name in earlier:
                    pages.append(earlier[page.name])
                    provenance += _page_provenance(prior, page.name)
                continue
            try:
                body, content_type, url = self._body(spec, page)
                last = earlier.get(page.name)
                pages.append(
                    _extract_page(page, body, content_type, url, self.pin_text_limit, last)
                )
                provenance.append((f"page:{page.name}", Provenance(url, self.clock())))
                continue
            except SourceDeferred:  # not checked tonight: keep the last extraction, no error
                notes.append(f"page '{page.name}' not checked: rate budget spent")
            except (PageFetchError, SourceError, ValueError) as exc:
                message = _message(exc, self.secrets)
                errors.append(self._error(spec, page, message))
            except Exception as exc:  # anything else from one page is that page's error
                log.warning("page %s of %s failed", page.name, spec.name, exc_info=True)
                message = f"internal error: {_message(exc, self.secrets)}"
                errors.append(self._error(spec, page, message))
            if page.name in earlier:
                pages.append(earlier[page.name])  # carry the last good extraction forward
                provenance += _page_provenance(prior, page.name)  # ...with the day it was read
        return replace(snapshot, pages=tuple(pages), provenance=tuple(provenance)), errors, notes

    def _error(self, spec: ProjectSpec, page: PageSpec, message: str) -> FetchError:
        """The page's error, naming it by its URL as shown (never its credentials), or
        repo:path."""
        where = self.web.shown(page.url) if page.url is not None else page.where
        return FetchError(spec.name, f"page:{page.name}", where, message)

    def _body(self, spec: ProjectSpec, page: PageSpec) -> tuple[str, str | None, str]:
        if page.url is not None:
            fetched = self.web.fetch(page.url)
            return fetched.body, fetched.content_type, fetched.url
        location: Location | None = page.location or spec.forge
        assert location is not None and page.path is not None  # checked by the config
        source = self.sources.by_name[location.source]
        file: RepoFile = source.read_file(location, page.path, page.ref)
        return file.text, file.content_type, file.url


def _keep_pages(snapshot: ProjectSnapshot, prior: ProjectSnapshot | None) -> ProjectSnapshot:
    return replace(snapshot, pages=prior.pages if prior else ())


def _merge_channel(
    result: ProjectResult, channel: ProjectResult, prior: ProjectSnapshot | None, registry: str
) -> ProjectResult:
    assert result.snapshot is not None
    snapshot = result.snapshot
    mine = [p for p in snapshot.packages if p.registry != registry]
    if channel.status == ProjectStatus.OK and channel.snapshot is not None:
        packages = (*mine, *channel.snapshot.packages)
        provenance = (*snapshot.provenance, *channel.snapshot.provenance)
        snapshot = replace(snapshot, packages=packages, provenance=provenance)
        return replace(result, snapshot=snapshot, errors=(*result.errors, *channel.errors))
    kept = tuple(p for p in (prior.packages if prior else ()) if p.registry == registry)
    snapshot = replace(snapshot, packages=(*mine, *kept))
    note = result.note
    if channel.status == ProjectStatus.DEFERRED:
        note = "; ".join(n for n in (note, f"{registry} not checked: {channel.note}") if n)
    return replace(result, snapshot=snapshot, errors=(*result.errors, *channel.errors), note=note)


_KNOWN_ANALYSES = 4096  # distinct license files an audit analysed, kept between its batches


class LicenseAnalyses:
    """Each distinct license text is analysed once, in this audit and across audits, and a
    text that differs from one already analysed only in its copyright lines is not analysed
    again.

    Git names a blob by its content, so the blob SHA is the key: a thousand repositories with
    thirty distinct license texts cost thirty analyses, and a text analysed last night is not
    analysed again. Texts that differ only in their holders and years (every repository's own
    copyright line above the same MIT terms) share one reading, each with its own holders
    (``crawler.analysis.license_keys``). An analysis records the engine version it came from;
    a newer engine analyses again."""

    def __init__(
        self,
        prior: Iterable[ProjectSnapshot],
        analyse: Callable[[str, str, Sequence[str]], LicenseAnalysis],
    ) -> None:
        self._analyse = analyse
        # the analyses this audit performed, kept across its batches (up to a bound)
        self._known: dict[tuple[str, str, tuple[str, ...]], LicenseAnalysis] = {}
        # made at the first text to read: crawler.analysis.license_keys imports the license
        # engine (its patterns, license-expression), which a night reading no text never needs
        self._keyed: CopyrightKeyedReadings | None = None
        # the analyses stored with the prior states of the batch being gathered, for it only
        self._prior: dict[tuple[str, str, tuple[str, ...]], LicenseAnalysis] = {}
        self._lock = threading.Lock()  # sources may complete projects from their workers
        self.performed = 0
        self.remember(prior)

    def remember(self, prior: Iterable[ProjectSnapshot]) -> None:
        """Take the analyses of a batch's prior states, for that batch: each project's license
        file, most often unchanged, is not analysed again. The batch before's are let go (kept
        for the whole audit, they grew with the catalog: with a license text of its own per
        repository, 4,096 analyses, about 4 MB, at 10,000 projects); a text another batch
        analysed tonight is kept across batches, up to a bound."""
        if len(self._known) > _KNOWN_ANALYSES:
            self._known.clear()
        if self._keyed is not None:
            from crawler.analysis.license_keys import KEYED_READINGS

            if len(self._keyed) > KEYED_READINGS:
                self._keyed.clear()
        stored = {}
        for snapshot in prior:
            lf = snapshot.license_file
            if lf is not None and lf.analysis is not None and _current_engine(lf.analysis):
                stored[(lf.blob_sha, lf.path, _siblings(snapshot))] = lf.analysis
        with self._lock:
            self._prior = stored

    @property
    def held(self) -> int:
        """The analyses it holds: the batch's prior states', and those performed."""
        return len(self._prior) + len(self._known)

    def apply(self, snapshot: ProjectSnapshot) -> ProjectSnapshot:
        current: LicenseFile | None = snapshot.license_file
        if current is None or current.analysis is not None:
            return snapshot
        key = (current.blob_sha, current.path, _siblings(snapshot))
        with self._lock:
            analysis = self._prior.get(key) or self._known.get(key)
        if analysis is None:
            from crawler.analysis.license_keys import CopyrightKeyedReadings, split_copyright

            text = current.text or ""
            split = split_copyright(text)
            if split is not None:
                with self._lock:
                    if self._keyed is None:
                        self._keyed = CopyrightKeyedReadings()
                    analysis = self._keyed.take(split, current.path, key[2])
            if analysis is None:
                analysis = self._analyse(text, current.path, key[2])
                with self._lock:
                    self._known[key] = analysis
                    self.performed += 1
                    if split is not None and self._keyed is not None:
                        self._keyed.keep(split, current.path, key[2], analysis)
        return replace(snapshot, license_file=replace(current, analysis=analysis))


def _siblings(snapshot: ProjectSnapshot) -> tuple[str, ...]:
    return tuple(sorted(e.path for e in snapshot.license_inventory or () if "/" not in e.path))


def _current_engine(analysis: LicenseAnalysis) -> bool:
    from crawler.analysis import ENGINE_VERSION  # not the engine itself: no text read yet

    return analysis.engine == ENGINE_VERSION


def _analyse_license(text: str, path: str, siblings: Sequence[str]) -> LicenseAnalysis:
    from crawler.analysis.licenses import ENGINE_VERSION, analyze_license

    return replace(analyze_license(text, path, list(siblings)), engine=ENGINE_VERSION)


def _extract_page(
    page: PageSpec,
    body: str,
    content_type: str | None,
    url: str,
    pin_text_limit: int,
    earlier: PageSnapshot | None = None,
) -> PageSnapshot:
    from crawler.analysis.pages import read_page

    return read_page(page, body, content_type, url, pin_text_limit=pin_text_limit, earlier=earlier)


def _page_provenance(prior: ProjectSnapshot | None, name: str) -> list[tuple[str, Provenance]]:
    """Where and when a page carried forward was last read: its facts keep their own date."""
    facet = f"page:{name}"
    return [(f, where) for f, where in (prior.provenance if prior else ()) if f == facet]
