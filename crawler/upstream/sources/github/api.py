"""GitHub transport: PyGithub's requester plus what a nightly job needs on top of it.

- REST requests go through PyGithub; GraphQL documents (which PyGithub would only forward as a
  JSON POST), trees at a commit and the free ``GET /rate_limit`` are plain requests, sent
  straight to urllib3's pool (transport.DirectSender) with the same deadline, size limit,
  headers, token and proxy. PyGithub is imported at the first REST request: an
  unchanged night with a token sends none, and so does not load PyGithub's modules nor the
  JWT, cryptography and NaCl stacks it imports for App authentication and secrets (about
  15 MB of a 90 MB budget, see bench/audit_budget.py);
- concurrency: each worker thread has its own PyGithub client and its own sender (neither is
  thread-safe); they share one rate budget, one set of counters and one validator cache;
- conditional requests: validators and bodies live in a ResponseCache, URLs are byte-stable;
- a rate budget read from ``x-ratelimit-*`` on every answer; a request reserves its point
  before it is sent, so workers in flight together never spend past the reserve; when it runs
  low we stop (``BudgetExhausted``) instead of burning the integration;
- GitHub's secondary limits a minute (points, response time) paced before they are met
  (pacing.py, on api.github.com); one met anyway (403/429 with ``retry-after``) pauses every
  worker, not just one;
- bounded retries with exponential backoff and jitter for 5xx, resets, timeouts, truncated or
  non-JSON bodies; one wall-clock deadline per request, headers included (transport.py);
- the token never leaves this module: every message is redacted first, then cut.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import requests

from crawler.logs import adopt_library_loggers
from crawler.upstream.answers import upstream_message
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
from crawler.upstream.network import ca_bundle
from crawler.upstream.source import SourceDeferred, SourceError
from crawler.upstream.sources.github import GitHubSettings
from crawler.upstream.sources.github.pacing import Pacer, secondary_limits
from crawler.upstream.sources.github.transport import (
    AnswerRefused,
    DeadlineAdapter,
    DirectSender,
    install_deadline,
)

if TYPE_CHECKING:
    from github import Github

    from crawler.upstream.sources.github.queries import Query

log = logging.getLogger(__name__)
ACCEPT = "application/vnd.github+json"
MAX_MESSAGE = 300


class GitHubError(SourceError):
    """A request that failed for good; ``url`` is the evidence of the failure."""

    def __init__(
        self,
        message: str,
        url: str,
        status: int | None = None,
        unreachable: bool = False,
        unresolved: bool = False,
    ) -> None:
        super().__init__(message, url, status)
        self.unreachable = unreachable  # no HTTP answer at all (DNS, refused, reset, timeout)
        self.unresolved = unresolved  # the host name does not resolve: nothing else will


class BudgetExhausted(SourceDeferred, GitHubError):
    """The rate budget is (nearly) spent: stop calling GitHub for this audit."""


def _iso_epoch(epoch: int | None) -> str:
    if epoch is None:
        return "an unknown time"
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


@dataclass
class RateBudget:
    """One of GitHub's budgets (core REST, GraphQL), shared by every worker.

    ``remaining`` is what GitHub last said, lowered by the requests reserved since; answers
    arriving out of order never raise it within one reset window."""

    limit: int | None = None
    remaining: int | None = None
    reset: int | None = None
    in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def update(self, headers: dict[str, Any]) -> None:
        values = {}
        for attr, header in (
            ("limit", "x-ratelimit-limit"),
            ("remaining", "x-ratelimit-remaining"),
            ("reset", "x-ratelimit-reset"),
        ):
            number = rate_number(headers.get(header))
            if number is not None:  # absent, garbled or absurd: unknown
                values[attr] = number
        with self.lock:
            new_window = "reset" in values and values["reset"] != self.reset
            if "limit" in values:
                self.limit = values["limit"]
            if "reset" in values:
                self.reset = values["reset"]
            if "remaining" in values:
                current = values["remaining"]
                if self.remaining is None or new_window or current < self.remaining:
                    self.remaining = current

    def reserve(self, reserve: int, url: str) -> None:
        """Claim one request, or raise BudgetExhausted when it would cut into the reserve."""
        with self.lock:
            if self.remaining is not None and self.remaining - self.in_flight <= reserve:
                raise BudgetExhausted(
                    f"rate budget nearly spent ({self.remaining} left of {self.limit}, "
                    f"{self.in_flight} in flight, keeping {reserve} in reserve); resets at "
                    f"{_iso_epoch(self.reset)}",
                    url,
                )
            self.in_flight += 1

    def release(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def spare(self, reserve: int) -> int | None:
        with self.lock:
            if self.remaining is None:
                return None
            return self.remaining - self.in_flight - reserve


@dataclass
class ApiStats:
    requests: int = 0
    not_modified: int = 0
    retries: int = 0
    graphql_queries: int = 0
    graphql_points: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

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
        self,
        message: str,
        retry_after: float | None = None,
        unreachable: bool = False,
        pause_all: bool = False,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unreachable = unreachable
        self.pause_all = pause_all  # a secondary limit: every worker waits it out


_TRANSPORT_REASONS = (
    ("DeadlineExceeded", "no complete answer within the request deadline"),
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
    return f"no answer from GitHub: {text}"


REDACT_WINDOW = 4096  # characters past a cut that are still redacted (secrets are far shorter)


def _cut(text: str, limit: int = MAX_MESSAGE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _message(body: str) -> str:
    """GitHub's error message, uncut: callers redact first, then cut."""
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
            return str(parsed["message"])
    except ValueError:
        pass
    return body.replace("\n", " ")


