"""JsonApi (crawler/upstream/json_api.py), the JSON client every non-GitHub source shares, over
real HTTP on loopback: a scripted server answers each path with the statuses a test lists."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from crawler.upstream.http import MemoryCache
from crawler.upstream.json_api import ApiSettings, JsonApi
from crawler.upstream.source import SourceDeferred, SourceError

SECRET = "s3cr3t-token-value-0123456789"


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: Any = field(default_factory=dict)  # JSON value, or bytes sent as they are
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Seen:
    path: str  # with the query string
    headers: dict[str, str]

    @property
    def query(self) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(self.path).query))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        script = self.server.script
        seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()})
        answer = script.next_answer(urlsplit(self.path).path, seen)
        body = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value.replace("{query}", urlsplit(self.path).query))
        if answer.status == 304:
            self.end_headers()
            return
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    script: Script


class Script:
    """Answers listed per path, served in order; the last one repeats."""

    def __init__(self) -> None:
        self.routes: dict[str, list[Answer]] = {}
        self.log: list[Seen] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.script = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def on(self, path: str, *answers: Answer) -> None:
        self.routes[path] = list(answers)

    def next_answer(self, path: str, seen: Seen) -> Answer:
        with self._lock:
            self.log.append(seen)
            queue = self.routes.get(path)
            if not queue:
                return Answer(404, {"message": "Not Found"})
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def paths(self) -> list[str]:
        return [s.path for s in self.log]


@pytest.fixture
def server() -> Iterator[Script]:
    script = Script()
    script._thread.start()
    yield script
    script._server.shutdown()
    script._server.server_close()


@pytest.fixture
def other() -> Iterator[Script]:
    """A second server: another origin (same host, another port)."""
    script = Script()
    script._thread.start()
    yield script
    script._server.shutdown()
    script._server.server_close()


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_api(
    base: str,
    *,
    cache: MemoryCache | None = None,
    sleep: Sleeps | None = None,
    header: bool = False,
    param: bool = False,
    **settings: Any,
) -> JsonApi:
    return JsonApi(
        "Test",
        base,
        cache=cache or MemoryCache(),
        settings=ApiSettings(**{"retry_base_delay": 1.0, **settings}),
        timeout=5,
        auth_headers={"Authorization": f"Bearer {SECRET}"} if header else None,
        auth_params={"access_token": SECRET} if param else None,
        sleep=sleep if sleep is not None else Sleeps(),
    )


# -- conditional requests -------------------------------------------------------------------


def test_a_304_replays_the_stored_body_and_the_validators_are_per_credential(
    server: Script,
) -> None:
    etag = 'W/"v1"'
    server.on(
        "/items",
        Answer(200, [{"n": 1}], (("ETag", etag), ("total_page", "3"))),
        Answer(304, b"", (("ETag", etag), ("total_page", "3"))),
        Answer(200, [{"n": 1}], (("ETag", etag), ("total_page", "3"))),
    )
    cache = MemoryCache()
    api = make_api(server.base, cache=cache, param=True)
    first = api.get("/items", {"page": 1}, expect=list)
    second = api.get("/items", {"page": 1}, expect=list)
    assert (first.data, first.from_cache, first.headers["total_page"]) == ([{"n": 1}], False, "3")
    assert (second.status, second.data, second.from_cache) == (200, [{"n": 1}], True)
    assert second.url == f"{server.base}/items?page=1"  # as shown: no credentials
    assert [s.headers.get("if-none-match") for s in server.log] == [None, etag]
    assert api.usage.as_dict() == {"requests": 2, "not_modified": 1, "retries": 0}

    # the same URL asked with other credentials (or none) does not reuse those validators
    anonymous = make_api(server.base, cache=cache)
    anonymous.get("/items", {"page": 1}, expect=list)
    assert server.log[-1].headers.get("if-none-match") is None


# -- retries --------------------------------------------------------------------------------


def test_5xx_is_retried_with_exponential_backoff_then_reported(server: Script) -> None:
    server.on("/flaky", Answer(503, {"message": "busy"}), Answer(200, {"ok": True}))
    server.on("/down", Answer(502, {"message": "bad gateway"}))
    sleeps = Sleeps()
    api = make_api(server.base, sleep=sleeps, max_retries=2)

    assert api.get("/flaky").data == {"ok": True}
    assert api.usage.retries == 1 and 1.0 <= sleeps[0] < 2.0

    sleeps.clear()
    with pytest.raises(SourceError) as caught:
        api.get("/down")
    assert server.paths().count("/down") == 3  # one try and two retries
    assert [int(s) for s in sleeps] == [1, 2]  # base × 2^n, plus up to one base of jitter
    message = str(caught.value)
    assert re.fullmatch(
        r"HTTP 502 from Test \(gave up after 3 attempts, \d+\.\ds of waiting\)", message
    ), message
    assert caught.value.url == f"{server.base}/down"


def test_a_client_error_is_not_retried(server: Script) -> None:
    server.on("/gone", Answer(410, {"message": "Gone for good"}))
    api = make_api(server.base, max_retries=3)
    with pytest.raises(SourceError) as caught:
        api.get("/gone")
    assert (str(caught.value), caught.value.status) == ("HTTP 410 from Test: Gone for good", 410)
    assert server.paths() == ["/gone"]
    assert api.get("/gone", allow=(410,)).status == 410  # an allowed status is an answer


def test_429_waits_as_long_as_retry_after_says(server: Script) -> None:
    server.on("/limited", Answer(429, {"message": "slow down"}, (("Retry-After", "7"),)),
              Answer(200, {"ok": 1}))  # fmt: skip
    sleeps = Sleeps()
    api = make_api(server.base, sleep=sleeps, max_retries=3, max_retry_wait=60)
    assert api.get("/limited").data == {"ok": 1}
    assert sleeps == [7.0]

    when = formatdate(0, usegmt=True)  # an HTTP date already past: retry at once
    server.on("/dated", Answer(429, {}, (("Retry-After", when),)), Answer(200, {"ok": 2}))
    sleeps.clear()
    assert api.get("/dated").data == {"ok": 2}
    assert sleeps == [0.0]


def test_a_retry_after_beyond_the_wait_cap_defers_instead_of_retrying_early(
    server: Script,
) -> None:
    server.on("/limited", Answer(429, {"message": "slow down"}, (("Retry-After", "3600"),)))
    server.on("/other", Answer(200, {"ok": 1}))
    sleeps = Sleeps()
    api = make_api(server.base, sleep=sleeps, max_retries=3, max_retry_wait=60)
    with pytest.raises(SourceDeferred) as caught:
        api.get("/limited")
    assert str(caught.value) == (
        "Test rate limit (HTTP 429): asked to wait 3600s, more than max_retry_wait (60s)"
    )
    assert sleeps == [] and server.paths() == ["/limited"]  # never retried before its time
    with pytest.raises(SourceDeferred):  # and the API is not called again this audit
        api.get("/other")
    assert server.paths() == ["/limited"]


# -- rate budget ----------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["RateLimit", "X-RateLimit"])
def test_the_budget_from_rate_limit_headers_defers_before_spending_the_reserve(
    server: Script, prefix: str
) -> None:
    reset = 1_900_000_000
    answers = [
        Answer(200, {"n": n}, ((f"{prefix}-Limit", "100"), (f"{prefix}-Remaining", str(left)),
                               (f"{prefix}-Reset", str(reset))))
        for n, left in ((1, 3), (2, 2))
    ]  # fmt: skip
    server.on("/a", *answers)
    api = make_api(server.base, budget_reserve=2)
    assert api.get("/a").data == {"n": 1}
    assert api.get("/a").data == {"n": 2}
    with pytest.raises(SourceDeferred) as caught:
        api.get("/a")
    assert str(caught.value) == (
        "Test rate budget spent (2 left of 100, keeping 2 in reserve; "
        "resets 2030-03-17T17:46:40Z)"
    )
    assert len(server.log) == 2  # the third request was never sent
    assert (api.budget.limit, api.budget.remaining) == (100, 2)


def test_a_403_with_the_budget_at_zero_is_a_deferral_not_an_error(server: Script) -> None:
    limit = (("X-RateLimit-Limit", "60"), ("X-RateLimit-Remaining", "0"))
    server.on("/a", Answer(403, {"message": "Rate Limit Exceeded"}, limit))
    api = make_api(server.base)
    with pytest.raises(SourceDeferred) as caught:
        api.get("/a")
    assert str(caught.value) == "Test rate limit reached (HTTP 403)"


# -- credentials ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["header", "param"])
def test_credentials_go_to_the_api_origin_only_and_never_into_messages(
    server: Script, other: Script, how: str
) -> None:
    # a same-origin redirect keeps the credentials; one to another origin drops them, even
    # when the server copies the query string (with the token) into the Location
    server.on("/old", Answer(301, {}, (("Location", "/new?{query}"),)))
    server.on("/new", Answer(200, {"moved": True}))
    server.on("/away", Answer(302, {}, (("Location", other.base + "/landing?{query}"),)))
    other.on("/landing", Answer(200, {"elsewhere": True}))
    server.on("/echo", Answer(404, {"message": f"no such token {SECRET}"}))
    api = make_api(server.base, header=how == "header", param=how == "param", max_retries=0)

    def carried(seen: Seen) -> bool:
        return SECRET in seen.headers.get("authorization", "") or SECRET in seen.path

    assert api.get("/old").data == {"moved": True}
    assert [carried(s) for s in server.log] == [True, True]
    assert [s.query.get("access_token") for s in server.log].count(SECRET) == (
        2 if how == "param" else 0
    )
    assert all(s.path.count("access_token") <= 1 for s in server.log)  # never doubled

    assert api.get("/away").data == {"elsewhere": True}
    assert carried(server.log[-1]) and not carried(other.log[-1])
    assert api.get(other.base + "/landing").data == {"elsewhere": True}  # an absolute URL
    assert not carried(other.log[-1])

    with pytest.raises(SourceError) as caught:
        api.get("/echo")
    assert str(caught.value) == "HTTP 404 from Test: no such token ***"
    assert SECRET not in caught.value.url
    assert SECRET not in api.absolute("/x", {"page": 2})


# -- unreachable ----------------------------------------------------------------------------


def test_an_unreachable_api_is_given_up_on_after_three_unanswered_requests() -> None:
    with socket.socket() as probe:  # a port nobody listens on: connection refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps = Sleeps()
    api = make_api(f"http://127.0.0.1:{port}", sleep=sleeps, max_retries=1, param=True)
    messages = []
    for n in range(4):
        with pytest.raises(SourceError) as caught:
            api.get(f"/p{n}")
        messages.append(str(caught.value))
    assert all(
        re.fullmatch(
            r"no answer from Test: ConnectError \(gave up after 2 attempts, "
            r"\d+\.\ds of waiting\)", m
        )
        for m in messages[:3]
    ), messages
    assert messages[3] == "not attempted: Test unreachable (3 requests in a row got no answer)"
    assert api.usage.requests == 6  # the fourth request was never tried
    assert all(SECRET not in m for m in messages)


def test_answered_failures_do_not_count_as_unreachable(server: Script) -> None:
    server.on("/down", Answer(500, {"message": "oops"}))
    server.on("/up", Answer(200, {"ok": True}))
    api = make_api(server.base, max_retries=0)
    for _ in range(4):
        with pytest.raises(SourceError, match="HTTP 500"):
            api.get("/down")
    assert api.get("/up").data == {"ok": True}


def test_a_server_dripping_header_lines_is_cut_off_at_the_request_deadline() -> None:
    """The read timeout restarts with every header line; one deadline for the whole request
    (headers included) does not. Regression: JsonApi only bounded the body."""
    from crawler_fakes.pages import FakePageServer

    with FakePageServer() as site:
        site.set_page("/api/slow", b"{}", "application/json", drip_headers=(40, 0.1))
        site.set_page("/api/fast", b'{"ok": true}', "application/json")
        settings = ApiSettings(max_retries=0)
        api = JsonApi(
            "Forge", site.base_url + "/api", cache=MemoryCache(), settings=settings,
            timeout=5, deadline=0.5, sleep=lambda _s: None,
        )  # fmt: skip
        try:
            with pytest.raises(SourceError) as caught:
                api.get("/slow")
            assert api.get("/fast").data == {"ok": True}  # the next request is unaffected
        finally:
            api.close()
    assert str(caught.value) == (
        "Forge sent no complete answer within the request deadline of 0.5s "
        "(gave up after 1 attempt, 0.0s of waiting)"
    )
