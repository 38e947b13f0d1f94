"""A recording HTTP proxy on loopback, and a TLS wrapper for the loopback fakes.

``RecordingProxy`` is what a company proxy is to the crawler: absolute-URI requests
(``GET http://host/path``, how a client sends plain HTTP through ``HTTP_PROXY``) are forwarded,
and ``CONNECT host:port`` (how a client sends HTTPS through ``HTTPS_PROXY``) opens a tunnel
whose bytes it relays without reading them. Each request is recorded, so a test can say which
hosts went through the proxy.

``serve_tls`` makes a started fake answer HTTPS with a self-signed certificate for 127.0.0.1
and localhost: the certificate file stands for a company CA (``SSL_CERT_FILE``).
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import ipaddress
import select
import socket
import ssl
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from crawler.fakes.server import FakeServer, LoopbackService

_HOP_BY_HOP = {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "te"}


@dataclass(frozen=True)
class ProxiedRequest:
    method: str  # "CONNECT" for a tunnel, else the forwarded request's method
    host: str  # host:port the client asked for
    path: str  # "" for a tunnel: its content is encrypted
    user_agent: str = ""  # of a forwarded request


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads ``requests``."""

    def _record(self, method: str, host: str, path: str) -> None:
        proxy: RecordingProxy = self.server.fake
        with proxy.lock:
            agent = self.headers.get("user-agent", "") if method != "CONNECT" else ""
            proxy.requests.append(ProxiedRequest(method, host, path, agent))

    def do_CONNECT(self) -> None:
        host, _, port = self.path.rpartition(":")
        self._record("CONNECT", self.path, "")
        try:
            upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        except (OSError, ValueError):
            self.send_error(502)
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.close_connection = True
        sockets = [self.connection, upstream]
        with upstream:
            while True:
                readable, _, _ = select.select(sockets, [], [], 10)
                if not readable:
                    return
                for sock in readable:
                    try:
                        data = sock.recv(65536)
                    except OSError:
                        return
                    if not data:
                        return
                    other = upstream if sock is self.connection else self.connection
                    other.sendall(data)

    def _forward(self) -> None:
        parts = urlsplit(self.path)
        if parts.scheme != "http" or not parts.hostname:
            self.send_error(400, "absolute http:// URL expected")
            return
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._record(self.command, parts.netloc, target)
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=30)
        try:
            conn.request(self.command, target, body, headers)
            answer = conn.getresponse()
            data = answer.read()
        except OSError:
            self.send_error(502)
            return
        finally:
            conn.close()
        self.send_response(answer.status, answer.reason)
        for key, value in answer.getheaders():
            if key.lower() not in _HOP_BY_HOP | {"transfer-encoding", "content-length"}:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            with contextlib.suppress(ConnectionError):
                self.wfile.write(data)

    do_GET = do_POST = do_HEAD = do_PATCH = do_PUT = do_DELETE = _forward


class RecordingProxy(LoopbackService):
    """``with RecordingProxy() as proxy:``; ``proxy.base_url`` is the ``HTTP(S)_PROXY`` value."""

    handler = _ProxyHandler
    server_class = FakeServer

    def __init__(self) -> None:
        self.requests: list[ProxiedRequest] = []
        self.lock = threading.Lock()

    def hosts(self) -> set[str]:
        with self.lock:
            return {r.host for r in self.requests}


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """(certificate, key) PEM files for 127.0.0.1 and localhost, valid for a day."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "crawler test CA")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "test-ca.pem", folder / "test-ca.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def serve_tls(fake: LoopbackService, cert: Path, key: Path) -> str:
    """Switch a started fake to HTTPS (before any request); its new ``https://`` base URL."""
    server = fake._server
    assert server is not None, "start the fake first"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    # the handshake runs in the handler's thread, not in the accepting loop
    server.socket = context.wrap_socket(
        server.socket, server_side=True, do_handshake_on_connect=False
    )
    fake.base_url = fake.base_url.replace("http://", "https://", 1)
    return fake.base_url
