"""A JSON-over-HTTP client for the sources that are not GitHub (Gitee, GitLab, PyPI…).

What every such API needs, in one place:

* conditional requests: validators and bodies from the ResponseCache, keyed by URL, Accept and a
  fingerprint of the credentials (never the credentials); a 304 replays the stored body;
* bounded retries with exponential backoff and jitter on 5xx, resets, timeouts, truncated or
  HTML bodies; ``Retry-After`` honoured on 429 (and on a 403 that carries it): a wait longer
  than the cap defers this API's remaining requests instead of retrying early;
* a rate budget read from the answer's headers (``RateLimit-Remaining`` and the like): when it
  runs out the source stops calling and the rest of its projects are deferred;
* one wall-clock deadline per request, headers included;
* credentials sent as a header or a query parameter to the API's own origin only (never to an
  absolute URL or a redirect elsewhere, even one that copies the query string), and redacted
  from every message, URL shown and cache key.

Errors are ``SourceError`` (for good) or ``SourceDeferred`` (budget spent); a caller turns them
into an error or a deferral for that project only. ``get`` reads JSON; ``exchange`` sends any
method and body and returns the answer's bytes, with the same retries, caps and guard (git's
smart HTTP protocol uses it).
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from crawler.upstream.answers import upstream_message
from crawler.upstream.api_settings import ApiSettings as ApiSettings  # re-exported
from crawler.upstream.http import (
    USER_AGENT,
    CachedResponse,
    ResponseCache,
    cache_key,
    rate_number,
    redact,
    token_identity,
    unresolved_name,
)
from crawler.upstream.source import SourceDeferred, SourceError

if TYPE_CHECKING:  # loaded when an API is opened: the source kinds register without it
    import httpx

log = logging.getLogger(__name__)
MAX_MESSAGE = 300
MAX_REDIRECTS = 5
UNREACHABLE_AFTER = 3  # requests in a row that got no answer at all: stop trying this API
DEFAULT_RETRY_AFTER = 60.0  # seconds, for a rate-limit answer that does not say how long
RATE_HEADERS = (
    ("limit", ("ratelimit-limit", "x-ratelimit-limit")),
    ("remaining", ("ratelimit-remaining", "x-ratelimit-remaining")),
    ("reset", ("ratelimit-reset", "x-ratelimit-reset")),
)


@dataclass
class RateBudget:
    limit: int | None = None
    remaining: int | None = None
    reset: datetime | None = None

    def update(self, headers: Mapping[str, str]) -> None:
        for attr, names in RATE_HEADERS:
            value = next((headers[n] for n in names if n in headers), None)
            number = rate_number(value)
            if number is None:  # absent, not a plain number, or absurd: unknown, not an error
                continue
            if attr == "reset":
                # an epoch (GitLab, GitHub) or seconds from now (the IETF draft's form)
                now = time.time()
                epoch = number if number > 1_000_000_000 else now + number
                self.reset = datetime.fromtimestamp(epoch, UTC).replace(microsecond=0)
            else:
                setattr(self, attr, number)


@dataclass
class ApiUsage:
    requests: int = 0
    not_modified: int = 0
    retries: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "not_modified": self.not_modified,
            "retries": self.retries,
        }


@dataclass(frozen=True)
class ApiResponse:
    status: int
    data: Any
    url: str  # as shown: credentials removed
    headers: Mapping[str, str] = field(default_factory=dict)
    from_cache: bool = False
    final_url: str = ""  # where the answer came from, after redirects (credentials removed)

    @property
    def links(self) -> dict[str, str]:
        """The ``Link`` header (RFC 8288) by relation, e.g. ``{"next": url, "last": url}``:
        how GitLab, Gitee and others say where the next page of a list is."""
        value = self.headers.get("link")
        if not value:
            return {}
        import httpx

        parsed = httpx.Response(200, headers={"link": value}).links  # httpx's own parser
        return {
            str(link["rel"]): str(link["url"])
            for link in parsed.values()
            if link.get("rel") and link.get("url")
        }


class _Transient(Exception):
    def __init__(
        self,
        message: str,
        retry_after: float | None = None,
        unanswered: bool = False,
        unresolved: bool = False,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unanswered = unanswered  # no HTTP answer at all (DNS, refused, reset, timeout)
        self.unresolved = unresolved  # the host name does not resolve: not worth a retry


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class JsonApi:
    """GET JSON from one API. Thread-safe: the budget and counters are shared under a lock."""

    def __init__(
        self,
        name: str,
        base_url: str,
        *,
        cache: ResponseCache,
        settings: ApiSettings,
        timeout: float,
        deadline: float | None = None,
        auth_headers: Mapping[str, str] | None = None,
        auth_params: Mapping[str, str] | None = None,
        accept: str = "application/json",
        sleep: Callable[[float], None] = time.sleep,
        client: httpx.Client | None = None,
        allow_private: bool = False,
    ) -> None:
        self.name = name  # for messages: "Gitee", "GitLab", "PyPI"
        self.base_url = base_url.rstrip("/")
        self._cache = cache
        self._settings = settings
        self._auth_headers = dict(auth_headers or {})
        self._auth_params = dict(auth_params or {})
        values = [v for v in (*self._auth_headers.values(), *self._auth_params.values()) if v]
        self._identity = token_identity("|".join(values) or None)
        # "Bearer <token>": the bare token is a secret too (an error body may echo it alone)
        bare = [v.split()[-1] for v in self._auth_headers.values() if len(v.split()) > 1]
        self._secrets = sorted({*values, *bare}, key=len, reverse=True)
        self._accept = accept
        self._sleep = sleep
        self._deadline = deadline or max(timeout * 2, timeout + 5)
        self._random = random.Random()
        self._lock = threading.Lock()
        self.budget = RateBudget()
        self.usage = ApiUsage()
        self._unanswered = 0  # requests in a row given up without any HTTP answer
        self._paused: tuple[float, str] | None = None  # (monotonic end, why): a long Retry-After
        self._allow_private = allow_private  # redirects to private addresses (the page guard)
        self._own_client = client is None
        import httpx

        from crawler.upstream.network import client_transports

        self._client = client or httpx.Client(
            timeout=timeout,
            headers={"User-Agent": USER_AGENT},
            follow_redirects=False,
            # the deadline covers headers, not only the body; the environment's proxies and CA
            **client_transports(),
        )

    @property
    def authenticated(self) -> bool:
        return bool(self._secrets)

    def close(self) -> None:
        if self._own_client:
            self._client.close()

    def redact(self, text: str) -> str:
        return redact(text, *self._secrets)

    def absolute(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        """The URL as shown and cached: base + path + sorted params, without credentials."""
        url = path if path.startswith(("http://", "https://")) else f"{self.base_url}{path}"
        if params:
            parts = urlsplit(url)
            query = "&".join(p for p in (parts.query, urlencode(sorted(params.items()))) if p)
            url = urlunsplit(parts._replace(query=query))
        return url

    # -- requests ------------------------------------------------------------------------------

    def get(
        self,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        allow: tuple[int, ...] = (),
        expect: type = dict,
    ) -> ApiResponse:
        """GET with validators; a 304 replays the stored body. ``allow`` lists statuses that
        are answers rather than failures (404 for "no such file")."""
        url = self.absolute(path, params)
        return self._request(url, allow, lambda body: self._parse(body, expect, url))

    def exchange(
        self,
        path: str,
        *,
        method: str = "GET",
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        allow: tuple[int, ...] = (),
        follow_redirects: bool = True,
        limit: int | None = None,
    ) -> ApiResponse:
        """Any request whose answer is not JSON: ``data`` is the answer's bytes (capped like any
        answer, or at ``limit`` when smaller). A GET is conditional like ``get`` (keyed by its
        headers too); another method is never cached, and a redirect it meets is returned
        (status 3xx) when ``follow_redirects`` is off."""
        url = self.absolute(path)
        return self._request(url, allow, lambda body: body, method, content, headers,
                             follow_redirects, limit)  # fmt: skip

    def _request(
        self,
        url: str,
        allow: tuple[int, ...],
        parse: Callable[[bytes], Any],
        method: str = "GET",
        content: bytes | None = None,
        extra: Mapping[str, str] | None = None,
        follow: bool = True,
        limit: int | None = None,
    ) -> ApiResponse:
        headers = {"Accept": self._accept, **(extra or {}), **self._auth_headers}
        varies = "\n".join(f"{k}: {v}" for k, v in sorted((extra or {}).items()))
        key = cache_key(method, url, f"{headers['Accept']}\n{varies}".rstrip(), self._identity)
        cached = self._cache.get_response(key) if method == "GET" else None
        if cached and cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached and cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified

        def attempt() -> ApiResponse:
            status, answer_headers, body, final = self._send(
                url, headers, method, content, follow, limit
            )
            if status == 304 and cached is not None:
                with self._lock:
                    self.usage.not_modified += 1
                return ApiResponse(200, parse(cached.body), url, answer_headers, True, final)
            if status in allow or (not follow and 300 <= status < 400):
                return ApiResponse(status, None, url, answer_headers, False, final)
            if status >= 400:
                said = self.redact(upstream_message(body))
                raise SourceError(f"HTTP {status} from {self.name}: {said}", url, status)
            data = parse(body)
            etag, modified = answer_headers.get("etag"), answer_headers.get("last-modified")
            if method == "GET" and (etag or modified):
                self._cache.put_response(
                    key,
                    CachedResponse(url, etag, modified, body, answer_headers.get("content-type")),
                )
            return ApiResponse(status, data, url, answer_headers, False, final)

        response: ApiResponse = self._with_retries(attempt, url)
        return response

    def _check_budget(self, url: str) -> None:
        reserve = self._settings.budget_reserve
        with self._lock:
            if self._paused is not None and time.monotonic() < self._paused[0]:
                raise SourceDeferred(self._paused[1], url)
            remaining = self.budget.remaining
            if remaining is not None and remaining <= reserve:
                when = self.budget.reset
                reset = when.isoformat().replace("+00:00", "Z") if when else "unknown"
                raise SourceDeferred(
                    f"{self.name} rate budget spent ({remaining} left of {self.budget.limit}, "
                    f"keeping {reserve} in reserve; resets {reset})",
                    url,
                )
            self.usage.requests += 1
            if remaining is not None:
                self.budget.remaining = remaining - 1  # reserved now, corrected by the answer

    def _strip_credentials(self, url: str) -> str:
        """The URL without our credential parameters (a server may copy the query string
        into a redirect's Location): they are added again only for the API's own origin."""
        parts = urlsplit(url)
        if not self._auth_params or not parts.query:
            return url
        kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                if k not in self._auth_params]  # fmt: skip
        return urlunsplit(parts._replace(query=urlencode(kept)))

    def _send(
        self, url: str, headers: dict[str, str], method: str = "GET",
        content: bytes | None = None, follow: bool = True, limit: int | None = None,
    ) -> tuple[int, dict[str, str], bytes, str]:  # fmt: skip
        """(status, headers, body, the URL answered from)."""
        from crawler.upstream.deadline import deadline

        self._check_budget(url)
        with deadline(self._deadline):
            return self._send_within_deadline(url, headers, method, content, follow, limit)

    def _send_within_deadline(
        self, url: str, headers: dict[str, str], method: str, content: bytes | None,
        follow: bool, limit: int | None = None,
    ) -> tuple[int, dict[str, str], bytes, str]:  # fmt: skip
        import httpx

        from crawler.upstream.deadline import deadline_passed

        origin = _origin(self.base_url)
        current = self._strip_credentials(url)
        answered = False  # this hop's status line came back: reachable, if unwell
        try:
            for _ in range(MAX_REDIRECTS + 1):
                answered = False
                # credentials go to the API's own origin only: never to an absolute URL or a
                # redirect elsewhere
                own = _origin(current) == origin
                sent = headers if own else {k: v for k, v in headers.items()
                                            if k not in self._auth_headers}  # fmt: skip
                params = self._auth_params if own and self._auth_params else None
                if not own:
                    self._check_redirect(current, url)
                with self._client.stream(
                    method, current, headers=sent, params=params, content=content
                ) as response:
                    answered = True
                    location = response.headers.get("location")
                    moved = response.status_code in (301, 302, 303, 307, 308) and location
                    if moved and follow:
                        current = self._strip_credentials(str(response.url.join(location)))
                        continue
                    body = self._read_capped(response, url, limit)  # and by the deadline
                    break
            else:
                raise SourceError(f"more than {MAX_REDIRECTS} redirects from {self.name}", url)
        except httpx.TimeoutException as exc:
            if deadline_passed():
                raise _Transient(
                    f"{self.name} sent no complete answer within the request deadline of "
                    f"{self._deadline:g}s",
                    unanswered=not answered,
                ) from None
            raise _Transient(
                f"no answer from {self.name}: timed out ({type(exc).__name__})",
                unanswered=not answered,
            ) from None
        except httpx.HTTPError as exc:
            kind = self.redact(type(exc).__name__)
            if not answered and unresolved_name(exc):
                host = self.redact(urlsplit(current).hostname or "")
                raise _Transient(
                    f"no answer from {self.name}: the name {host} does not resolve (DNS lookup "
                    "failed)",
                    unanswered=True,
                    unresolved=True,
                ) from None
            raise _Transient(
                f"{self.name} answer cut short ({kind})"
                if answered
                else f"no answer from {self.name}: {kind}",
                unanswered=not answered,
            ) from None
        answer = {k.lower(): v for k, v in response.headers.items()}
        with self._lock:
            self.budget.update(answer)
        status = response.status_code
        if status >= 500:
            raise _Transient(f"HTTP {status} from {self.name}")
        if status == 429 or (status == 403 and "retry-after" in answer):
            wait = _retry_after(answer.get("retry-after"))
            if wait is None and self.budget.remaining == 0:
                raise SourceDeferred(f"{self.name} rate limit reached (HTTP {status})", url, status)
            raise _Transient(
                f"{self.name} rate limit (HTTP {status})",
                retry_after=DEFAULT_RETRY_AFTER if wait is None else wait,
            )
        if status == 403 and self.budget.remaining == 0:
            raise SourceDeferred(f"{self.name} rate limit reached (HTTP {status})", url, status)
        return status, answer, body, current

    def _check_redirect(self, target: str, url: str) -> None:
        """A redirect away from the API's own host goes through the page fetcher's guard: no
        private, loopback or link-local address (169.254.169.254) unless allowed."""
        from crawler.upstream.pages import PageFetchError, check_url

        if urlsplit(target).hostname == urlsplit(self.base_url).hostname:
            return  # the configured host itself (another port or path of it)
        try:
            check_url(target, allow_private=self._allow_private)
        except PageFetchError as exc:
            raise SourceError(f"{self.name} redirected to a refused address: {exc}", url) from None

    def _read_capped(self, response: httpx.Response, url: str, limit: int | None) -> bytes:
        """The body, decompressed, refused once it passes ``answer_size_limit`` (counted as it
        streams in: a small gzip bomb is stopped at the limit, not after it expanded)."""
        setting = self._settings.answer_size_limit
        key = f"{self.name.split()[0].lower()}.answer_size_limit"
        hint = f"raise {key} in sources.yaml if it is legitimate"
        if limit is not None and limit < setting:  # the caller's own bound for this request
            hint = f"this request's own bound, below {key}"
        limit = min(limit or setting, setting)
        length = response.headers.get("content-length", "").strip()
        if length.isdigit() and int(length) > limit:
            raise SourceError(
                f"{self.name} answer is {int(length)} bytes, over the answer size limit of "
                f"{limit} bytes ({hint})",
                url,
            )
        chunks: list[bytes] = []
        total = 0
        for chunk in response.iter_bytes():
            total += len(chunk)
            if total > limit:
                raise SourceError(
                    f"{self.name} answer is larger than the answer size limit of {limit} bytes "
                    f"once decompressed (stopped reading; {hint})",
                    url,
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _parse(self, body: bytes, expect: type, url: str) -> Any:
        try:
            data = json.loads(body)
        except ValueError:
            kind = "an HTML page" if body.lstrip()[:1] == b"<" else "truncated or invalid JSON"
            raise _Transient(f"{self.name} answered {kind} instead of JSON") from None
        if not isinstance(data, expect):
            raise SourceError(
                f"unexpected answer shape from {self.name}: expected a JSON "
                f"{expect.__name__}, got {type(data).__name__}",
                url,
            )
        return data

    def _with_retries(self, attempt: Callable[[], Any], url: str) -> Any:
        if self._unanswered >= UNREACHABLE_AFTER:
            raise SourceError(
                f"not attempted: {self.name} unreachable ({self._unanswered} requests in a row "
                "got no answer)",
                url,
            )
        settings = self._settings
        waited = 0.0
        last = ""
        number = 0
        unanswered = False
        for number in range(settings.max_retries + 1):
            try:
                answer = attempt()
                self._unanswered = 0
                return answer
            except _Transient as exc:
                last = str(exc)
                unanswered = exc.unanswered
                if exc.unresolved:  # every later request to this API would fail the same way
                    with self._lock:
                        self._unanswered = UNREACHABLE_AFTER
                    raise SourceError(self.redact(f"{last}; not retried"), url) from None
                if number == settings.max_retries:
                    break
                if exc.retry_after is not None:
                    delay = exc.retry_after
                    if waited + delay > settings.max_retry_wait:
                        self._pause(exc, url)  # raises: never retry before the server said
                else:
                    delay = settings.retry_base_delay * (2**number)
                    delay += self._random.uniform(0, settings.retry_base_delay)
                if waited + delay > settings.max_retry_wait:
                    break
                with self._lock:
                    self.usage.retries += 1
                waited += delay
                self._sleep(delay)
                if exc.retry_after is not None:
                    with self._lock:  # waited as told: the spent budget was for back then
                        self.budget.remaining = None
        if unanswered:
            with self._lock:
                self._unanswered += 1
        raise SourceError(
            self.redact(
                f"{last} (gave up after {number + 1} attempt{'' if number == 0 else 's'}, "
                f"{waited:.1f}s of waiting)"
            ),
            url,
        )

    def _pause(self, exc: _Transient, url: str) -> None:
        """A rate limit that asks for a longer wait than we allow: the rest of this API's
        requests are deferred until then instead of retried early."""
        wait = exc.retry_after or 0.0
        why = (
            f"{exc}: asked to wait {wait:.0f}s, more than max_retry_wait "
            f"({self._settings.max_retry_wait:.0f}s)"
        )
        with self._lock:
            self._paused = (time.monotonic() + wait, why)
        raise SourceDeferred(why, url, 429)
