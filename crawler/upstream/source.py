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

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from crawler.config import Location, ProjectSpec, Settings
    from crawler.model import ProjectResult, ProjectSnapshot
    from crawler.upstream.http import ResponseCache
    from crawler.upstream.pages import PageFetcher

Role = Literal["forge", "channel"]


class NoSettings(BaseModel):
    """A source without a settings section of its own."""

    model_config = ConfigDict(extra="forbid", frozen=True)


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


class Source(Protocol):
    kind: SourceKind

    def fetch(
        self, projects: Sequence[ProjectSpec], prior: Mapping[str, ProjectSnapshot]
    ) -> dict[str, ProjectResult]:
        """One result per project: the facets this source owns, an error, or deferred."""
        ...

    def read_file(self, location: Location, path: str) -> RepoFile:
        """A file of a repository (forges only); SourceError or SourceDeferred on failure."""
        ...

    def usage(self) -> dict[str, Any]:
        """What the source spent this audit (requests, 304s, points…), for the report."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class SourceKind:
    name: str  # registry key and the name of its settings section in sources.yaml
    label: str  # how people call it in prose: "GitHub", "Gitee", "PyPI"
    role: Role  # a forge holds the repository; a channel publishes packages beside it
    project_key: str  # the key a project entry uses to name it: "repo", "gitee", "pypi"
    check_path: Callable[[str], str]  # validates the name given; ValueError says what is wrong
    open: Callable[[SourceContext], Source]
    option_keys: tuple[str, ...] = ()  # further per-project keys, e.g. "gitlab_url"
    # checks one option's value (key, value) → the value to keep; ValueError says what is wrong
    check_option: Callable[[str, str], str] = lambda _key, value: value
    settings: type[BaseModel] = NoSettings


@cache
def source_kinds() -> dict[str, SourceKind]:
    """Every source in crawler/upstream/sources/, by name."""
    from crawler.upstream import sources

    kinds: dict[str, SourceKind] = {}
    for info in pkgutil.iter_modules(sources.__path__):
        module = importlib.import_module(f"{sources.__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if isinstance(kind, SourceKind):
            kinds[kind.name] = kind
    return dict(sorted(kinds.items()))


def kind_for_key(project_key: str) -> SourceKind | None:
    return next((k for k in source_kinds().values() if k.project_key == project_key), None)
