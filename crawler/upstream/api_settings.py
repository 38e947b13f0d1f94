"""The settings every REST source shares (``ApiSettings``), apart from the client that uses
them (crawler.upstream.json_api): reading sources.yaml registers every source kind
(crawler.config.kinds), whose settings models extend this one, and an audit of GitHub
projects only never opens a JSON API (importing the client costs some 6 ms of CPU a run).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ApiSettings(BaseModel):
    """The settings every REST source shares; a source's section model extends it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_url: str | None = None
    max_retries: int = Field(default=3, ge=0, le=10)
    max_retry_wait: float = Field(default=60.0, ge=0)  # total waiting per request, seconds
    retry_base_delay: float = Field(default=1.0, ge=0)
    budget_reserve: int = Field(default=0, ge=0)  # requests kept unspent
    concurrency: int = Field(default=2, ge=1, le=8)  # requests in flight to this API
    # one answer's size once decompressed: a larger one is an error of that project
    answer_size_limit: int = Field(default=32 * 2**20, ge=2**16)
