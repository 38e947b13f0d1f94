"""Gitea and Forgejo (gitea.com, codeberg.org, a self-hosted instance): REST API v1.

Projects name it with ``gitea: owner/repo``; the ``gitea:`` section of sources.yaml holds the
settings below. ``GITEA_API_URL``, else ``gitea.api_url``, else https://gitea.com/api/v1 (for
Codeberg or another Forgejo: ``https://codeberg.org/api/v1``). The token comes from
``GITEA_TOKEN`` (anonymous without one) and is sent as ``Authorization: token``, as Gitea's
own ``tea`` client does, to the API's origin only.

This source is one package and changes no other file: the registry finds its ``KIND``, the
audit runs ``fetch_project`` in its per-project guard (crawler.upstream.guard).
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

DEFAULT_API_URL = "https://gitea.com/api/v1"
API_URL_ENV = "GITEA_API_URL"
TOKEN_ENV = "GITEA_TOKEN"
# Gitea names: letters, digits, '-', '_' and '.'; an owner up to 40 characters, a repository up
# to 100; neither is "." or "..", and a repository name never ends in ".git".
PATH_RE = re.compile(
    r"^(?!\.\.?/)[A-Za-z0-9_.-]{1,40}/(?!\.\.?$)(?!.*\.git$)[A-Za-z0-9_.-]{1,100}$"
)


class GiteaSettings(ApiSettings):
    releases_per_repo: int = Field(default=10, ge=1, le=50)
    tags_per_repo: int = Field(default=50, ge=1, le=500)
    page_size: int = Field(default=50, ge=1, le=50)  # `limit` of list requests (Gitea: ≤50)


def check_path(value: str) -> str:
    if not PATH_RE.match(value):
        raise ValueError(
            f"gitea {value!r} must look like 'owner/repo' (as in https://gitea.com/owner/repo)"
        )
    return value


def web_host(settings: GiteaSettings, env: Mapping[str, str]) -> str | None:
    """The instance's host (its pages are on its API's host)."""
    return host_of(env.get(API_URL_ENV) or settings.api_url or DEFAULT_API_URL)


def _open(context: SourceContext) -> ProjectSource:
    from crawler.upstream.sources.gitea.fetch import GiteaSource

    return GiteaSource(context)


KIND = SourceKind(
    name="gitea",
    label="Gitea",
    role="forge",
    project_key="gitea",
    check_path=check_path,
    open=_open,
    settings=GiteaSettings,
    web_host=web_host,
)
