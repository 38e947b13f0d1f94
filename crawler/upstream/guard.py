"""One guard around every project a source fetches, and the simple per-project contract.

Whatever a source meets for one project ends as that project's result: ``deferred`` (a stop
was requested, the rate budget is spent: neither an error nor a change), ``failed`` (an error
whose message is redacted, then capped at ``MAX_MESSAGE``), or its facts. The audit applies it
(``crawler.gather``): around each project of a simple source, and to every error any source
returns, GitHub's batch path included.

A simple source implements :class:`ProjectSource`: ``fetch_project(spec, prior)`` returns the
project's snapshot and raises on failure (``SourceDeferred``, ``SourceError``, ``ShapeError``);
:func:`per_project` turns it into a :class:`~crawler.upstream.source.Source` (a bounded pool,
the guard, the progress callback).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

from crawler.model import (
    FetchError,
    ProjectResult,
    ProjectSnapshot,
    ProjectStatus,
    Provenance,
    Usage,
)
from crawler.upstream.answers import ShapeError
from crawler.upstream.http import redact
from crawler.upstream.source import (
    ProjectSource,
    RepoFile,
    RepositoryLookup,
    Source,
    SourceDeferred,
    SourceError,
    SourceKind,
)

if TYPE_CHECKING:
    from crawler.config import Location, ProjectSpec
    from crawler.upstream.source import SourceContext

log = logging.getLogger(__name__)
MAX_MESSAGE = 500  # characters of one error message, after redaction


def capped(text: str, secrets: Iterable[str | None] = ()) -> str:
    """One error message: redacted first (a cut must not leave half a token), then capped."""
    text = redact(text, *secrets)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def deferred(project: str, why: str, role: str = "forge") -> ProjectResult:
    """Not checked this audit. A channel's note is the bare reason: the audit words it
    "<channel> not checked: <why>" beside the forge's facts."""
    note = why if role == "channel" else f"not checked this audit: {why}"
    return ProjectResult(project, ProjectStatus.DEFERRED, note=note)


def failed(
    project: str, source: str, url: str, message: str, secrets: Iterable[str | None] = ()
) -> ProjectResult:
    error = FetchError(project, source, url, capped(message, secrets))
    return ProjectResult(project, ProjectStatus.ERROR, errors=(error,))


def sealed(result: ProjectResult, secrets: Iterable[str | None]) -> ProjectResult:
    """A source's result with every error message redacted and capped, as ``failed`` does."""
    if not result.errors:
        return result
    secrets = tuple(secrets)
    errors = tuple(replace(e, message=capped(e.message, secrets)) for e in result.errors)
    return replace(result, errors=errors)


def carried(prior: ProjectSnapshot | None, facet: str) -> list[tuple[str, Provenance]]:
    """The provenance of a fact reused from the previous audit."""
    return [(name, src) for name, src in (prior.provenance if prior else ()) if name == facet]


def guarded(
    source: ProjectSource,
    spec: ProjectSpec,
    prior: ProjectSnapshot | None,
    *,
    should_stop: Callable[[], bool] = lambda: False,
) -> ProjectResult:
    """One project's result; nothing it raises reaches another project."""
    kind = source.kind
    if should_stop():
        return deferred(spec.name, "stop requested", kind.role)
    try:
        snapshot = source.fetch_project(spec, prior)
    except SourceDeferred as exc:
        return deferred(spec.name, source.redact(str(exc)), kind.role)
    except SourceError as exc:
        why = source.redact(str(exc))
        return failed(spec.name, kind.name, exc.url or source.project_url(spec), why)
    except (ShapeError, KeyError, TypeError, ValueError) as exc:
        why = source.redact(f"unexpected answer from {kind.label}: {exc}")
        return failed(spec.name, kind.name, source.project_url(spec), why)
    except Exception as exc:  # a defect here must stay this project's error
        log.warning("%s project %s failed", kind.label, spec.name, exc_info=True)
        why = source.redact(f"internal error: {type(exc).__name__}: {exc}")
        return failed(spec.name, kind.name, source.project_url(spec), why)
    return ProjectResult(spec.name, ProjectStatus.OK, snapshot=snapshot)


class PerProject:
    """A :class:`ProjectSource` as a :class:`Source`: its projects through a bounded pool,
    each in the guard, each reported as it is ready."""

    def __init__(
        self,
        source: ProjectSource,
        *,
        should_stop: Callable[[], bool] = lambda: False,
        on_fetched: Callable[[ProjectResult], None] = lambda _result: None,
    ) -> None:
        self.source = source
        self.kind = source.kind
        self._should_stop = should_stop
        self._on_fetched = on_fetched

    def fetch(
        self, projects: Sequence[ProjectSpec], prior: Mapping[str, ProjectSnapshot]
    ) -> dict[str, ProjectResult]:
        unique = list({spec.name: spec for spec in projects}.values())
        workers = max(1, min(self.source.concurrency, len(unique)))

        def one(spec: ProjectSpec) -> ProjectResult:
            result = guarded(self.source, spec, prior.get(spec.name), should_stop=self._should_stop)
            self._on_fetched(result)
            return result

        with ThreadPoolExecutor(workers, thread_name_prefix=self.kind.name) as pool:
            results = list(pool.map(one, unique))
        return {result.project: result for result in results}

    def read_file(self, location: Location, path: str, ref: str | None = None) -> RepoFile:
        return self.source.read_file(location, path, ref)

    def usage(self) -> Usage:
        return self.source.usage()

    def close(self) -> None:
        self.source.close()


def repository_lookup(source: Source) -> RepositoryLookup | None:
    """The source as a forge that answers for repository links, if it is one."""
    inner = source.source if isinstance(source, PerProject) else source
    return inner if isinstance(inner, RepositoryLookup) else None


def open_source(kind: SourceKind, context: SourceContext) -> Source:
    """The source ``kind`` opens; a simple one in the guard."""
    opened = kind.open(context)
    if isinstance(opened, ProjectSource):
        return PerProject(opened, should_stop=context.should_stop, on_fetched=context.on_fetched)
    return opened
