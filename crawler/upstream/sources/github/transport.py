"""One wall-clock deadline per GitHub request, headers included.

requests (under PyGithub) only has a read timeout, which restarts with every byte: a server
that drips its header lines one per second is never cut off. Here every request runs under a
timer; when it fires, the sockets the request is using are shut down, the blocked read returns
at once, and the request fails as ``DeadlineExceeded``.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from typing import Any

from requests import PreparedRequest, Response
from requests.adapters import HTTPAdapter
from requests.exceptions import ConnectionError as RequestsConnectionError
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

log = logging.getLogger(__name__)
_active = threading.local()  # the sockets the current thread's request uses


class DeadlineExceeded(RequestsConnectionError):
    """No complete answer within the request's deadline."""


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


class DeadlineAdapter(HTTPAdapter):
    """An HTTPAdapter whose every ``send`` ends by ``deadline`` seconds, answer or not."""

    def __init__(self, deadline: float, **kwargs: Any) -> None:
        self.deadline = deadline
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}

    def send(self, request: PreparedRequest, *args: Any, **kwargs: Any) -> Response:
        sockets: list[socket.socket] = []
        fired = threading.Event()

        def expire() -> None:
            fired.set()
            for sock in list(sockets):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

        _active.sockets = sockets
        timer = threading.Timer(self.deadline, expire)
        timer.daemon = True
        timer.start()
        try:
            response = super().send(request, *args, **kwargs)
            if not kwargs.get("stream"):
                _ = response.content  # the body too, inside the deadline
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
        return response


def install_deadline(github: Any, deadline: float) -> bool:
    """Mount the deadline on a PyGithub client's HTTP session. PyGithub keeps that session on
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
    adapter = DeadlineAdapter(deadline, max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return True
