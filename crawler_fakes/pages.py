"""A fake vendor documentation site on loopback, for tests and demos. Standard library only.

    with FakePageServer() as site:
        site.set_page("/hw.html", b"<table>...</table>", "text/html", charset="utf-8")
        fetcher.fetch(site.url("/hw.html"))
        assert site.requests[-1].status == 200

Every page gets a strong ETag (the body's hash) unless ``etag=False``; a request whose
``If-None-Match`` (or ``If-Modified-Since`` equal to the page's ``last_modified``) matches is
answered 304. ``redirect`` adds a 3xx hop. ``drip_headers=(n, s)`` sends n extra header lines
s seconds apart before the rest of the answer, ``drip_body=s`` sends the body 16 bytes at a
time s seconds apart (servers that are slow, never silent). The request
log records each request's path, answer status and whether it was conditional;
``max_in_flight`` the highest number of requests served at once (to check per-host concurrency
limits).
"""

from __future__ import annotations

import gzip as gzip_module
import hashlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from crawler_fakes.server import FakeServer


@dataclass(frozen=True)
class FakePage:
    body: bytes
    content_type: str = "text/html"
    charset: str | None = None
    gzip: bool = False
    etag: bool = True
    delay: float = 0.0
    status: int = 200
    last_modified: str | None = None
    send_length: bool = True  # False: no Content-Length, body ends when the connection closes
    headers: tuple[tuple[str, str], ...] = ()
    drip_headers: tuple[int, float] | None = None  # (lines, seconds between them) before the rest
    drip_body: float = 0.0  # seconds between the body's 16-byte pieces
    head_status: int | None = None  # what HEAD answers instead (405: a host refusing HEAD)

    @property
    def etag_value(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    path: str
    status: int
    conditional: bool  # If-None-Match or If-Modified-Since was sent
    headers: dict[str, str] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self._serve(send_body=False)

    def do_GET(self) -> None:
        self._serve(send_body=True)

    def _serve(self, *, send_body: bool) -> None:
        site = self.server.site
        with site._lock:
            site._in_flight += 1
            site.max_in_flight = max(site.max_in_flight, site._in_flight)
        try:
            self._answer(site, send_body=send_body)
        finally:
            with site._lock:
                site._in_flight -= 1

    def _answer(self, site: FakePageServer, *, send_body: bool) -> None:
        path = self.path.split("?", 1)[0]
        page = site._pages.get(path, site.fallback)
        headers = {k.lower(): v for k, v in self.headers.items()}
        inm, ims = headers.get("if-none-match"), headers.get("if-modified-since")
        status = 404 if page is None else page.status
        if page is not None and self.command == "HEAD" and page.head_status is not None:
            status = page.head_status
        if page is not None:
            if page.delay:
                time.sleep(page.delay)
            tags = {t.strip().removeprefix("W/") for t in (inm or "").split(",")}
            if status == 200 and (
                (page.etag and (page.etag_value in tags or "*" in tags))
                or (inm is None and ims is not None and ims == page.last_modified)
            ):
                status = 304
        site._log(LoggedRequest(self.command, self.path, status, bool(inm or ims), headers))
        self.send_response(status)
        if page is not None and page.drip_headers and not self._drip(*page.drip_headers):
            return
        if page is None:
            body = b"not found"
            self.send_header("Content-Type", "text/plain")
        else:
            body = b"" if status == 304 else page.body
            ctype = page.content_type + (f"; charset={page.charset}" if page.charset else "")
            self.send_header("Content-Type", ctype)
            if page.etag:
                self.send_header("ETag", page.etag_value)
            if page.last_modified:
                self.send_header("Last-Modified", page.last_modified)
            for name, value in page.headers:
                self.send_header(name, value)
            if page.gzip and body:
                body = gzip_module.compress(body)
                self.send_header("Content-Encoding", "gzip")
        if page is not None and not page.send_length:
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body and body:
            try:
                step = 16 if page is not None and page.drip_body else len(body)
                for start in range(0, len(body), step):
                    self.wfile.write(body[start : start + step])
                    if page is not None and page.drip_body:
                        time.sleep(page.drip_body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (size cap)
                self.close_connection = True

    def _drip(self, lines: int, interval: float) -> bool:
        """Send ``lines`` header lines one at a time (a slow-loris server); False when the
        client hung up."""
        try:
            self.flush_headers()
            for n in range(lines):
                self.wfile.write(f"X-Drip-{n}: .\r\n".encode())
                time.sleep(interval)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return False
        return True


class _Server(FakeServer):
    site: FakePageServer


class FakePageServer:
    """A ThreadingHTTPServer on 127.0.0.1:<free port>, serving pages set by the test."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pages: dict[str, FakePage] = {}
        self.fallback: FakePage | None = None  # what a path not set answers (None: 404)
        self._requests: list[LoggedRequest] = []
        self._in_flight = 0
        self.max_in_flight = 0
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.site = self
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def set_page(
        self,
        path: str,
        body: bytes,
        content_type: str = "text/html",
        charset: str | None = None,
        gzip: bool = False,
        etag: bool = True,
        delay: float = 0.0,
        *,
        status: int = 200,
        last_modified: str | None = None,
        send_length: bool = True,
        headers: dict[str, str] | None = None,
        drip_headers: tuple[int, float] | None = None,
        drip_body: float = 0.0,
        head_status: int | None = None,
    ) -> None:
        page = FakePage(
            body, content_type, charset, gzip, etag, delay, status, last_modified, send_length,
            tuple((headers or {}).items()), drip_headers, drip_body, head_status,
        )  # fmt: skip
        with self._lock:
            self._pages[path] = page

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.set_page(path, b"", etag=False, status=status, headers={"Location": location})

    def remove_page(self, path: str) -> None:
        with self._lock:
            self._pages.pop(path, None)

    @property
    def requests(self) -> list[LoggedRequest]:
        with self._lock:
            return list(self._requests)

    def clear_log(self) -> None:
        with self._lock:
            self._requests.clear()
            self.max_in_flight = 0

    def _log(self, request: LoggedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def start(self) -> FakePageServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakePageServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
