"""What every loopback fake shares: a threaded HTTP server that does not print a traceback when
a client hangs up, and a way to drop a connection without an answer (a "reset" fault)."""

from __future__ import annotations

import contextlib
import socket
import struct
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (killed, timed out, done) is not the server's error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def abort(handler: BaseHTTPRequestHandler) -> None:
    """Close the socket with an RST and no answer: the client sees a connection reset."""
    handler.close_connection = True
    conn = handler.connection
    with contextlib.suppress(OSError):
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        handler.rfile.close()
        conn.close()
