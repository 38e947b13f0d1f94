"""One wall-clock deadline per GitHub request, headers included.

requests (under PyGithub) only has a read timeout, which restarts with every byte: a server
that drips its header lines one per second is never cut off. Here every request runs under a
timer; when it fires, the sockets the request is using are shut down, the blocked read returns
at once, and the request fails as ``DeadlineExceeded``. One watchdog thread keeps every
request's timer (a thread per request would cost more than a conditional GET does).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from requests import PreparedRequest, Response
from requests.adapters import HTTPAdapter
from requests.exceptions import (
    ChunkedEncodingError,
    ConnectTimeout,
    ContentDecodingError,
    InvalidURL,
    ReadTimeout,
    RequestException,
    RetryError,
)
from requests.exceptions import ConnectionError as RequestsConnectionError
from requests.exceptions import InvalidHeader as RequestsInvalidHeader
from requests.exceptions import ProxyError as RequestsProxyError
from requests.exceptions import SSLError as RequestsSSLError
from urllib3 import BaseHTTPResponse, HTTPHeaderDict
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    ClosedPoolError,
    ConnectTimeoutError,
    DecodeError,
    InvalidHeader,
    LocationValueError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    ReadTimeoutError,
    ResponseError,
    SSLError,
)
from urllib3.util import Timeout

from crawler.upstream.http import rate_number

log = logging.getLogger(__name__)
_active = threading.local()  # the sockets the current thread's request uses


class DeadlineExceeded(RequestsConnectionError):
    """No complete answer within the request's deadline."""


class _Alarm:
    """An action to run once, unless cancelled first: once ``cancel()`` returns, the action
    has either run to its end or never will (it may not touch a connection reused since)."""

    __slots__ = ("_action", "_lock", "cancelled")

    def __init__(self, action: Callable[[], None]) -> None:
        self._action: Callable[[], None] | None = action
        self._lock = threading.Lock()
        self.cancelled = False

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            self._action = None

    def fire(self) -> None:
        with self._lock:
            action, self._action = self._action, None
            if action is not None and not self.cancelled:
                action()


class _Watchdog:
    """Runs each alarm's action once its time comes, unless it was cancelled first; one daemon
    thread for every request of the process, started at the first alarm."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, _Alarm]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def alarm(self, seconds: float, action: Callable[[], None]) -> _Alarm:
        alarm = _Alarm(action)
        with self._wake:
            heapq.heappush(self._due, (time.monotonic() + seconds, next(self._order), alarm))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="github-deadlines", daemon=True
                )
                self._thread.start()
            elif self._due[0][2] is alarm:
                self._wake.notify()
        return alarm

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._due and self._due[0][2].cancelled:
                    heapq.heappop(self._due)
                if not self._due:
                    self._wake.wait(60.0)
                    if not self._due:
                        self._thread = None  # idle for a minute: the next alarm starts one
                        return
                    continue
                when, _, alarm = self._due[0]
                left = when - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                heapq.heappop(self._due)
            try:
                alarm.fire()
            except Exception:  # an alarm must never take the watchdog down
                log.warning("request deadline action failed", exc_info=True)


_WATCHDOG = _Watchdog()


class _Watch:
    """One request's deadline: ``with _Watch(seconds) as watch:`` around the request; the
    sockets the thread's request uses meanwhile are shut down (by the watchdog's thread) when
    the deadline passes, and a failure after that is DeadlineExceeded. ``confirm`` afterwards:
    an answer the deadline cut short is not trusted."""

    __slots__ = ("_timer", "deadline", "fired", "sockets")

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.fired = False
        self.sockets: list[socket.socket] = []

    def expire(self) -> None:
        self.fired = True
        for sock in list(self.sockets):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _Watch:
        self._timer = _WATCHDOG.alarm(self.deadline, self.expire)
        _active.sockets = self.sockets
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, _tb: Any
    ) -> None:
        self._timer.cancel()  # from here on, the sockets are left alone
        _active.sockets = None
        if self.fired and isinstance(exc, Exception) and not isinstance(exc, AnswerRefused):
            raise DeadlineExceeded(
                f"no complete answer within the {self.deadline:g}s request deadline"
            ) from None

    def confirm(self, close: Callable[[], None]) -> None:
        if self.fired:  # the answer may have been cut short: do not trust it
            close()
            raise DeadlineExceeded(f"no complete answer within the {self.deadline:g}s deadline")


def _track(sock: socket.socket | None) -> None:
    sockets: list[socket.socket] | None = getattr(_active, "sockets", None)
    if sockets is not None and sock is not None:
        sockets.append(sock)


class _TrackedHTTPConnection(HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _track(self.sock)

    def request(self, *args: Any, **kwargs: Any) -> None:  # a reused keep-alive connection
        _track(self.sock)
        super().request(*args, **kwargs)


class _TrackedHTTPSConnection(HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _track(self.sock)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _track(self.sock)
        super().request(*args, **kwargs)


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _TrackedHTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _TrackedHTTPSConnection


class AnswerRefused(RequestsConnectionError):
    """An answer not read: larger than the size limit, or from a refused address."""


class DeadlineAdapter(HTTPAdapter):
    """An HTTPAdapter whose every ``send`` ends by ``deadline`` seconds, answer or not; with
    ``size_limit``, a body that passes it once decompressed is refused as it streams in; with
    ``home``, a request to any other host (a redirect) goes through the page fetcher's guard
    against private addresses first."""

    def __init__(
        self,
        deadline: float,
        *,
        size_limit: int | None = None,
        home: str | None = None,
        allow_private: bool = False,
        **kwargs: Any,
    ) -> None:
        self.deadline = deadline
        self.size_limit = size_limit
        self.home = home
        self.allow_private = allow_private
        super().__init__(**kwargs)

    def _check_host(self, url: str) -> None:
        if self.home is None or urlsplit(url).hostname == self.home:
            return
        from crawler.upstream.pages import PageFetchError, check_url

        try:
            check_url(url, allow_private=self.allow_private)
        except PageFetchError as exc:
            raise AnswerRefused(f"GitHub redirected to a refused address: {exc}") from None

    def _read_capped(self, response: Response) -> None:
        """Read the body now, decompressed, counting; refuse it past the size limit."""
        if self.size_limit is None:
            _ = response.content
            return
        response._content = _capped_body(  # what ``response.content`` would have read
            self.size_limit,
            response.headers.get("content-length", ""),
            lambda: response.iter_content(chunk_size=64 * 1024),
            response.close,
        )

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        """Through ``HTTP(S)_PROXY`` too: the proxy's connections are tracked the same way (a
        SOCKS proxy's manager has pool classes of its own and keeps them)."""
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
        return manager

    def send(self, request: PreparedRequest, *args: Any, **kwargs: Any) -> Response:
        with _Watch(self.deadline) as watch:
            self._check_host(str(request.url))
            response = super().send(request, *args, **kwargs)
            if not kwargs.get("stream"):
                self._read_capped(response)  # the body too, inside the deadline
        watch.confirm(response.close)
        _drop_garbled_rate_headers(response)
        return response


