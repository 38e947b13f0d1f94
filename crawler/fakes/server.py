"""What every loopback fake shares: a threaded HTTP server that does not print a traceback when
a client hangs up, and a way to drop a connection without an answer (a "reset" fault)."""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import struct
import sys
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (killed, timed out, done), or refused our test certificate,
        is not the server's error."""
        if not isinstance(sys.exc_info()[1], ConnectionError | ssl.SSLError):
            super().handle_error(request, client_address)


def abort(handler: BaseHTTPRequestHandler) -> None:
    """Close the socket with an RST and no answer: the client sees a connection reset."""
    handler.close_connection = True
    conn = handler.connection
    with contextlib.suppress(OSError):
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        handler.rfile.close()
        conn.close()


class LoopbackService:
    """Serves one fake on 127.0.0.1 (a free port) from a thread: ``with FakeX(...) as x:``.

    A subclass names its ``server_class`` (a FakeServer subclass whose handler reads
    ``self.server.fake``) and ``handler``; ``base_url`` is set once it is started."""

    server_class: type[FakeServer] = FakeServer
    handler: type[BaseHTTPRequestHandler]
    base_url = ""
    _server: FakeServer | None = None
    _thread: threading.Thread | None = None

    def start(self) -> Self:
        if self._server is None:
            server = self.server_class(("127.0.0.1", 0), self.handler)
            server.fake = self  # type: ignore[attr-defined]
            self._server = server
            self.base_url = f"http://127.0.0.1:{server.server_address[1]}"
            self._thread = threading.Thread(
                target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
            self.drop_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def drop_connections(self) -> None:
        """Called once the server stopped: a fake that keeps clients' connections closes them."""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def compact_json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def send_answer(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes | None,
    headers: Mapping[str, str],
    content_type: str,
    *,
    truncate: bool = False,
) -> None:
    """One HTTP answer; ``truncate`` sends half the body and closes (a "cut off" fault)."""
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    if status != 304:
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body or b"")))
    if truncate:
        handler.send_header("Connection", "close")
        handler.close_connection = True
    handler.end_headers()
    if body and status != 304:
        with contextlib.suppress(ConnectionError):
            handler.wfile.write(body[: len(body) // 2] if truncate else body)
