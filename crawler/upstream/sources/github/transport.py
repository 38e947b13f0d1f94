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
from collections.abc import Callable
from typing import Any

from requests import PreparedRequest, Response
from requests.adapters import HTTPAdapter
from requests.exceptions import ConnectionError as RequestsConnectionError
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

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
        from urllib.parse import urlsplit

        from crawler.upstream.pages import PageFetchError, check_url

        if self.home is None or urlsplit(url).hostname == self.home:
            return
        try:
            check_url(url, allow_private=self.allow_private)
        except PageFetchError as exc:
            raise AnswerRefused(f"GitHub redirected to a refused address: {exc}") from None

    def _read_capped(self, response: Response) -> None:
        """Read the body now, decompressed, counting; refuse it past the size limit."""
        if self.size_limit is None:
            _ = response.content
            return
        limit = self.size_limit
        hint = "raise github.answer_size_limit in sources.yaml if it is legitimate"
        length = response.headers.get("content-length", "").strip()
        chunks: list[bytes] = []
        total = int(length) if length.isdigit() else 0
        if total <= limit:
            total = 0
            for chunk in response.iter_content(chunk_size=64 * 1024):
                total += len(chunk)
                if total > limit:
                    break
                chunks.append(chunk)
        if total > limit:
            response.close()
            raise AnswerRefused(
                f"GitHub's answer is larger than the answer size limit of {limit} bytes once "
                f"decompressed (stopped reading; {hint})"
            )
        response._content = b"".join(chunks)  # what ``response.content`` would have read

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
        sockets: list[socket.socket] = []
        fired = threading.Event()

        def expire() -> None:
            fired.set()
            for sock in list(sockets):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

        _active.sockets = sockets
        timer = _WATCHDOG.alarm(self.deadline, expire)
        try:
            self._check_host(str(request.url))
            response = super().send(request, *args, **kwargs)
            if not kwargs.get("stream"):
                self._read_capped(response)  # the body too, inside the deadline
        except AnswerRefused:
            raise
        except Exception as exc:
            if fired.is_set():
                raise DeadlineExceeded(
                    f"no complete answer within the {self.deadline:g}s request deadline"
                ) from None
            raise exc
        finally:
            timer.cancel()
            _active.sockets = None
        if fired.is_set():  # the answer may have been cut short: do not trust it
            response.close()
            raise DeadlineExceeded(f"no complete answer within the {self.deadline:g}s deadline")
        _drop_garbled_rate_headers(response)
        return response


def _drop_garbled_rate_headers(response: Response) -> None:
    """PyGithub reads X-RateLimit-* with int(float(…)): a value such as "soon" would fail an
    answered request as if GitHub had not answered. Such a header says nothing: it goes."""
    for name in [n for n in response.headers if n.lower().startswith("x-ratelimit-")]:
        if name.lower() != "x-ratelimit-resource" and rate_number(response.headers[name]) is None:
            log.info("ignoring GitHub's header %s: not a plain number", name)
            del response.headers[name]


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