def _drop_garbled_rate_headers(response: Response) -> None:
    """PyGithub reads X-RateLimit-* with int(float(…)): a value such as "soon" would fail an
    answered request as if GitHub had not answered. Such a header says nothing: it goes."""
    for name in _garbled_rate_headers(response.headers):
        del response.headers[name]


def _garbled_rate_headers(headers: Mapping[str, str]) -> list[str]:
    """The names of the X-RateLimit-* headers (but -Resource) whose value is not a plain
    number, each logged: they say nothing."""
    garbled = [
        name
        for name, value in headers.items()
        if name.lower().startswith("x-ratelimit-")
        and name.lower() != "x-ratelimit-resource"
        and rate_number(value) is None
    ]
    for name in garbled:
        log.info("ignoring GitHub's header %s: not a plain number", name)
    return garbled


class DirectSender:
    """Plain requests (trees at a commit, GraphQL, /rate_limit) sent straight to urllib3's pool,
    under the adapter's every rule: its deadline, answer size limit and redirect guard, its
    pools (tracked connections, the TLS settings requests would give them, the proxy the
    environment names for the host, read once by the caller), without requests' per-request
    machinery (preparing, cookies, a Response and two header dictionaries: half a tree read's
    CPU). Failures are raised as the requests exceptions ``HTTPAdapter.send`` and
    ``Response.iter_content`` raise for them, so they read the same. Not thread-safe: one a
    thread, as a requests session."""

    def __init__(
        self,
        adapter: DeadlineAdapter,
        *,
        headers: dict[str, str],
        timeout: float,
        verify: bool | str,
        proxies: dict[str, str],
    ) -> None:
        self.adapter = adapter
        self.headers = headers  # sent with every request, under the request's own
        self._timeout = Timeout(connect=timeout, read=timeout)
        self.verify = verify
        self.proxies = proxies
        self._routes: dict[str, tuple[HTTPConnectionPool, bool]] = {}  # origin: pool, absolute

    def _route(self, url: str) -> tuple[HTTPConnectionPool, str]:
        """The pool for ``url``'s origin and the request target to send it: what requests'
        ``HTTPAdapter.send`` chooses, worked out once an origin."""
        scheme, _, rest = url.partition("://")
        host, slash, path = rest.partition("/")
        origin = f"{scheme}://{host}"
        route = self._routes.get(origin)
        if route is None or route[0].pool is None:  # new, or closed (evicted from the manager)
            probe = PreparedRequest()
            probe.prepare(method="GET", url=origin + "/")
            try:
                pool = self.adapter.get_connection_with_tls_context(
                    probe, self.verify, proxies=self.proxies
                )
            except LocationValueError as exc:
                raise InvalidURL(exc) from exc
            self.adapter.cert_verify(pool, origin, self.verify, None)
            # a plain-HTTP proxy is sent the whole URL; otherwise the path
            absolute = self.adapter.request_url(probe, self.proxies) != probe.path_url
            route = self._routes[origin] = (pool, absolute)
        pool, absolute = route
        return pool, url if absolute else slash + path

    def send(
        self, method: str, url: str, headers: dict[str, str], body: bytes | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """(status, headers with lower-case names, body) of one request; redirects are not
        followed."""
        adapter = self.adapter
        with _Watch(adapter.deadline) as watch:
            adapter._check_host(url)
            pool, target = self._route(url)
            try:
                response = pool.urlopen(
                    method,
                    target,
                    body=body,
                    headers={**self.headers, **headers},
                    redirect=False,
                    assert_same_host=False,
                    preload_content=False,
                    decode_content=False,
                    retries=adapter.max_retries,
                    timeout=self._timeout,
                    chunked=False,
                )
            except Exception as exc:
                mapped = _sending_error(exc)
                if mapped is exc:
                    raise
                raise mapped from exc
            content = self._read(response)
        watch.confirm(response.close)
        return response.status, _header_dict(response.headers), content

    def _read(self, response: BaseHTTPResponse) -> bytes:
        """The body, decompressed, counted as it streams in and refused past the size limit
        (DeadlineAdapter._read_capped's rule)."""
        try:
            return _capped_body(
                self.adapter.size_limit,
                response.headers.get("content-length", ""),
                lambda: response.stream(64 * 1024, decode_content=True),
                response.close,
            )
        except (ProtocolError, DecodeError, ReadTimeoutError, SSLError) as exc:
            raise _reading_error(exc) from exc

    def close(self) -> None:
        self.adapter.close()


def _capped_body(
    limit: int | None,
    length: str,
    chunks: Callable[[], Iterable[bytes]],
    close: Callable[[], None],
) -> bytes:
    """A body read as it streams in (``chunks``: decompressed), counted and refused past
    ``limit``: before reading when its content-length says so, else at the chunk that
    crosses it; ``close`` drops the connection of a refused answer."""
    length = length.strip()
    if limit is not None and length.isdigit() and int(length) > limit:
        close()
        raise _too_large(limit)
    read: list[bytes] = []
    total = 0
    for chunk in chunks():
        total += len(chunk)
        if limit is not None and total > limit:
            close()
            raise _too_large(limit)
        read.append(chunk)
    return b"".join(read)


def _too_large(limit: int) -> AnswerRefused:
    return AnswerRefused(
        f"GitHub's answer is larger than the answer size limit of {limit} bytes once "
        "decompressed (stopped reading; raise github.answer_size_limit in sources.yaml if it "
        "is legitimate)"
    )


def _header_dict(headers: HTTPHeaderDict) -> dict[str, str]:
    """Lower-case names, repeated headers joined (as requests' headers read them); a rate
    header that is not a plain number dropped (_drop_garbled_rate_headers)."""
    found = {name.lower(): value for name, value in headers.itermerged()}
    for name in _garbled_rate_headers(found):
        del found[name]
    return found


def _sending_error(exc: Exception) -> Exception:
    """The exception requests' ``HTTPAdapter.send`` raises for urllib3's ``exc``."""
    if isinstance(exc, RequestException):
        return exc
    if isinstance(exc, (ProtocolError, OSError, ClosedPoolError)):
        return RequestsConnectionError(exc)
    if isinstance(exc, MaxRetryError):
        reason = exc.reason
        if isinstance(reason, ConnectTimeoutError) and not isinstance(reason, NewConnectionError):
            return ConnectTimeout(exc)
        if isinstance(reason, ResponseError):
            return RetryError(exc)
        if isinstance(reason, ProxyError):
            return RequestsProxyError(exc)
        if isinstance(reason, SSLError):
            return RequestsSSLError(exc)
        return RequestsConnectionError(exc)
    if isinstance(exc, ProxyError):
        return RequestsProxyError(exc)
    if isinstance(exc, SSLError):
        return RequestsSSLError(exc)
    if isinstance(exc, ReadTimeoutError):
        return ReadTimeout(exc)
    if isinstance(exc, InvalidHeader):
        return RequestsInvalidHeader(exc)
    return exc


def _reading_error(exc: Exception) -> Exception:
    """The exception requests' ``Response.iter_content`` raises for urllib3's ``exc``."""
    if isinstance(exc, ProtocolError):
        return ChunkedEncodingError(exc)
    if isinstance(exc, DecodeError):
        return ContentDecodingError(exc)
    if isinstance(exc, ReadTimeoutError):
        return RequestsConnectionError(exc)
    return RequestsSSLError(exc)


def install_deadline(github: Any, deadline: float, **options: Any) -> bool:
    """Mount the deadline (and the adapter's other ``options``) on a PyGithub client's HTTP
    session. PyGithub keeps that session on
    a private connection object; if a future version moves it, the audit still runs, with
    only the read timeout, and says so in the log."""
    requester = getattr(github, "requester", None)
    create = getattr(requester, "_Requester__createConnection", None)
    if create is None:
        log.warning("PyGithub's connection is not reachable: GitHub requests have no deadline")
        return False
    connection = create()
    session = getattr(connection, "session", None)
    if session is None:
        log.warning("PyGithub's session is not reachable: GitHub requests have no deadline")
        return False
    adapter = DeadlineAdapter(deadline, max_retries=0, **options)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return True