DEFAULT_SECONDARY_WAIT = 60.0  # GitHub: without retry-after, "wait at least one minute"


def asked_wait(value: str | None, now: datetime) -> tuple[float | None, str]:
    """How long a secondary limit's ``retry-after`` asks to wait, in seconds (None when it is
    no wait at all: negative, or not a number nor a date), and that wait as the report says
    it: ``86400s (until 2026-12-02T03:00:00Z)``."""
    if value is None:
        return DEFAULT_SECONDARY_WAIT, f"{DEFAULT_SECONDARY_WAIT:.0f}s (GitHub's default)"
    text = value.strip()
    if text.isdigit() and text.isascii():
        seconds = float(text)
        if seconds > 10 * 365 * 86400:  # past any date a report could name
            return seconds, f"{text[:20]}s"
        return seconds, f"{seconds:.0f}s (until {_iso_epoch(int(now.timestamp() + seconds))})"
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None, f"retry-after {text[:40]!r}"
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = max(0.0, (when - now).total_seconds())
    return seconds, f"{seconds:.0f}s (until {_iso_epoch(int(when.timestamp()))})"


def _resets_at(headers: dict[str, Any]) -> str:
    """ "; resets at <UTC time>" from GitHub's ``x-ratelimit-reset`` (epoch seconds), if sent."""
    reset = str(headers.get("x-ratelimit-reset") or "")
    if not reset.isdigit():
        return ""
    return f"; resets at {datetime.fromtimestamp(int(reset), UTC):%Y-%m-%dT%H:%M:%SZ}"


class AppTokens(Protocol):
    """A GitHub App installation's tokens (app_auth.InstallationTokens)."""

    issued: list[str]  # every token received: secrets to redact

    @property
    def identity(self) -> str: ...  # stable across renewals: the validators' cache key

    def token(self) -> str: ...  # the current token, renewed before it expires

    def close(self) -> None: ...


def _settle_environment(
    session: requests.Session, proxies: dict[str, str], verify: bool | str
) -> None:
    """Give PyGithub's session the environment's proxies and CA bundle, read once by the
    client (GitHubApi), instead of having requests walk ``os.environ`` twice on every request
    while ``trust_env`` is on (a third of a REST request's CPU in the first audit). ``.netrc``
    credentials, which trust_env would also read, are not wanted: auth is the token's."""
    session.proxies.update(proxies)
    session.verify = verify
    session.trust_env = False


