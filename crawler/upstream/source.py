"""The contract every upstream source implements, and the registry that finds them.

A source is one module (or package) in ``crawler/upstream/sources/`` exposing ``KIND``, a
:class:`SourceKind`. It says how a project names it in ``sources.yaml`` (``repo:``, ``gitee:``,
``gitlab:``, ``pypi:``), how that name is checked, which settings section configures it, and
how to open a client. The config, the audit loop, the diff and the reports take everything
else from the facts a source returns; adding a forge or a release channel adds that module,
its fake and its tests, and touches nothing else.

Importing a source module must stay cheap: heavy clients are imported in ``open``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from crawler.config.kinds import KindInfo
from crawler.config.kinds import NoSettings as NoSettings  # re-exported: sources use them
from crawler.config.kinds import Role as Role
from crawler.config.kinds import source_kinds as config_kinds
from crawler.model import Usage

if TYPE_CHECKING:
    from crawler.config import Location, ProjectSpec, Settings
    from crawler.model import ProjectResult, ProjectSnapshot, RepoInfo
    from crawler.upstream.http import ResponseCache
    from crawler.upstream.pages import PageFetcher


class SourceError(Exception):
    """A request that failed for good; ``url`` is the evidence of the failure."""

    def __init__(self, message: str, url: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class SourceDeferred(SourceError):
    """Not attempted this audit (rate budget spent, deadline): neither an error nor a change."""


@dataclass(frozen=True)
class RepoFile:
    """A file read from a repository through its forge (a README with a support table)."""

    text: str
    url: str  # the file's web page: the evidence link
    content_type: str | None = None


@dataclass(frozen=True)
class SourceContext:
    """What a source is opened with. ``env`` holds tokens: a source never logs or stores it."""

    settings: Any  # the source's own sources.yaml section (its SourceKind.settings model)
    common: Settings
    env: Mapping[str, str]
    cache: ResponseCache
    web: PageFetcher  # the shared, SSRF-guarded HTTP client for plain web pages
    clock: Callable[[], str]
    sleep: Callable[[float], None]
    should_stop: Callable[[], bool] = lambda: False  # checked between projects: defer the rest
    # called by a source as each project's result is ready (from any worker thread)
    on_fetched: Callable[[ProjectResult], None] = lambda _result: None
    # whether a project's README.md is to be read tonight (its snapshot as the forge answered,
    # its last state): a source that can read it with the project's batch does
    # (``BatchedReadmes``); the audit's rule (crawler.gather.ReadmeReader.wanted)
    wants_readme: Callable[[ProjectSnapshot, ProjectSnapshot | None], bool] = (
        lambda _snapshot, _prior: False
    )


class Source(Protocol):
    kind: SourceKind

    def fetch(
        self, projects: Sequence[ProjectSpec], prior: Mapping[str, ProjectSnapshot]
    ) -> dict[str, ProjectResult]:
        """One result per project: the facets this source owns, an error, or deferred."""
        ...

    def read_file(self, location: Location, path: str, ref: str | None = None) -> RepoFile:
        """A file of a repository (forges only), on its default branch or at ``ref`` (a branch
        or tag; the evidence link names it); SourceError or SourceDeferred on failure."""
        ...

    def usage(self) -> Usage:
        """What the source spent this audit (requests, 304s, points…), for the report."""
        ...

    def close(self) -> None: ...


README = "README.md"  # the one name read for a successor (a forge's README endpoint is not)


@runtime_checkable
class BatchedReadmes(Protocol):
    """A source that reads the README.md of the projects that want one with their batch
    (``SourceContext.wants_readme``; GitHub's GraphQL), so that the audit does not ask
    ``read_file`` for each."""

    def batched_readme(self, project: str) -> RepoFile | None:
        """The project's README.md as its batch read it (taken: asked once), at the head the
        snapshot names; None when the batch did not read it (ask ``read_file``). Raises what
        ``read_file`` would: SourceError with status 404 when there is no README.md,
        SourceError or SourceDeferred when it could not be read."""
        ...


@dataclass(frozen=True)
class RepositoryAnswers:
    """What a forge's API said of repositories a link names (``owner/name`` as the link has it):
    the repository (renamed: under its new name; archived: marked), or None when the forge says
    there is none; ``failed``: the question got no usable answer (why, redacted); ``deferred``:
    not asked, the forge's budget is spent (a later night asks)."""

    found: Mapping[str, RepoInfo | None]
    failed: Mapping[str, str] = field(default_factory=dict)
    deferred: tuple[str, ...] = ()
    requests: int = 0  # requests it cost (a GraphQL batch answers many)


@runtime_checkable
class RepositoryLookup(Protocol):
    """A forge that answers for repository links (``crawler.link_audit``): batched where the
    forge allows, within its budget and pacing."""

    def look_up_repositories(self, paths: Sequence[str]) -> RepositoryAnswers: ...


def look_up_each(
    paths: Sequence[str],
    ask: Callable[[str], RepoInfo | None],
    redact: Callable[[str], str],
    spent: Callable[[], int],
) -> RepositoryAnswers:
    """``RepositoryAnswers`` for a forge asked one repository at a time (``ask``: the repository
    or None when there is none; SourceDeferred when the budget is spent, SourceError or a
    ShapeError when it could not tell); ``spent`` counts the client's requests so far."""
    from crawler.upstream.answers import ShapeError

    found: dict[str, RepoInfo | None] = {}
    failed: dict[str, str] = {}
    unique = list(dict.fromkeys(paths))
    before = spent()
    for index, path in enumerate(unique):
        try:
            found[path] = ask(path)
        except SourceDeferred:
            return RepositoryAnswers(found, failed, tuple(unique[index:]), spent() - before)
        except (SourceError, ShapeError) as exc:
            failed[path] = redact(str(exc))[:300]
    return RepositoryAnswers(found, failed, (), spent() - before)


@runtime_checkable
class ProjectSource(Protocol):
    """A simple source: one project at a time, raising on failure."""

    kind: SourceKind
    concurrency: int  # projects in flight at once

    def fetch_project(self, spec: ProjectSpec, prior: ProjectSnapshot | None) -> ProjectSnapshot:
        """The facets this source owns. SourceDeferred: not this audit; SourceError (with the
        evidence URL) or ShapeError: this project's error."""
        ...

    def project_url(self, spec: ProjectSpec) -> str:
        """Where an error without a URL of its own points."""
        ...

    def redact(self, text: str) -> str:
        """``text`` without this source's credentials."""
        ...

    def read_file(self, location: Location, path: str, ref: str | None = None) -> RepoFile: ...

    def usage(self) -> Usage: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class SourceKind(KindInfo):
    """A source kind as the configuration knows it, and how to open the source: a batch
    ``Source`` (GitHub), or a simple ``ProjectSource`` the audit runs in its per-project guard
    (``crawler.upstream.guard``)."""

    open: Callable[[SourceContext], Source | ProjectSource] = field(kw_only=True)
    # the credentials the environment gives this source, checked before an audit starts;
    # ConfigError, in one line naming the variable, when they cannot be used
    check_credentials: Callable[[Mapping[str, str]], None] = field(
        kw_only=True, default=lambda _env: None
    )
    # a forge: the host whose ``/owner/name`` pages are its repositories (from its settings and
    # the environment, as the source would be opened); None for a channel or a git server
    web_host: Callable[[Any, Mapping[str, str]], str | None] | None = field(
        default=None, kw_only=True
    )


def host_of(url: str) -> str | None:
    """The ``host[:port]`` of an http(s) URL, lower-cased, as a forge's ``web_host`` says it."""
    from urllib.parse import urlsplit

    netloc = urlsplit(url).netloc.rpartition("@")[2].lower()
    return netloc or None


@cache
def source_kinds() -> dict[str, SourceKind]:
    """Every source in crawler/upstream/sources/, by name."""
    return {n: k for n, k in config_kinds().items() if isinstance(k, SourceKind)}


def kind_for_key(project_key: str) -> SourceKind | None:
    return next((k for k in source_kinds().values() if k.project_key == project_key), None)
