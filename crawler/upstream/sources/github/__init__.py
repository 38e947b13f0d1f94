"""GitHub (github.com or GitHub Enterprise): REST and GraphQL through PyGithub.

Projects name it with ``repo: owner/name``; the ``github:`` section of sources.yaml holds the
settings below. ``GITHUB_API_URL`` (what GitHub Actions sets), else ``github.api_url``, else
api.github.com; the token comes from ``GITHUB_TOKEN`` or ``GH_TOKEN``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from crawler.config.common import check_github_repo as check_repo
from crawler.upstream.source import SourceKind, host_of

if TYPE_CHECKING:
    from crawler.upstream.source import Source, SourceContext

DEFAULT_API_URL = "https://api.github.com"
APP_VARIABLES = ("GITHUB_APP_ID", "GITHUB_APP_INSTALLATION_ID", "GITHUB_APP_PRIVATE_KEY",
                 "GITHUB_APP_PRIVATE_KEY_FILE")  # fmt: skip


class GitHubSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    api_url: str | None = None
    graphql_batch: int = Field(default=50, ge=1, le=100)
    releases_per_repo: int = Field(default=10, ge=1, le=100)
    tags_per_repo: int = Field(default=10, ge=1, le=100)
    budget_reserve: int = Field(default=0, ge=0)  # requests kept unspent
    max_retries: int = Field(default=3, ge=0, le=10)
    max_retry_wait: float = Field(default=60.0, ge=0)  # total waiting per request, seconds
    retry_base_delay: float = Field(default=1.0, ge=0)
    inventory: Literal["auto", "always", "never"] = "auto"  # license-file tree scan
    # requests in flight at once: a handful, well inside GitHub's 100 concurrent requests;
    # 1 is strictly serial (GitHub's most conservative advice). 8 by default: at 4 a first
    # audit took 1.5x and an unchanged audit without a token 2x as long (bench/audit_budget.py,
    # README "Benchmarks"); an unchanged audit with a token is the same at either.
    concurrency: int = Field(default=8, ge=1, le=8)
    # GitHub's secondary limits a minute (900 REST and 2,000 GraphQL points, 90 s of response
    # time, 60 of it GraphQL), kept to before they are met (pacing.py): "auto" keeps to them
    # on api.github.com only (GitHub Enterprise Server's are its administrator's, off unless
    # set), "on" everywhere, "off" nowhere
    secondary_limits: Literal["auto", "on", "off"] = "auto"
    # one answer's size once decompressed (a recursive tree of 100,000 files is ~20 MB)
    answer_size_limit: int = Field(default=64 * 2**20, ge=2**16)


def github_endpoint(settings: GitHubSettings, env: Mapping[str, str]) -> tuple[str, str | None]:
    """(API URL, token): ``GITHUB_API_URL`` (what GitHub Actions sets), else ``github.api_url``,
    else api.github.com; ``GITHUB_TOKEN``, else ``GH_TOKEN``."""
    api_url = env.get("GITHUB_API_URL") or settings.api_url or DEFAULT_API_URL
    return api_url.rstrip("/"), env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or None


def _check_credentials(env: Mapping[str, str]) -> None:
    """A GitHub App's variables, its key read and parsed (a token is checked by its first
    answer: GitHub alone knows it)."""
    if not any(env.get(name) for name in APP_VARIABLES):
        return
    from crawler.config import ConfigError
    from crawler.upstream.sources.github.app_auth import AppAuthError, app_credentials

    try:
        app_credentials(env)
    except AppAuthError as exc:
        raise ConfigError(str(exc)) from None


def credential_in_use(env: Mapping[str, str]) -> str | None:
    """What the audit authenticates with, as messages name it: the App, ``GITHUB_TOKEN`` or
    ``GH_TOKEN``; None without any."""
    if any(env.get(name, "").strip() for name in APP_VARIABLES):
        return "GitHub App"
    if env.get("GITHUB_TOKEN"):
        return "GITHUB_TOKEN"
    return "GH_TOKEN" if env.get("GH_TOKEN") else None


def web_host(settings: GitHubSettings, env: Mapping[str, str]) -> str | None:
    """github.com for api.github.com; GitHub Enterprise serves its pages on its API's host."""
    api_url, _ = github_endpoint(settings, env)
    return "github.com" if api_url == DEFAULT_API_URL else host_of(api_url)


def _open(context: SourceContext) -> Source:
    from crawler.upstream.sources.github.fetch import GitHubSource

    return GitHubSource(context)


KIND = SourceKind(
    name="github",
    label="GitHub",
    role="forge",
    project_key="repo",
    check_path=check_repo,
    open=_open,
    settings=GitHubSettings,
    check_credentials=_check_credentials,
    web_host=web_host,
)
