"""One wall-clock deadline per request, response headers included.

httpx's timeouts bound each network operation: a server that sends its headers one line per
second never trips a 30-second read timeout, and the request never ends. Here every socket
operation of a request waits at most until the request's deadline: ``DeadlineTransport`` is an
``httpx.HTTPTransport`` whose httpcore network backend hands each connect, read and write the
time left (``deadline()`` sets it for the requests made inside it, per thread), and raises
httpcore's timeout once it has passed, which httpx reports as ``httpx.TimeoutException``.
"""

from __future__ import annotations

import time
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpcore
import httpx

_DEADLINE: ContextVar[float | None] = ContextVar("crawler_request_deadline", default=None)


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Requests made inside (in this thread) end with a timeout ``seconds`` from now."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def deadline_passed() -> bool:
    """True inside ``deadline()`` once its time is up."""
    end = _DEADLINE.get()
    return end is not None and time.monotonic() >= end


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    """``timeout`` shortened to the time left before the deadline; ``expired`` once past it."""
    end = _DEADLINE.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise expired("the request deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: typing.Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, left, local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport`` (same arguments, proxies included) that obeys ``deadline()``."""

    def __init__(self, **kwargs: typing.Any) -> None:
        super().__init__(**kwargs)
        # httpx builds its httpcore pool without a way to pass a network backend; every
        # httpcore pool (direct, HTTP proxy, SOCKS proxy) keeps it in this attribute.
        pool = self._pool
        pool._network_backend = _DeadlineBackend(pool._network_backend)
