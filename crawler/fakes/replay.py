"""Real recorded answers served by the loopback fakes, ahead of their own state.

A test loads exchanges recorded from a real service (``../shared/replay``: PyGithub's
ReplayData as JSON, PyPI documents) into a ``Recordings`` and hands it to a fake; the fake
answers a request that matches a recording with the recorded status, headers and body as they
were, and everything else from its state. Links into the recorded origin (``Link``,
``Location``) are pointed at the fake, so a client follows them to loopback. Repeated
recordings of one request (a 502, a 502, then a 200) are answered in order, the last one again
after that.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from crawler.fakes.server import compact_json, send_answer

# Framing the fake's own server writes; a recorded value would contradict the bytes it sends.
_FRAMING = {"content-length", "transfer-encoding", "content-encoding", "connection", "status"}
_LINKED = {"link", "location"}


@dataclass(frozen=True)
class RecordedAnswer:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


def _body_bytes(body: Any) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return compact_json(body)


def _target(url: str) -> str:
    split = urlsplit(url)
    return split.path + (f"?{split.query}" if split.query else "")


class Recordings:
    """Recorded exchanges by method and path (with its query; a recording without a query also
    answers the same path asked with one, as a real server ignores ``per_page`` it was not
    recorded with)."""

    def __init__(self, origin: str) -> None:
        self.origin = origin.rstrip("/")
        self._answers: dict[tuple[str, str], list[RecordedAnswer]] = {}
        self._served: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def add(
        self,
        method: str,
        url: str,
        status: int,
        headers: Iterable[Sequence[str]],
        body: Any,
    ) -> None:
        """One exchange; ``url`` absolute (on the recorded origin) or a path."""
        pairs = tuple((str(h[0]), str(h[1])) for h in headers)
        answer = RecordedAnswer(status, pairs, _body_bytes(body))
        self._answers.setdefault((method.upper(), _target(url)), []).append(answer)

    def add_github(self, recording: dict[str, Any], *, only: str | None = None) -> None:
        """Every exchange of one PyGithub recording (``github/*.json``); ``only``: those whose
        URL contains it."""
        for exchange in recording["exchanges"]:
            if only is None or only in exchange["url"]:
                self.add(
                    exchange["method"],
                    exchange["url"],
                    int(exchange["status"]),
                    exchange["response_headers"],
                    exchange["body"],
                )

    def _find(self, method: str, target: str) -> tuple[str, str] | None:
        exact = (method, target)
        if exact in self._answers:
            return exact
        bare = (method, urlsplit(target).path)
        return bare if bare in self._answers else None

    def answer(self, method: str, target: str) -> RecordedAnswer | None:
        with self._lock:
            key = self._find(method.upper(), target)
            if key is None:
                return None
            answers = self._answers[key]
            turn = self._served.get(key, 0)
            self._served[key] = turn + 1
            return answers[min(turn, len(answers) - 1)]

    def serve(self, handler: BaseHTTPRequestHandler, method: str, base_url: str) -> int | None:
        """Answer ``handler``'s request from a recording; its status, or None when none fits."""
        answer = self.answer(method, handler.path)
        if answer is None:
            return None
        content_type = "application/json; charset=utf-8"
        headers: dict[str, str] = {}
        for name, value in answer.headers:
            lower = name.lower()
            if lower in _FRAMING:
                continue
            if lower == "content-type":
                content_type = value
                continue
            if lower in _LINKED:
                value = value.replace(self.origin, base_url)
            headers[name] = value
        send_answer(handler, answer.status, answer.body, headers, content_type)
        return answer.status
