"""Deterministic fault injection for the fake servers: one-shot rules and seeded rates."""

from __future__ import annotations

import contextlib
import random
import re
import threading
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler
from typing import Literal, get_args

# -------------------------------------------------------------------------------------- faults

FaultKind = Literal[
    "status_500",
    "status_502",
    "reset",
    "truncate",
    "html_200",
    "secondary_limit",
    "rate_429",
    "delay",
    "graphql_error",  # the fake GitHub's GraphQL only: 200 with an error and no data
    # the fake GitHub's GraphQL only: the real answer with one field of some repositories null
    # and an error whose path names it (GitHub's partial answer), or that field replaced
    "graphql_partial",
    # a 200 whose body never ends (``size`` bytes, no Content-Length), or a small gzip body
    # that decompresses to ``size`` bytes (a "gzip bomb"): see send_oversize
    "oversize",
    "gzip_bomb",
    "redirect",  # a 302 to ``location`` (e.g. a cloud metadata address)
]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)


@dataclass
class FaultRule:
    """A one-shot fault: fires on the first ``times`` requests whose path matches ``path``."""

    kind: FaultKind
    path: str = ""  # regex, searched in the request path including the query string
    times: int = 1
    method: str | None = None
    # secondary_limit / rate_429 (default: the plan's); a string is sent as written (a date...)
    retry_after: int | str | None = None
    delay: float | None = None  # delay (default: the plan's)
    # graphql_error: the error's message, "{token}" replaced by the credential the request
    # carried (a proxy or server that echoes it), and the alias (path) it concerns, if any
    message: str = "Something went wrong while executing your query."
    alias: str | None = None
    # graphql_partial: the field (dotted, inside each repository alias, or inside ``alias``
    # only) made null with an error naming its path; or, when ``value`` is given, replaced
    # by that value with no error (a wrong-typed answer)
    field: str = "releases"
    value: object = None
    size: int = 300 * 2**20  # oversize / gzip_bomb: the body's (decompressed) size in bytes
    location: str = ""  # redirect: where to
    fired: int = 0


@dataclass
class FaultPlan:
    """Deterministic per-request faults: one-shot rules first, then seeded random rates.

    The random draw of a request depends only on the seed, the request (method and path) and
    how many times that request was made before: the same requests meet the same faults
    whatever order concurrent clients send them in."""

    rates: dict[str, float] = field(default_factory=dict)  # fault kind -> probability
    rules: list[FaultRule] = field(default_factory=list)
    seed: int = 0
    retry_after: int = 1
    delay: float = 0.2
    _seen: dict[tuple[str, str], int] = field(init=False, repr=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        unknown = {*self.rates, *(r.kind for r in self.rules)} - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")

    def pick(self, method: str, path: str) -> FaultRule | None:
        with self._lock:
            count = self._seen.get((method, path), 0)
            self._seen[(method, path)] = count + 1
            # a str seed is hashed with SHA-512: the same draw in every process
            draw = random.Random(f"{self.seed}|{method}|{path}|{count}").random()
            for rule in self.rules:
                wanted = rule.method is None or rule.method.upper() == method
                if wanted and rule.fired < rule.times and re.search(rule.path, path):
                    rule.fired += 1
                    return rule
            edge = 0.0
            for kind in FAULT_KINDS:
                edge += self.rates.get(kind, 0.0)
                if draw < edge:
                    return FaultRule(kind=kind, fired=1)
        return None


# ------------------------------------------------------------- answers written by hand

RAW_KINDS = ("oversize", "gzip_bomb", "redirect")  # answered by send_raw_fault
_BLOCK = 2**20


@lru_cache(maxsize=4)
def gzip_bomb(size: int) -> bytes:
    """A gzip body that decompresses to ``size`` (a multiple of 1 MiB) zero bytes: one
    fully-flushed deflate block of 1 MiB of zeros, repeated (it depends on no history), so
    building 2 GiB costs one 1 MiB compression, not a 2 GiB one. About 1 KiB per MiB."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = deflate.compress(bytes(_BLOCK)) + deflate.flush(zlib.Z_FULL_FLUSH)
    blocks = size // _BLOCK
    crc = 0
    zeros = bytes(_BLOCK)
    for _ in range(blocks):
        crc = zlib.crc32(zeros, crc)
    end = b"\x03\x00"  # a final, empty fixed-Huffman block
    trailer = crc.to_bytes(4, "little") + (blocks * _BLOCK % 2**32).to_bytes(4, "little")
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + block * blocks + end + trailer


def send_raw_fault(handler: BaseHTTPRequestHandler, rule: FaultRule) -> None:
    """A 302 to ``rule.location`` ("redirect"); or 200 with a JSON-typed body of
    ``rule.size`` bytes (decompressed): streamed with no Content-Length and written until the
    client hangs up ("oversize"), or gzip-encoded ("gzip_bomb", with its small
    Content-Length)."""
    if rule.kind == "redirect":
        handler.send_response(302)
        handler.send_header("Location", rule.location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
        return
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Connection", "close")
    handler.close_connection = True
    if rule.kind == "gzip_bomb":
        body = gzip_bomb(rule.size)
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        with contextlib.suppress(ConnectionError):
            handler.wfile.write(body)
        return
    handler.end_headers()
    chunk = b" " * _BLOCK
    with contextlib.suppress(ConnectionError):
        handler.wfile.write(b"[")
        for _ in range(rule.size // _BLOCK):
            handler.wfile.write(chunk)  # whitespace: valid JSON, were it ever finished
