"""What every fetcher shares: the conditional-request cache contract and safe text helpers."""

from __future__ import annotations

import hashlib
import re
import socket
from dataclasses import dataclass
from typing import Protocol

from crawler import __version__, untrusted

USER_AGENT = f"crawler/{__version__} (+https://github.com/; release and license audit)"


@dataclass(frozen=True)
class CachedResponse:
    """A previous 200 answer, kept so that a 304 can reuse it byte for byte."""

    url: str
    etag: str | None
    last_modified: str | None
    body: bytes
    content_type: str | None = None


class ResponseCache(Protocol):
    """Where validators and bodies live between audits (the store implements it)."""

    def get_response(self, key: str) -> CachedResponse | None: ...

    def put_response(self, key: str, response: CachedResponse) -> None: ...


class MemoryCache:
    """A ResponseCache in a dict: for one-off commands (``crawler page``) and tests."""

    def __init__(self) -> None:
        self._items: dict[str, CachedResponse] = {}

    def get_response(self, key: str) -> CachedResponse | None:
        return self._items.get(key)

    def put_response(self, key: str, response: CachedResponse) -> None:
        self._items[key] = response


def cache_key(method: str, url: str, accept: str, identity: str) -> str:
    """GitHub's ETags vary with URL, Accept and the caller: so does the key.

    ``identity`` is a non-reversible fingerprint of the token (see ``token_identity``),
    never the token itself.
    """
    return hashlib.sha256(f"{method}\n{url}\n{accept}\n{identity}".encode()).hexdigest()


def token_identity(token: str | None) -> str:
    if not token:
        return "anonymous"
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:16]


def redact(text: str, *secrets: str | None) -> str:
    """Remove every secret from a message before it is logged, stored or raised (in any case,
    encoded, split: see crawler.untrusted)."""
    return untrusted.redact(text, secrets)


_RATE_NUMBER = re.compile(r"[0-9]{1,11}")  # ASCII digits only ("²".isdigit() is True)


def rate_number(value: object) -> int | None:
    """A rate-limit header's number, or None when it is absent, not a plain whole number or
    past any real reset (11 digits reach the year 5138; 20 would overflow a date)."""
    text = str(value).strip() if value is not None else ""
    return int(text) if _RATE_NUMBER.fullmatch(text) else None


def unresolved_name(exc: BaseException) -> bool:
    """True when ``exc`` (or what caused it) is a failed name lookup: a host that does not
    resolve now will not resolve a second later, so it is not retried like a timeout."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, socket.gaierror):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
