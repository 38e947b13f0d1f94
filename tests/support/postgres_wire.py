"""A loopback server that speaks just enough of PostgreSQL's wire protocol to refuse a password,
as a server with `scram-sha-256`/`password` authentication does: the test server of this
machine trusts every local connection (pg_hba.conf), so a wrong password cannot be met there.

It declines SSL and GSS encryption, asks for a cleartext password, reads it, and answers
``FATAL 28P01 password authentication failed for user "…"``, as PostgreSQL words it."""

from __future__ import annotations

import socket
import struct
import threading
from types import TracebackType

SSL_REQUEST = 80877103
GSS_REQUEST = 80877104


def _read(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _error(user: str) -> bytes:
    fields = b"".join(
        code + text.encode() + b"\0"
        for code, text in (
            (b"S", "FATAL"),
            (b"V", "FATAL"),
            (b"C", "28P01"),
            (b"M", f'password authentication failed for user "{user}"'),
        )
    )
    body = fields + b"\0"
    return b"E" + struct.pack("!i", len(body) + 4) + body


class PasswordRefusingPostgres:
    """``with PasswordRefusingPostgres() as server: server.port``; ``server.passwords`` holds
    the passwords it was sent."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = int(self.sock.getsockname()[1])
        self.passwords: list[str] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    self._answer(conn)
                except (ConnectionError, OSError, struct.error):
                    continue

    def _answer(self, conn: socket.socket) -> None:
        while True:
            (length,) = struct.unpack("!i", _read(conn, 4))
            body = _read(conn, length - 4)
            (code,) = struct.unpack("!i", body[:4])
            if code in (SSL_REQUEST, GSS_REQUEST):
                conn.sendall(b"N")  # no encryption: go on in plain text
                continue
            break
        words = body[4:].split(b"\0")
        params = dict(zip(words[::2], words[1::2], strict=False))
        user = params.get(b"user", b"").decode()
        conn.sendall(b"R" + struct.pack("!ii", 8, 3))  # AuthenticationCleartextPassword
        kind = _read(conn, 1)
        (length,) = struct.unpack("!i", _read(conn, 4))
        password = _read(conn, length - 4)
        if kind == b"p":
            self.passwords.append(password.rstrip(b"\0").decode())
        conn.sendall(_error(user))

    def __enter__(self) -> PasswordRefusingPostgres:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.sock.close()