def _installation_auth(base: type, tokens: AppTokens) -> Any:
    """A PyGithub ``Auth`` (``base`` is ``github.Auth.Auth``, imported late) that sends the
    current installation token of ``tokens`` with every REST request."""

    class InstallationToken(base):  # type: ignore[misc]
        token_type = "token"

        @property
        def token(self) -> str:
            return tokens.token()

        @property
        def _masked_token(self) -> str:
            return "token (installation token removed)"

    return InstallationToken()


def graphql_url(api_url: str) -> str:
    """PyGithub's rule: ``<base>/graphql``, where a GitHub Enterprise ``.../api/v3`` base
    becomes ``.../api/graphql``."""
    parts = urlsplit(api_url)
    path = parts.path.rstrip("/").removesuffix("/v3")
    return urlunsplit(parts._replace(path=f"{path}/graphql"))


class RequestSlots:
    """At most ``size`` requests in flight. A GraphQL query (``urgent``) waiting for a slot
    goes before the trees waiting for one: the rounds that complete every project of a batch
    are not held behind a thousand tree reads that can wait. But while trees wait, queries hold
    at most a quarter of the slots (at least one): a query waits on the server's execution
    for hundreds of milliseconds, holding a slot in which a tree read would have been done
    several times over, and a batch's queries sent at once held every slot (a 10,000-project
    first audit: 75 of its 420 slot-seconds, trees waiting; 43 with two queries at a time)."""

    def __init__(self, size: int) -> None:
        self._size = max(1, size)
        self._query_cap = max(1, self._size // 4)
        self._used = 0
        self._queries = 0  # urgent requests in flight
        self._urgent = 0  # urgent requests waiting
        self._plain = 0  # other requests waiting
        self._changed = threading.Condition()

    def _may_go(self, urgent: bool) -> bool:
        if self._used >= self._size:
            return False
        if urgent:
            return not self._plain or self._queries < self._query_cap
        return not self._urgent or self._queries >= self._query_cap

    @contextmanager
    def taken(self, *, urgent: bool) -> Iterator[None]:
        with self._changed:
            if urgent:
                self._urgent += 1
            else:
                self._plain += 1
            try:
                while not self._may_go(urgent):
                    self._changed.wait()
            finally:
                if urgent:
                    self._urgent -= 1
                else:
                    self._plain -= 1
            self._used += 1
            self._queries += urgent
            self._changed.notify_all()  # the others waiting may go, if a slot is left
        try:
            yield
        finally:
            with self._changed:
                self._used -= 1
                self._queries -= urgent
                self._changed.notify_all()


class GitHubApi:
    def __init__(
        self,
        api_url: str,
        token: str | None,
        cache: ResponseCache,
        settings: GitHubSettings,
        *,
        timeout: float = 30.0,
        deadline: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        allow_private: bool = False,
        app_tokens: AppTokens | None = None,
        credential: str | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        # the variable the token came from, for messages (crawler.upstream.sources.github)
        self.credential = credential or "GITHUB_TOKEN"
        self.allow_private = allow_private  # redirects to private addresses (the page guard)
        self.graphql_url = graphql_url(self.api_url)
        # a GitHub App's installation tokens (app_auth.py) replace the token when given
        self._app_tokens = app_tokens
        self.authenticated = bool(token) or app_tokens is not None
        self._token = None if app_tokens else token
        self._identity = token_identity(app_tokens.identity if app_tokens else token)
        self._cache = cache
        self._settings = settings
        self._sleep = sleep
        self._timeout = timeout
        self._deadline = deadline or max(2 * timeout, timeout + 5)
        # the environment's proxies for GitHub's host (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY)
        # and its CA bundle (REQUESTS_CA_BUNDLE, SSL_CERT_FILE), read once for every thread's
        # connections: requests would read them again on every request
        self.proxies: dict[str, str] = requests.utils.get_environ_proxies(self.api_url)
        self.verify: bool | str = ca_bundle() or True
        self._random = random.Random()
        self._local = threading.local()
        self._clients: list[Github | DirectSender] = []
        self._clients_lock = threading.Lock()
        # a secondary limit closes the gate: every worker waits until the one that hit it has
        # waited its retry-after
        self._gate = threading.Condition()
        self._closers = 0
        # secondary limits met this audit; the second (or one asking for a longer wait than
        # max_retry_wait) stops GitHub for the audit: ``stopped`` says why
        self._secondary = 0
        self.stopped: str | None = None
        self._now: Callable[[], datetime] = lambda: datetime.now(UTC)
        self.core = RateBudget()
        self.graphql_budget = RateBudget()
        self.stats = ApiStats()
        self.project_deadline: float | None = None  # seconds per project; see project_clock
        # ``github.concurrency`` bounds the requests in flight, whichever thread sends them
        # (the pool's workers reading trees, the audit's thread asking for license texts)
        self._in_flight = RequestSlots(settings.concurrency)
        limits = secondary_limits(settings.secondary_limits, self.api_url)
        self.pacer = Pacer(limits, clock=clock, sleep=sleep) if limits else None

    def _requester(self) -> Any:
        """This thread's PyGithub requester (PyGithub's requester is not thread-safe)."""
        client: Github | None = getattr(self._local, "client", None)
        if client is None:
            from github import Auth, Github  # here: see the module's docstring

            adopt_library_loggers()  # PyGithub's own stderr handler, added at its import

            auth: Any = Auth.Token(self._token) if self._token else None
            if self._app_tokens is not None:
                auth = _installation_auth(Auth.Auth, self._app_tokens)
            client = Github(
                base_url=self.api_url,
                auth=auth,
                retry=None,
                timeout=int(self._timeout),
                user_agent=USER_AGENT,
                # we pace ourselves (bounded concurrency, budget, secondary-limit pauses);
                # PyGithub's default 0.25 s per read and 1 s per POST would make it crawl
                seconds_between_requests=None,
                seconds_between_writes=None,
                verify=self.verify,  # REQUESTS_CA_BUNDLE or SSL_CERT_FILE
            )
            install_deadline(client, self._deadline, **self._guards())
            connection = getattr(client.requester, "_Requester__connection", None)
            if isinstance(getattr(connection, "session", None), requests.Session):
                _settle_environment(connection.session, self.proxies, self.verify)  # type: ignore[union-attr]
            self._local.client = client
            with self._clients_lock:
                self._clients.append(client)
        return client.requester

    def _guards(self) -> dict[str, Any]:
        """The transport's answer size limit and redirect guard (transport.DeadlineAdapter)."""
        return {
            "size_limit": self._settings.answer_size_limit,
            "home": urlsplit(self.api_url).hostname,
            "allow_private": self.allow_private,
        }

    def _sender(self) -> DirectSender:
        """This thread's sender of plain requests (GraphQL, trees, /rate_limit): PyGithub's
        headers (token, user agent, JSON), its timeout, the same per-request deadline, size
        limit and redirect guard, and the proxies and CA bundle read at the start."""
        sender: DirectSender | None = getattr(self._local, "sender", None)
        if sender is None:
            headers = dict(requests.utils.default_headers())
            headers.update({"User-Agent": USER_AGENT, "Accept": ACCEPT})
            if self._token:
                headers["Authorization"] = f"token {self._token}"
            sender = DirectSender(
                DeadlineAdapter(self._deadline, max_retries=0, **self._guards()),
                headers=headers,
                timeout=self._timeout,
                verify=self.verify,
                proxies=self.proxies,
            )
            self._local.sender = sender
            with self._clients_lock:
                self._clients.append(sender)
        return sender

    def _plain(
        self, verb: str, url: str, headers: dict[str, str] | None, input: Any
    ) -> tuple[int, dict[str, Any], str]:
        """One request through this thread's sender: (status, headers, body); redirects are
        not followed (as PyGithub's requestJson)."""
        sent = dict(headers) if headers else {}
        if self._app_tokens is not None:  # the current installation token, renewed in time
            sent["Authorization"] = f"token {self._app_tokens.token()}"
        body = None
        if input is not None:
            sent["Content-Type"] = "application/json"
            body = json.dumps(input).encode()
        status, resp_headers, content = self._sender().send(verb, url, sent, body)
        return status, resp_headers, content.decode("utf-8", errors="replace")  # UTF-8 JSON

    def close(self) -> None:
        with self._clients_lock:
            for client in self._clients:
                client.close()
            self._clients.clear()
        if self._app_tokens is not None:
            self._app_tokens.close()

    def absolute(self, path: str) -> str:
        return path if path.startswith("http") else f"{self.api_url}{path}"

    def _redact(self, text: str) -> str:
        issued = self._app_tokens.issued if self._app_tokens else ()
        return redact(text, self._token, *issued)

    def safe_message(self, text: str, limit: int = MAX_MESSAGE) -> str:
        """An upstream or exception string fit to store and report: redacted first, then cut
        (a token straddling the cut would otherwise leave a piece of itself behind). Only a
        window past the cut is redacted: redaction reads every character it is given, and a
        GraphQL answer is 100 KB (its redaction was two thirds of an unchanged night's CPU);
        a secret straddling the cut lies inside the window, anything past it is cut anyway."""
        return _cut(self._redact(text[: limit + REDACT_WINDOW]), limit)

    # -- per-project deadline --------------------------------------------------------------

    def start_project(self) -> None:
        """Start this thread's project clock (``project_deadline`` seconds)."""
        self._local.project_started = time.monotonic()

    def _check_project_clock(self, url: str) -> None:
        started = getattr(self._local, "project_started", None)
        limit = self.project_deadline
        if started is not None and limit is not None and time.monotonic() - started > limit:
            raise GitHubError(
                f"stopped: this project took longer than its {limit:g}s deadline "
                "(settings.project_deadline)",
                url,
            )

    # -- budget ------------------------------------------------------------------------------

    def refresh_budget(self) -> None:
        """Ask /rate_limit (free) so the first real request already knows the budget."""
        try:
            status, headers, body = self._plain("GET", self.absolute("/rate_limit"), None, None)
        except Exception as exc:  # the budget stays unknown; requests will tell us
            log.info("could not read /rate_limit: %s", self._redact(type(exc).__name__))
            return
        if status == 200:
            try:
                doc = json.loads(body)
                core = doc["resources"]["core"]
                self.core.update(
                    {f"x-ratelimit-{k}": core[k] for k in ("limit", "remaining", "reset")}
                )
                gql = doc["resources"].get("graphql")
                if gql:
                    self.graphql_budget.update(
                        {f"x-ratelimit-{k}": gql[k] for k in ("limit", "remaining", "reset")}
                    )
                return
            except (ValueError, KeyError, TypeError):
                pass
        self.core.update({k.lower(): v for k, v in headers.items()})

    def spare_requests(self) -> int | None:
        """Requests left above the reserve and those in flight, or None when unknown."""
        return self.core.spare(self._settings.budget_reserve)

    # -- requests ----------------------------------------------------------------------------

    def get_json(
        self,
        path: str,
        *,
        expect: type = dict,
        allow: tuple[int, ...] = (),
        immutable: bool = False,
        decode: Callable[[str], Any] = json.loads,
    ) -> ApiResponse:
        """GET with validators; a 304 replays the stored body. ``allow`` lists statuses that
        are answers rather than failures (404 for "no license", 409 for "empty repo").
        ``immutable``: the URL names content by its hash (a tree at a commit sha), so it is
        asked again only if that answer was lost: no validators kept, no store read or write,
        sent as a plain request (DirectSender). ``decode`` reads the body (parse.decode_tree:
        a tree's entries with only the fields read); its ValueError: an answer not JSON."""
        url = self.absolute(path)
        key = "" if immutable else cache_key("GET", url, ACCEPT, self._identity)
        cached = None if immutable else self._cache.get_response(key)
        headers = {"Accept": ACCEPT}
        if cached and cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached and cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified

        def attempt() -> ApiResponse:
            # an immutable answer needs none of PyGithub's REST machinery: a plain request
            # (same token, headers, deadline and budget) costs half its CPU, and a first audit
            # with a token then never imports PyGithub
            status, resp_headers, body = self._send(
                "GET", path, headers=headers, budget=self.core, plain=immutable
            )
            if status == 304 and cached is not None:
                self.stats.add(not_modified=1)
                data = self._parse(cached.body.decode(), expect, decode)
                return ApiResponse(200, data, url, True)
            if status in allow:
                return ApiResponse(status, None, url)
            self._raise_for_status(status, body, url)
            data = self._parse(body, expect, decode)
            if not immutable and (resp_headers.get("etag") or resp_headers.get("last-modified")):
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
        self, query: Query, *, retry_timeouts: bool = False
    ) -> tuple[int, dict[str, Any] | None, Callable[[], str]]:
        """POST one GraphQL document; returns (status, parsed body or None, short message):
        the message is made when asked for (redacting an answer's head costs 2 ms, and an
        answer that names every repository never needs it).

        Sent as a plain request (PyGithub's graphql_query raises on any error, and a
        batch needs the partial data). A 502/504 (GitHub's query timeout) is returned for the
        caller to shrink the batch, or retried like any 5xx when ``retry_timeouts`` says the
        batch cannot shrink any more."""
        url = self.graphql_url

        def attempt() -> tuple[int, dict[str, Any] | None, Callable[[], str]]:
            # 502/504 is how GitHub says a query timed out: the caller shrinks the batch
            status, _headers, body = self._send(
                "POST",
                url,
                input={"query": query.text, "variables": query.variables},
                budget=self.graphql_budget,
                answers=(502, 504),
                plain=True,
            )
            self.stats.add(graphql_queries=1)
            if status in (401, 403, 429):
                self._raise_for_status(status, body, url)
            if status in (502, 504):
                if retry_timeouts:
                    raise _Transient(f"HTTP {status} from GitHub (query timed out)")
                return status, None, lambda: f"HTTP {status} (GitHub timed out)"
            doc = self._parse(body, dict)
            rate = (doc.get("data") or {}).get("rateLimit") if doc.get("data") else None
            if isinstance(rate, dict):
                self.stats.add(graphql_points=int(rate.get("cost") or 0))
                if isinstance(rate.get("remaining"), int):
                    self.graphql_budget.update({"x-ratelimit-remaining": rate["remaining"]})
            return status, doc, cache(lambda: self.safe_message(_message(body), 80))  # once

        answer: tuple[int, dict[str, Any] | None, Callable[[], str]]
        answer = self._with_retries(attempt, url)
        return answer

    def _wait_if_paused(self) -> None:
        with self._gate:
            self._gate.wait_for(lambda: self._closers == 0, self._settings.max_retry_wait)

    def _close_gate(self) -> None:
        with self._gate:
            self._closers += 1

    def _open_gate(self) -> None:
        with self._gate:
            self._closers -= 1
            self._gate.notify_all()

    def _send(
        self,
        verb: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        input: Any = None,
        budget: RateBudget,
        answers: tuple[int, ...] = (),
        plain: bool = False,
    ) -> tuple[int, dict[str, Any], str]:
        """One request (through PyGithub, or this thread's sender when ``plain``); 5xx other
        than ``answers`` and transport failures are _Transient."""
        url = self.absolute(path)
        if self.stopped is not None:  # GitHub asked not to be asked again this audit
            raise BudgetExhausted(self.stopped, url)
        self._check_project_clock(url)
        self._wait_if_paused()
        graphql = verb == "POST"
        if self.pacer is not None:
            self.pacer.turn(graphql=graphql)
        if self._app_tokens is not None:  # exchanged (or refused: AppAuthError) before sending,
            self._app_tokens.token()  # never taken for a transport failure and retried
        budget.reserve(self._settings.budget_reserve, url)
        self.stats.add(requests=1)
        try:
            timed = self.pacer.timed(graphql=graphql) if self.pacer else nullcontext()
            with self._in_flight.taken(urgent=graphql), timed:
                if plain:
                    status, resp_headers, body = self._plain(verb, url, headers, input)
                else:
                    status, resp_headers, body = self._requester().requestJson(
                        verb, path, headers=headers, input=input
                    )
        except AnswerRefused as exc:  # too large, or a refused address: not worth a retry
            raise GitHubError(_cut(self._redact(str(exc))), url) from None
        except Exception as exc:  # connection reset, timeout, deadline, protocol error
            message = _cut(self._redact(_transport_message(exc)))
            if unresolved_name(exc):  # a name that does not resolve is not retried
                raise GitHubError(
                    f"{message}; not retried", url, unreachable=True, unresolved=True
                ) from None
            raise _Transient(message, unreachable=not _answered(exc)) from None
        finally:
            budget.release()
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
            # GitHub's own message names the runner's IP address: summarised, never copied
            raise BudgetExhausted(
                f"primary rate limit reached (HTTP {status}){_resets_at(headers)}", url, status
            )
        retry_after = headers.get("retry-after")
        if retry_after is not None or "secondary rate limit" in message.lower() or status == 429:
            self._secondary_limit(status, None if retry_after is None else str(retry_after), url)

    def _secondary_limit(self, status: int, retry_after: str | None, url: str) -> None:
        """A secondary limit met: waited out (every worker) once, if GitHub asks for no longer
        than ``max_retry_wait``; a longer wait, one that is no wait, or a second limit in the
        same audit stops GitHub for this audit (BudgetExhausted: the projects left are
        deferred), as GitHub asks of an integration, instead of retrying into the limit."""
        what = f"secondary rate limit (HTTP {status})"
        wait, shown = asked_wait(retry_after, self._now())
        limit = self._settings.max_retry_wait
        with self._gate:
            self._secondary += 1
            again = self._secondary > 1
        if wait is None:
            why = f"{what} with {shown}, which is no wait"
        elif wait > limit:
            why = (
                f"{what}: GitHub asked to wait {shown}, longer than github.max_retry_wait "
                f"({limit:g}s)"
            )
        elif again:
            why = f"{what} met a second time in this audit (GitHub asked to wait {shown})"
        else:
            raise _Transient(what, retry_after=wait, pause_all=True)
        stop = f"{why}; GitHub is not asked again this audit: the projects left wait for the next"
        with self._gate:
            self.stopped = self.stopped or stop
        raise BudgetExhausted(stop, url, status)

    def _raise_for_status(self, status: int, body: str, url: str) -> None:
        if status < 400:
            return
        message = self.safe_message(upstream_message(body))
        if status == 401 and self._app_tokens is not None:
            raise GitHubError(
                "GitHub rejected the App's installation token (HTTP 401): check that the App "
                "is still installed (GITHUB_APP_INSTALLATION_ID) and not suspended",
                url,
                status,
            )
        if status == 401:
            raise GitHubError(
                f"GitHub rejected the token (HTTP 401): check {self.credential}", url, status
            )
        raise GitHubError(f"HTTP {status}: {message}", url, status)

    @staticmethod
    def _parse(body: str, expect: type, decode: Callable[[str], Any] = json.loads) -> Any:
        try:
            data = decode(body)
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
        number = 0
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
                self.stats.add(retries=1)
                waited += delay
                if exc.pause_all:
                    self._close_gate()
                try:
                    self._sleep(delay)
                finally:
                    if exc.pause_all:
                        self._open_gate()
        raise GitHubError(
            f"{last} (gave up after {number + 1} attempt{'' if number == 0 else 's'}, "
            f"{waited:.1f}s of waiting)",
            url,
            unreachable=unreachable,
        )
