"""Gitee (gitee.com, Open API v5) through the shared JSON client.

Projects name it with ``gitee: owner/repo``; the ``gitee:`` section of sources.yaml holds the
settings below. ``GITEE_API_URL``, else ``gitee.api_url``, else https://gitee.com/api/v5; the
token comes from ``GITEE_TOKEN`` (anonymous without one) and is sent as ``Authorization:
Bearer``, as Gitee's own CLI does, to the API's origin only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import Field

from crawler.upstream.api_settings import ApiSettings
from crawler.upstream.source import SourceKind, host_of

if TYPE_CHECKING:
    from crawler.upstream.source import ProjectSource, SourceContext

DEFAULT_API_URL = "https://gitee.com/api/v5"
# Gitee paths: letters, digits, '-', '_' and '.'; an owner starts with a letter or digit, a
# repository may start with '.' (".gitee") but is never "." or "..".
PATH_RE = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,190}/(?!\.\.?$)[A-Za-z0-9_.][A-Za-z0-9_.-]{0,190}$"
)


class GiteeSettings(ApiSettings):
    releases_per_repo: int = Field(default=10, ge=1, le=100)
    tags_per_repo: int = Field(default=100, ge=1, le=1000)  # newest first, by commit date
    page_size: int = Field(default=100, ge=1, le=100)  # per_page of list requests (Gitee: ≤100)


def check_path(value: str) -> str:
    if not PATH_RE.match(value):
        raise ValueError(
            f"gitee {value!r} must look like 'owner/repo' (as in https://gitee.com/owner/repo)"
        )
    return value


def web_host(settings: GiteeSettings, env: Mapping[str, str]) -> str | None:
    """gitee.com: its pages are on its API's host."""
    return host_of(env.get("GITEE_API_URL") or settings.api_url or DEFAULT_API_URL)


def _open(context: SourceContext) -> ProjectSource:
    from crawler.upstream.sources.gitee.fetch import GiteeSource

    return GiteeSource(context)


KIND = SourceKind(
    name="gitee",
    label="Gitee",
    role="forge",
    project_key="gitee",
    check_path=check_path,
    open=_open,
    settings=GiteeSettings,
    web_host=web_host,
)
