"""GitLab (gitlab.com or a self-managed instance): REST API v4 through the shared JsonApi.

Projects name it with ``gitlab: group/sub/project``, and a self-managed instance with the
per-project ``gitlab_url: https://gitlab.example.com``. The default instance is ``GITLAB_URL``,
else ``gitlab.url`` in sources.yaml, else https://gitlab.com. ``GITLAB_TOKEN`` is sent to the
default instance only; another instance gets the token named for it in ``gitlab.tokens``
(instance URL → environment variable), so no token ever reaches a host it was not made for.

Why JsonApi and not python-gitlab: the audit needs validators kept between runs (ETag →
304 from the shared ResponseCache), a rate budget that defers instead of sleeping through
``RateLimit-*`` resets, an injectable clock for waits, and tokens redacted from every
message; python-gitlab (requests, no conditional requests) would have to be wrapped in all of
that, while the few endpoints read here are plain JSON.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from crawler.upstream.api_settings import ApiSettings
from crawler.upstream.source import SourceKind, host_of

if TYPE_CHECKING:
    from crawler.upstream.source import ProjectSource, SourceContext

DEFAULT_URL = "https://gitlab.com"
URL_OPTION = "gitlab_url"
# group/sub/project: two or more segments; GitLab allows letters, digits, '_', '.', '-'
_SEGMENT = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,254})"
PATH_RE = re.compile(rf"^{_SEGMENT}(?:/{_SEGMENT}){{1,20}}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def instance_url(value: str) -> str:
    """``https://gitlab.example.com/`` → ``https://gitlab.example.com``; ValueError if not
    an http(s) URL. A trailing ``/api/v4`` is accepted and dropped."""
    text = value.strip().rstrip("/")
    text = text.removesuffix("/api/v4").rstrip("/")
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{value!r} must be the instance's address, like https://gitlab.example.com"
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{value!r} must be a plain http(s) address without query or credentials")
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path}"


class GitLabSettings(ApiSettings):
    url: str | None = None  # the default instance; GITLAB_URL wins, gitlab_url per project wins
    releases_per_repo: int = Field(default=10, ge=1, le=1000)
    tags_per_repo: int = Field(default=20, ge=1, le=1000)
    page_size: int = Field(default=100, ge=1, le=100)  # GitLab's per_page, at most 100
    tokens: dict[str, str] = Field(default_factory=dict)  # instance URL → env variable name

    @field_validator("api_url")
    @classmethod
    def _no_api_url(cls, value: str | None) -> str | None:
        if value is not None:
            raise ValueError(
                "GitLab is configured by its instance: set 'url' (e.g. https://gitlab.example.com);"
                " the API is read at <url>/api/v4"
            )
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else instance_url(value)

    @field_validator("tokens")
    @classmethod
    def _tokens(cls, value: dict[str, str]) -> dict[str, str]:
        checked = {}
        for url, name in value.items():
            if not _ENV_NAME.match(name):
                raise ValueError(f"tokens: {name!r} must be the name of an environment variable")
            checked[instance_url(url)] = name
        return checked


def check_path(value: str) -> str:
    if value.endswith((".git", ".atom")) or not PATH_RE.match(value):
        raise ValueError(
            f"gitlab {value!r} must look like 'group/project' or 'group/subgroup/project' "
            "(the path in the project's URL, without .git)"
        )
    return value


def _open(context: SourceContext) -> ProjectSource:
    from crawler.upstream.sources.gitlab.fetch import GitLabSource

    return GitLabSource(context)


def _check_option(key: str, value: str) -> str:
    """``gitlab_url`` is checked when sources.yaml is read: a typo is a file:line error."""
    if key != URL_OPTION:
        return value
    try:
        return instance_url(value)
    except ValueError as exc:
        raise ValueError(f"{key} {exc}") from None


def web_host(settings: GitLabSettings, env: Mapping[str, str]) -> str | None:
    """The default instance's host (GITLAB_URL, else ``gitlab.url``, else gitlab.com)."""
    try:
        return host_of(instance_url(env.get("GITLAB_URL") or settings.url or DEFAULT_URL))
    except ValueError:
        return None


KIND = SourceKind(
    name="gitlab",
    label="GitLab",
    role="forge",
    project_key="gitlab",
    check_path=check_path,
    open=_open,
    option_keys=(URL_OPTION,),
    check_option=_check_option,
    settings=GitLabSettings,
    web_host=web_host,
)
