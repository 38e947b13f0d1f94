"""A source opened in a test exactly as the audit opens it: written once for the source tests
(Gitee, Gitea, GitLab, PyPI) that talk to their fake on loopback."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from crawler.config import Settings
from crawler.upstream.guard import open_source
from crawler.upstream.http import MemoryCache
from crawler.upstream.pages import PageFetcher
from crawler.upstream.source import Source, SourceContext, source_kinds


def open_in_guard(
    kind: str,
    env: Mapping[str, str],
    *,
    now: str,
    settings: Mapping[str, Any] | None = None,
    common: Settings | None = None,
    cache: MemoryCache | None = None,
    web: PageFetcher | None = None,
    sleep: Callable[[float], None] = lambda _s: None,
    stop: bool = False,
) -> Source:
    """The source ``kind`` on a settings section of ``settings`` (retries not waited for unless
    the test says), opened as the audit opens it: a simple source runs inside the per-project
    guard. ``now`` is the audit's clock; ``stop`` asks it to defer what is left."""
    info = source_kinds()[kind]
    context = SourceContext(
        settings=info.settings(**{"retry_base_delay": 0, **(settings or {})}),
        common=common or Settings(),
        env=env,
        cache=cache or MemoryCache(),
        web=web or PageFetcher(Settings(), MemoryCache()),  # the caller closes one it passes
        clock=lambda: now,
        sleep=sleep,
        should_stop=lambda: stop,
    )
    return open_source(info, context)
