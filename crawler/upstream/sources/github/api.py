"""GitHub transport: PyGithub's requester plus what a nightly job needs on top of it.

- conditional requests: validators and bodies live in a ResponseCache, URLs are byte-stable;
- a rate budget read from ``x-ratelimit-*`` on every answer; when it runs low we stop
  (``BudgetExhausted``) instead of burning the integration;
- bounded retries with exponential backoff and jitter for 5xx, resets, timeouts, truncated or
  non-JSON bodies, and ``retry-after`` on secondary limits;
- the token never leaves this module: every message is passed through ``redact``.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from github import Auth, Github

from crawler.upstream.http import (
    USER_AGENT,
    CachedResponse,
    ResponseCache,
    cache_key,
    redact,
    token_identity,
)
from crawler.upstream.source import SourceDeferred, SourceError
from crawler.upstream.sources.github import GitHubSettings

log = logging.getLogger(__name__)
ACCEPT = "application/vnd.github+json"
MAX_MESSAGE = 300


class GitHubError(SourceError):
    """A request that failed for good; ``url`` is the evidence of the failure."""

    def __init__(
        self, message: str, url: str, status: int | None = None, unreachable: bool = False
    ) -> None:
        super().__init__(message, url, status)
        self.unreachable = unreachable  # no HTTP answer at all (DNS, refused, reset, timeout)


class BudgetExhausted(SourceDeferred, GitHubError):
    """The rate budget is (nearly) spent: stop calling GitHub for this audit."""


@dataclass
class RateBudget:
    limit: int | None = None
    remaining: int | None = None
    reset: int | None = None

    def update(self, headers: dict[str, Any]) -> None:
        for attr, header in (
            ("limit", "x-ratelimit-limit"),
            ("remaining", "x-ratelimit-remaining"),
            ("reset", "x-ratelimit-reset"),
        ):
            value = headers.get(header)
            if value is not None and str(value).strip().isdigit():
                setattr(self, attr, int(value))


@dataclass
class ApiStats:
    requests: int = 0
    not_modified: int = 0
    retries: int = 0
    graphql_queries: int = 0
    graphql_points: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "not_modified": self.not_modified,
            "retries": self.retries,
            "graphql_queries": self.graphql_queries,
            "graphql_points": self.graphql_points,
        }


@dataclass(frozen=True)
class ApiResponse:
    status: int
    data: Any
    url: str
    from_cache: bool = False


class _Transient(Exception):
    """A failure worth retrying."""

    def __init__(
        self, message: str, retry_after: float | None = None, unreachable: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unreachable = unreachable


_TRANSPORT_REASONS = (
    ("Failed to resolve", "DNS lookup failed"),
    ("Name or service not known", "DNS lookup failed"),
    ("Connection refused", "connection refused"),
    ("timed out", "timed out"),
    ("Read timed out", "timed out"),
    ("reset by peer", "connection reset"),
    ("RemoteDisconnected", "connection closed without an answer"),
)


_CUT_OFF = ("ChunkedEncodingError", "IncompleteRead", "ContentDecodingError", "InvalidChunkLength")


def _answered(exc: Exception) -> bool:
    """GitHub did answer, but the body was cut off or garbled: not an unreachable GitHub."""
    text = f"{type(exc).__name__}: {exc!r}"
    return any(name in text for name in _CUT_OFF)


def _transport_message(exc: Exception) -> str:
    if _answered(exc):
        return f"GitHub's answer was cut off ({type(exc).__name__})"
    text = f"{type(exc).__name__}: {exc}"
    for needle, reason in _TRANSPORT_REASONS:
        if needle in text:
            return f"no answer from GitHub: {reason} ({type(exc).__name__})"
    return f"no answer from GitHub: {text[:160]}"


def _message(body: str) -> str:
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
            return str(parsed["message"])[:MAX_MESSAGE]
    except ValueError:
        pass
    return body[:80].replace("\n", " ")


class GitHubApi:
    def __init__(
        self,
        api_url: str,
        token: str | None,
        cache: ResponseCache,
        settings: GitHubSettings,
        *,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.authenticated = bool(token)
        self._token = token
        self._identity = token_identity(token)
        self._cache = cache
        self._settings = settings
        self._sleep = sleep
        self._random = random.Random()
        self.core = RateBudget()
        self.graphql_budget = RateBudget()
        self.stats = ApiStats()
        self._github = Github(
            base_url=self.api_url,
            auth=Auth.Token(token) if token else None,
            retry=None,
            timeout=int(timeout),
            user_agent=USER_AGENT,
            # Requests are serial already; PyGithub's default pacing (0.25 s per read, 1 s per
            # POST, which includes GraphQL) would make a 1,000-project audit crawl.
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        self._requester = self._github.requester

    def close(self) -> None:
        self._github.close()

    @property
    def graphql_url(self) -> str:
        return str(self._requester.graphql_url)

    def absolute(self, path: str) -> str:
        return path if path.startswith("http") else f"{self.api_url}{path}"

    def _redact(self, text: str) -> str:
        return redact(text, self._token)

    # -- budget ------------------------------------------------------------------------------

    def refresh_budget(self) -> None:
        """Ask /rate_limit (free) so the first real request already knows the budget."""
        try:
            status, headers, body = self._requester.requestJson("GET", "/rate_limit")
        except Exception as exc:  # the budget stays unknown; requests will tell us
            log.info("could not read /rate_limit: %s", self._redact(type(exc).__name__))
            return
        if status == 200:
            try:
                doc = json.loads(body)
                core = doc["resources"]["core"]
                self.core = RateBudget(core["limit"], core["remaining"], core["reset"])
                gql = doc["resources"].get("graphql")
                if gql:
                    self.graphql_budget = RateBudget(gql["limit"], gql["remaining"], gql["reset"])
                return
            except (ValueError, KeyError, TypeError):
                pass
        self.core.update(headers)

    def _check_budget(self, budget: RateBudget, url: str) -> None:
        reserve = self._settings.budget_reserve
        if budget.remaining is not None and budget.remaining <= reserve:
            raise BudgetExhausted(
                f"rate budget nearly spent ({budget.remaining} left of {budget.limit}, "
                f"keeping {reserve} in reserve); resets at {budget.reset}",
                url,
            )

    def spare_requests(self) -> int | None:
        """Requests left above the reserve, or None when unknown."""
        if self.core.remaining is None:
            return None
        return self.core.remaining - self._settings.budget_reserve

    # -- requests ----------------------------------------------------------------------------

    def get_json(
        self, path: str, *, expect: type = dict, allow: tuple[int, ...] = ()
    ) -> ApiResponse:
        """GET with validators; a 304 replays the stored body. ``allow`` lists statuses that
        are answers rather than failures (404 for "no license", 409 for "empty repo")."""
        url = self.absolute(path)
        key = cache_key("GET", url, ACCEPT, self._identity)
        cached = self._cache.get_response(key)
        headers = {"Accept": ACCEPT}
        if cached and cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached and cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified

        def attempt() -> ApiResponse:
            status, resp_headers, body = self._send("GET", path, headers=headers, budget=self.core)
            if status == 304 and cached is not None:
                self.stats.not_modified += 1
                return ApiResponse(200, self._parse(cached.body.decode(), expect), url, True)
            if status in allow:
                return ApiResponse(status, None, url)
            self._raise_for_status(status, body, url)
            data = self._parse(body, expect)
            if resp_headers.get("etag") or resp_headers.get("last-modified"):
                self._cache.put_response(
                    key,
                    CachedResponse(
                        url=url,
                        etag=resp_headers.get("etag"),
                        last_modified=resp_headers.get("last-modified"),
                        body=body.encode(),
                        content_type=resp_headers.get("content-type"),
                    ),
                )
            return ApiResponse(status, data, url)

        response: ApiResponse = self._with_retries(attempt, url)
        return response

    def post_graphql(
        self, query: str, *, retry_timeouts: bool = False
    ) -> tuple[int, dict[str, Any] | None, str]:
        """POST one GraphQL document; returns (status, parsed body or None, short message).

        PyGithub's graphql_query raises on any error; a batch needs the partial data. A 502/504
        (GitHub's query timeout) is returned for the caller to shrink the batch, or retried
        like any 5xx when ``retry_timeouts`` says the batch cannot shrink any more."""
        url = self.graphql_url

        def attempt() -> tuple[int, dict[str, Any] | None, str]:
            # 502/504 is how GitHub says a query timed out: the caller shrinks the batch
            status, _headers, body = self._send(
                "POST", url, input={"query": query}, budget=self.graphql_budget, answers=(502, 504)
            )
            self.stats.graphql_queries += 1
            if status in (401, 403, 429):
                self._raise_for_status(status, body, url)
            if status in (502, 504):
                if retry_timeouts:
                    raise _Transient(f"HTTP {status} from GitHub (query timed out)")
                return status, None, f"HTTP {status} (GitHub timed out)"
            doc = self._parse(body, dict)
            rate = (doc.get("data") or {}).get("rateLimit") if doc.get("data") else None
            if isinstance(rate, dict):
                self.stats.graphql_points += int(rate.get("cost") or 0)
                if isinstance(rate.get("remaining"), int):
                    self.graphql_budget.remaining = rate["remaining"]
            return status, doc, _message(body)

        answer: tuple[int, dict[str, Any] | None, str] = self._with_retries(attempt, url)
        return answer

    def _send(
        self,
        verb: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        input: Any = None,
        budget: RateBudget,
        answers: tuple[int, ...] = (),
    ) -> tuple[int, dict[str, Any], str]:
        """One request; 5xx other than ``answers`` and transport failures are _Transient."""
        url = self.absolute(path)
        self._check_budget(budget, url)
        self.stats.requests += 1
        try:
            status, resp_headers, body = self._requester.requestJson(
                verb, path, headers=headers, input=input
            )
        except Exception as exc:  # connection reset, timeout, protocol error
            message = self._redact(_transport_message(exc))
            raise _Transient(message, unreachable=not _answered(exc)) from None
        resp_headers = {k.lower(): v for k, v in resp_headers.items()}
        budget.update(resp_headers)
        if status >= 500 and status not in answers:
            raise _Transient(f"HTTP {status} from GitHub")
        if status in (403, 429):
            self._rate_limited(status, resp_headers, body, url)
        return status, resp_headers, body or ""

    def _rate_limited(self, status: int, headers: dict[str, Any], body: str, url: str) -> None:
        message = _message(body)
        if headers.get("x-ratelimit-remaining") == "0" and "retry-after" not in headers:
            raise BudgetExhausted(
                f"primary rate limit reached (HTTP {status}): {self._redact(message)}", url, status
            )
        retry_after = headers.get("retry-after")
        if retry_after is not None or "secondary rate limit" in message.lower() or status == 429:
            wait = float(str(retry_after)) if str(retry_after or "").isdigit() else 60.0
            raise _Transient(f"secondary rate limit (HTTP {status})", retry_after=wait)

    def _raise_for_status(self, status: int, body: str, url: str) -> None:
        if status < 400:
            return
        message = self._redact(_message(body))
        if status == 401:
            raise GitHubError(
                "GitHub rejected the token (HTTP 401): check GITHUB_TOKEN", url, status
            )
        raise GitHubError(f"HTTP {status}: {message}", url, status)

    @staticmethod
    def _parse(body: str, expect: type) -> Any:
        try:
            data = json.loads(body)
        except ValueError:
            snippet = body.lstrip()[:1]
            kind = "an HTML page" if snippet == "<" else "truncated or invalid JSON"
            raise _Transient(f"GitHub answered {kind} instead of JSON") from None
        if not isinstance(data, expect):
            raise GitHubError(
                f"unexpected answer shape: expected a JSON {expect.__name__}, "
                f"got {type(data).__name__}",
                "",
            )
        return data

    def _with_retries(self, attempt: Callable[[], Any], url: str) -> Any:
        settings = self._settings
        waited = 0.0
        last = ""
        unreachable = False
        for number in range(settings.max_retries + 1):
            try:
                return attempt()
            except GitHubError as exc:
                if not exc.url:
                    exc.url = url
                raise
            except _Transient as exc:
                last = str(exc)
                unreachable = exc.unreachable
                if number == settings.max_retries:
                    break
                if exc.retry_after is not None:
                    delay = min(exc.retry_after, settings.max_retry_wait)
                else:
                    delay = settings.retry_base_delay * (2**number)
                    delay += self._random.uniform(0, settings.retry_base_delay)
                if waited + delay > settings.max_retry_wait:
                    break
                self.stats.retries += 1
                waited += delay
                self._sleep(delay)
        raise GitHubError(
            f"{last} (gave up after {number + 1} attempt(s), {waited:.1f}s of waiting)",
            url,
            unreachable=unreachable,
        )
