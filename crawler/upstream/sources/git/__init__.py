"""Any git server speaking git's smart HTTP protocol (GitCode, cgit, a plain ``git
http-backend``, any forge's clone URL): for a project whose home has no API we read.

Projects name it with ``git: https://host/path/repo.git`` (the clone URL); the ``git:`` section
of sources.yaml holds the settings below. Read per project: the tags (annotated ones peeled to
their commit), the branch HEAD points at and its commit; where the server allows filtered
fetches (protocol v2), the dates of those commits and the root license file, by a shallow
fetch of the named objects only. No releases (a git server has none) and no license verdict
(it judges nothing). No credentials are sent: public repositories only.

This source is one package: the registry finds its ``KIND``, the audit runs
``fetch_project`` in its per-project guard (crawler.upstream.guard).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import Field, model_validator

from crawler.upstream.api_settings import ApiSettings
from crawler.upstream.source import SourceKind

if TYPE_CHECKING:
    from crawler.upstream.source import ProjectSource, SourceContext

MAX_URL = 2048


class GitSettings(ApiSettings):
    """``git:`` in sources.yaml: retries, size cap and concurrency as for the APIs, and how
    much beyond the refs is read."""

    # dates, the root license file and path: pages, by shallow filtered fetches (protocol v2
    # servers that allow filters); off: the refs only, undated
    fetch_objects: bool = True
    dated_tags: int = Field(default=500, ge=0, le=10_000)  # tags dated per night, highest first

    @model_validator(mode="before")
    @classmethod
    def _no_api_url(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("api_url") is not None:
            raise ValueError("'api_url' does not apply: each project names its repository's URL")
        return data


def check_path(value: str) -> str:
    """An http(s) clone URL without credentials, query or fragment; the trailing '/' dropped."""
    hint = "must be a repository's https:// clone URL, e.g. https://gitcode.com/Ascend/pytorch.git"
    if len(value) > MAX_URL or re.search(r"\s", value):
        raise ValueError(f"git {value[:80]!r} {hint}")
    try:
        parts = urlsplit(value)
        _ = parts.port
    except ValueError:
        raise ValueError(f"git {value!r} {hint}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"git {value!r} {hint}")
    if "@" in parts.netloc:
        raise ValueError(
            f"git {value!r}: no credentials in the URL (they would be stored and shown); "
            "the git source reads public repositories"
        )
    if parts.query or parts.fragment or "#" in value or parts.path.strip("/") == "":
        raise ValueError(f"git {value!r} {hint}")
    return value.rstrip("/")


def _open(context: SourceContext) -> ProjectSource:
    from crawler.upstream.sources.git.fetch import GitSource

    return GitSource(context)


KIND = SourceKind(
    name="git",
    label="git server",
    role="forge",
    project_key="git",
    check_path=check_path,
    open=_open,
    settings=GitSettings,
)
