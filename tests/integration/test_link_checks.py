"""The link checker (crawler.upstream.links) over real HTTP on loopback: HEAD first, GET where
HEAD is refused, redirects told apart (permanent: moved; temporary: followed), conditional
requests, and our own rules (loop, private address, size cap) as errors with their reason."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from crawler.config import Settings
from crawler.upstream.links import LinkChecker, Validators
from crawler_fakes.pages import FakePageServer

# the loopback fakes are reachable; every other private address stays refused
LOOPBACK_ONLY = Settings(private_networks=("127.0.0.0/8",))


@pytest.fixture
def site() -> Iterator[FakePageServer]:
    with FakePageServer() as server:
        yield server


@pytest.fixture
def checker(monkeypatch: pytest.MonkeyPatch) -> Iterator[LinkChecker]:
    monkeypatch.delenv("CRAWLER_ALLOW_PRIVATE_ADDRESSES", raising=False)
    with LinkChecker(LOOPBACK_ONLY) as links:
        yield links


def _methods(site: FakePageServer) -> list[tuple[str, str, int]]:
    return [(r.method, r.path, r.status) for r in site.requests]


def test_a_live_link_costs_one_head_and_an_unchanged_one_a_304(
    site: FakePageServer, checker: LinkChecker
) -> None:
    site.set_page("/docs.html", b"<p>docs</p>", last_modified="Mon, 01 Jun 2026 00:00:00 GMT")
    first = checker.check(site.url("/docs.html"))
    assert (first.status, first.failure, first.moved_to, first.requests) == (200, None, None, 1)
    assert first.last_modified == "Mon, 01 Jun 2026 00:00:00 GMT" and first.etag
    again = checker.check(site.url("/docs.html"), Validators(first.etag, first.last_modified))
    assert (again.status, again.failure) == (304, None)
    assert _methods(site) == [("HEAD", "/docs.html", 200), ("HEAD", "/docs.html", 304)]
    assert [r.conditional for r in site.requests] == [False, True]


def test_a_301_then_308_chain_is_moved_with_its_final_url(
    site: FakePageServer, checker: LinkChecker
) -> None:
    site.redirect("/old", "/older-new", 301)
    site.redirect("/older-new", site.url("/new/page.html"), 308)
    site.set_page("/new/page.html", b"<p>here</p>")
    answer = checker.check(site.url("/old"))
    assert (answer.status, answer.failure) == (200, None)
    assert answer.moved_to == site.url("/new/page.html")
    assert answer.requests == 3


def test_a_302_is_followed_and_not_a_move(site: FakePageServer, checker: LinkChecker) -> None:
    site.redirect("/latest", "/v2/index.html", 302)
    site.set_page("/v2/index.html", b"<p>v2</p>")
    answer = checker.check(site.url("/latest"))
    assert (answer.status, answer.failure, answer.moved_to) == (200, None, None)
    # one temporary hop in a chain of permanent ones: where it lands is not where it lives
    site.redirect("/a", "/latest", 301)
    assert checker.check(site.url("/a")).moved_to is None


def test_a_404_is_confirmed_by_get_before_it_counts(
    site: FakePageServer, checker: LinkChecker
) -> None:
    answer = checker.check(site.url("/gone.html"))
    assert (answer.status, answer.failure) == (404, "not_found")
    assert answer.reason == "HTTP 404"
    assert _methods(site) == [("HEAD", "/gone.html", 404), ("GET", "/gone.html", 404)]
    site.set_page("/gone2.html", b"", status=410)
    assert checker.check(site.url("/gone2.html")).failure == "not_found"


def test_a_host_that_refuses_head_is_asked_with_get_from_then_on(
    site: FakePageServer, checker: LinkChecker
) -> None:
    site.set_page("/a.html", b"<p>a</p>", head_status=405)
    site.set_page("/b.html", b"<p>b</p>", head_status=405)
    assert checker.check(site.url("/a.html")).failure is None
    assert checker.check(site.url("/b.html")).failure is None
    assert _methods(site) == [
        ("HEAD", "/a.html", 405),
        ("GET", "/a.html", 200),
        ("GET", "/b.html", 200),
    ]


def test_server_errors_and_timeouts_are_unreachable(site: FakePageServer) -> None:
    site.set_page("/down", b"oops", status=503)
    site.set_page("/slow", b"<p>slow</p>", delay=1.0)
    settings = Settings(private_networks=("127.0.0.0/8",), timeout=0.2)
    with LinkChecker(settings) as checker:
        down, slow = checker.check(site.url("/down")), checker.check(site.url("/slow"))
    assert (down.status, down.failure) == (503, "unreachable")
    assert (slow.status, slow.failure, slow.reason) == (
        None, "unreachable", "timed out after 0.2s",
    )  # fmt: skip


def test_a_redirect_loop_is_an_error_with_its_reason(
    site: FakePageServer, checker: LinkChecker
) -> None:
    site.redirect("/ping", "/pong", 301)
    site.redirect("/pong", "/ping", 302)
    answer = checker.check(site.url("/ping"))
    assert answer.failure == "refused"
    assert answer.reason == (
        f"redirect loop: {site.url('/ping')} → {site.url('/pong')} → {site.url('/ping')}"
    )


def test_a_redirect_to_a_private_address_is_refused_before_it_is_asked(
    site: FakePageServer, checker: LinkChecker
) -> None:
    site.redirect("/internal", "http://10.0.0.1/admin", 301)
    answer = checker.check(site.url("/internal"))
    assert answer.failure == "refused"
    assert answer.reason.startswith(
        "refusing to fetch http://10.0.0.1/admin: host '10.0.0.1' resolves to 10.0.0.1, "
        "a private address (server-side request forgery guard)"
    )
    assert _methods(site) == [("HEAD", "/internal", 301)]  # 10.0.0.1 never asked


def test_an_answer_past_the_size_cap_is_an_error(site: FakePageServer) -> None:
    settings = Settings(private_networks=("127.0.0.0/8",), page_size_limit=2048)
    big = b"x" * 5000
    site.set_page("/big.bin", big, head_status=405)
    site.set_page("/endless.bin", big, head_status=405, send_length=False)
    with LinkChecker(settings) as checker:
        declared = checker.check(site.url("/big.bin"))
        streamed = checker.check(site.url("/endless.bin"))
    assert (declared.failure, streamed.failure) == ("refused", "refused")
    assert declared.reason.startswith(
        f"{site.url('/big.bin')} answered 5000 bytes, over the size cap of 2048 bytes"
    )
    assert streamed.reason.startswith(
        f"{site.url('/endless.bin')} answered more than the size cap of 2048 bytes "
        "(stopped reading)"
    )


def test_a_name_that_does_not_resolve_is_unresolved(
    checker: LinkChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    def nowhere(host: str, *args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", nowhere)
    answer = checker.check("https://docs.gone-vendor.example/support")
    assert (answer.failure, answer.status, answer.requests) == ("unresolved", None, 0)
    assert answer.reason.startswith("cannot resolve host 'docs.gone-vendor.example'")


def test_check_many_keeps_a_few_requests_per_host_in_flight(site: FakePageServer) -> None:
    for n in range(6):
        site.set_page(f"/p{n}.html", b"<p>p</p>", delay=0.1)
    with LinkChecker(LOOPBACK_ONLY) as checker:
        answers = checker.check_many((site.url(f"/p{n}.html"), Validators()) for n in range(6))
    assert [a.failure for a in answers.values()] == [None] * 6
    assert 1 <= site.max_in_flight <= 2  # settings.per_host_concurrency bounds it


def test_a_token_in_a_link_never_reaches_the_reason(
    site: FakePageServer, checker: LinkChecker
) -> None:
    answer = checker.check(site.url("/missing?access_token=s3cr3t-T0KEN-value"))
    assert answer.failure == "not_found"
    assert "s3cr3t-T0KEN-value" not in answer.reason
