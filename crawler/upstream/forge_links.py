"""Repository links asked of the forges' APIs (``crawler.link_audit``): which hosts are forges
(``SourceKind.web_host``: github.com, or GitHub Enterprise's host; gitee.com; the GitLab and
Gitea instances configured), and a forge's answer for the repositories links name.

The audit hands in the sources it opened for its projects, so a lookup spends the same budget,
pacing and connections; a forge no project of tonight uses is opened on first use, and closed
with :meth:`ForgeLinks.close`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from crawler.analysis.links import forge_repository
from crawler.config import Config, Settings
from crawler.model import Usage
from crawler.upstream.guard import open_source, repository_lookup
from crawler.upstream.http import MemoryCache, ResponseCache
from crawler.upstream.source import (
    RepositoryAnswers,
    Source,
    SourceContext,
    SourceKind,
    source_kinds,
)

if TYPE_CHECKING:
    from crawler.upstream.pages import PageFetcher

log = logging.getLogger(__name__)


def forge_hosts(config: Config | None, env: Mapping[str, str]) -> dict[str, str]:
    """``host[:port]`` → forge name, for every forge kind, as it would be opened."""
    hosts: dict[str, str] = {}
    for name, kind in source_kinds().items():
        if kind.web_host is None:
            continue
        settings = config.source_settings(name) if config is not None else kind.settings()
        host = kind.web_host(settings, env)
        if host:
            hosts.setdefault(host, name)
    return hosts


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ForgeLinks:
    """The forges' APIs for repository links: ``repository(url)`` says whether a link is a
    repository page and of which forge, ``look_up`` asks that forge."""

    def __init__(
        self,
        config: Config | None,
        env: Mapping[str, str],
        *,
        opened: Mapping[str, Source] | None = None,
        cache: ResponseCache | None = None,
        web: PageFetcher | None = None,
        sleep: Callable[[float], None] = time.sleep,
        common: Settings | None = None,
    ) -> None:
        self._config = config
        # the settings every source shares (timeouts, private networks): sources.yaml's unless
        # given (``crawler links --allow-private``)
        self._common = common or (config.settings if config is not None else Settings())
        self._env = env
        self._opened = dict(opened or {})  # the audit's own: never closed here
        self._own: dict[str, Source] = {}
        self._cache = cache or MemoryCache()
        self._web = web
        self._own_web: PageFetcher | None = None  # made here (no audit's at hand): closed here
        self._sleep = sleep
        self.hosts = forge_hosts(config, env)

    def repository(self, url: str) -> tuple[str, str] | None:
        """(forge, owner/name) when ``url`` is a repository's page on a forge, else None."""
        return forge_repository(url, self.hosts)

    def look_up(self, forge: str, paths: Sequence[str]) -> RepositoryAnswers:
        """What ``forge`` says of each repository; a forge that cannot be asked (it failed to
        open, or a defect) fails each of them with the reason."""
        try:
            source = self._source(forge)
            lookup = repository_lookup(source) if source is not None else None
            if lookup is None:
                why = f"{forge} answers no repository lookups"
                return RepositoryAnswers({}, dict.fromkeys(paths, why))
            return lookup.look_up_repositories(paths)
        except Exception as exc:  # one forge's defect fails only its links
            log.warning("repository lookups on %s failed", forge, exc_info=True)
            why = f"the {forge} lookup failed: {type(exc).__name__}"
            return RepositoryAnswers({}, dict.fromkeys(paths, why))

    def _source(self, forge: str) -> Source | None:
        if forge in self._opened:
            return self._opened[forge]
        if forge not in self._own:
            kind: SourceKind | None = source_kinds().get(forge)
            if kind is None:
                return None
            self._own[forge] = open_source(kind, self._context(forge))
        return self._own[forge]

    def _context(self, forge: str) -> SourceContext:
        from crawler.upstream.pages import PageFetcher

        config = self._config
        common = self._common
        if self._web is None:
            self._web = self._own_web = PageFetcher(common, self._cache)
        settings = (
            config.source_settings(forge) if config is not None
            else source_kinds()[forge].settings()
        )  # fmt: skip
        return SourceContext(
            settings=settings, common=common, env=self._env, cache=self._cache,
            web=self._web, clock=_now, sleep=self._sleep,
        )  # fmt: skip

    def usage(self) -> dict[str, Usage]:
        """What the forges opened for the links alone spent (the audit's report it)."""
        return {name: source.usage() for name, source in self._own.items()}

    def close(self) -> None:
        for source in self._own.values():
            try:
                source.close()
            except Exception:
                log.warning("closing %s failed", source.kind.name, exc_info=True)
        self._own.clear()
        if self._own_web is not None:
            self._own_web.close()
            self._own_web = None
