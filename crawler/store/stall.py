"""A PostgreSQL server that stops answering must end the audit, not hang it for ever.

Server-side timeouts (``statement_timeout``, ``idle_in_transaction_session_timeout``) end work
the server still does; TCP keepalives notice a peer that is gone. Neither helps when the server
(or a proxy, a NAT, a frozen VM) keeps the connection open and acknowledges what is sent but
never answers: the client would wait in ``recv`` for ever. So every statement, commit and
rollback also runs under a client-side timer; when it fires, the connection's socket is shut
down, the blocked read returns at once, and the statement fails like a dropped connection.

``CRAWLER_DB_TIMEOUT`` (seconds, default 120) sets the statement timeout; the client gives the
server that plus a margin before it gives up.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError

log = logging.getLogger(__name__)
TIMEOUT_ENV = "CRAWLER_DB_TIMEOUT"
DEFAULT_TIMEOUT = 120.0  # seconds one statement may take (the server's statement_timeout)
CONNECT_TIMEOUT = 10  # seconds to open a connection (libpq's connect_timeout; 2 at least)
MARGIN = 5.0  # the client waits up to this much longer than the server's own timeout


def describe_error(exc: BaseException) -> str:
    """A database error in one line: the driver's own message, without the SQL statement or
    its parameters (they may hold upstream text)."""
    cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    first = next((line for line in lines if not line.startswith("[")), "")
    text = first or type(cause).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def db_timeout() -> float:
    """The statement timeout in seconds: ``CRAWLER_DB_TIMEOUT``, else 120."""
    value = os.environ.get(TIMEOUT_ENV, "").strip()
    try:
        seconds = float(value) if value else DEFAULT_TIMEOUT
    except ValueError:
        seconds = DEFAULT_TIMEOUT
    return seconds if 0.5 <= seconds <= 86_400 else DEFAULT_TIMEOUT


def postgres_connect_args(url: URL, timeout: float) -> dict[str, Any]:
    """libpq parameters: connect timeout, keepalives, and the server-side timeouts (added to
    any ``options`` the URL already carries, such as a search_path)."""
    millis = int(timeout * 1000)
    settings = f"-c statement_timeout={millis} -c idle_in_transaction_session_timeout={millis * 2}"
    given = url.query.get("options")
    given = given if isinstance(given, str) else " ".join(given or ())
    return {
        "connect_timeout": max(2, min(CONNECT_TIMEOUT, round(timeout))),
        "keepalives": 1,
        "keepalives_idle": 30,
        "keepalives_interval": 10,
        "keepalives_count": 3,
        "options": f"{given} {settings}".strip(),
    }


class _Timers:
    """The DBAPI connections busy with a statement, each with the moment to give up on it;
    one daemon thread looks at them every so often."""

    def __init__(self) -> None:
        self._due: dict[int, tuple[float, Any]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self, dbapi_connection: Any, seconds: float) -> None:
        with self._lock:
            self._due[id(dbapi_connection)] = (time.monotonic() + seconds, dbapi_connection)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="db-stall", daemon=True)
                self._thread.start()

    def stop(self, dbapi_connection: Any) -> None:
        with self._lock:
            self._due.pop(id(dbapi_connection), None)

    def _run(self) -> None:
        idle = 0
        while idle < 600:  # an idle minute: the next statement starts a new thread
            time.sleep(0.1)
            now = time.monotonic()
            with self._lock:
                late = [conn for when, conn in self._due.values() if when <= now]
                for conn in late:
                    self._due.pop(id(conn), None)
                idle = idle + 1 if not self._due else 0
                if idle >= 600:
                    self._thread = None
            for conn in late:
                _shut_down(conn)


_TIMERS = _Timers()


def _shut_down(dbapi_connection: Any) -> None:
    """Shut the connection's socket down: a read blocked on it returns at once."""
    try:
        fd = dbapi_connection.pgconn.socket
        sock = socket.socket(fileno=os.dup(fd))
    except Exception:  # already closed
        return
    log.error("the database did not answer in time: dropping the connection")
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


def guard(engine: Engine, timeout: float) -> None:
    """Give every statement, commit and rollback on ``engine`` (PostgreSQL) ``timeout`` plus
    a margin, client-side."""
    seconds = timeout + min(MARGIN, timeout)

    def dbapi(conn: Any) -> Any:
        proxied = getattr(conn, "connection", None) if conn is not None else None
        return getattr(proxied, "dbapi_connection", None)

    def busy(conn: Any, *_args: Any) -> None:
        if (target := dbapi(conn)) is not None:
            _TIMERS.start(target, seconds)

    def done(conn: Any, *_args: Any) -> None:
        if (target := dbapi(conn)) is not None:
            _TIMERS.stop(target)

    event.listen(engine, "before_cursor_execute", busy)
    event.listen(engine, "after_cursor_execute", done)
    event.listen(engine, "handle_error", lambda context: done(context.connection))
    dialect = engine.dialect
    for name in ("do_commit", "do_rollback"):
        setattr(dialect, name, _timed(getattr(dialect, name), seconds))


def _timed(action: Any, seconds: float) -> Any:
    def run(dbapi_connection: Any) -> None:
        _TIMERS.start(dbapi_connection, seconds)
        try:
            action(dbapi_connection)
        finally:
            _TIMERS.stop(dbapi_connection)

    return run
