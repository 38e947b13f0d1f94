"""Checking links: is each URL still there, and where does it live now? Facts only
(``LinkAnswer``); ``crawler.diff.links`` judges them against each link's history.

The same HTTP layer as vendor pages (``crawler.upstream.pages``): the private-address guard at
every hop (``settings.private_networks`` apart), redirects followed by hand, one wall-clock
deadline per link (``settings.request_deadline``) beside the per-operation
``settings.timeout``, the size cap (``settings.page_size_limit``), at most
``settings.per_host_concurrency`` requests in flight per host. Unlike pages, links go through
the environment's proxies (``crawler.upstream.network``): a link is only asked whether it
answers, its content is never read into the catalog, and a network without direct egress must
still be able to check them; the guard still resolves every hop before it is requested.

* HEAD first; GET (streamed, stopped at the size cap) where HEAD is refused (405/501) or
  answered badly (any other error status: a 404 to HEAD is confirmed by GET before it counts);
  a host that answered HEAD badly is asked with GET for the rest of the run;
* conditional: the link's ETag / Last-Modified from its last check are sent, and a 304 is ok;
* a redirect chain whose every hop is permanent (301/308) names its final URL (``moved_to``);
  a temporary hop (302/303/307) anywhere in it is followed and not reported;
* a redirect loop, more than ``MAX_REDIRECTS`` redirects, a redirect to a private address and
  an answer past the size cap are ``refused``, with their reason.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from crawler.config import Settings
from crawler.model import LinkAnswer, LinkFailure
from crawler.upstream.http import USER_AGENT, redact, unresolved_name
from crawler.upstream.pages import (
    PageFetchError,
    allowed_networks,
    check_url,
    display_url,
    host_key,
    private_addresses_allowed,
    secrets_in_url,
)

if TYPE_CHECKING:
    import httpx

MAX_REDIRECTS = 10
MAX_WORKERS = 16
ACCEPT = "text/html, application/xhtml+xml, */*;q=0.5"
_PERMANENT = frozenset({301, 308})
_REDIRECTS = _PERMANENT | {302, 303, 307}
_HEAD_REFUSED = frozenset({405, 501})
_GONE = frozenset({404, 410})


@dataclass(frozen=True)
class Validators:
    """What the last check of a link kept for a conditional request."""

    etag: str | None = None
    last_modified: str | None = None


class _Refused(Exception):
    """One of our own rules stopped the check (loop, private address, size cap)."""


class _Hop:
    """Where a chain of redirects stands: the URL, whether every hop so far was permanent."""

    def __init__(self, url: str) -> None:
        self.start = url
        self.requests = 0
        self.restart()

    def restart(self) -> None:
        """Back to the first URL (another method); the requests spent stay counted."""
        self.url = self.start
        self.permanent = True
        self.moved = False
        self.seen = [self.start]


class LinkChecker:
    """Check links politely and safely. Thread-safe; ``check_many`` runs them in parallel."""

    def __init__(self, settings: Settings, *, client: httpx.Client | None = None) -> None:
        self._settings = settings
        self._allow_private = private_addresses_allowed(settings)
        self._allowed = allowed_networks(settings)
        self._own_client = client is None
        self._http = client
        self._http_lock = threading.Lock()
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._get_only: set[str] = set()  # hosts that answered HEAD badly: GET from then on
        self._lock = threading.Lock()

    @property
    def _client(self) -> httpx.Client:
        with self._http_lock:
            if self._http is None:
                import httpx

                from crawler.upstream.network import client_transports

                self._http = httpx.Client(
                    **client_transports(proxies=True),
                    timeout=self._settings.timeout,
                    headers={"User-Agent": USER_AGENT, "Accept": ACCEPT},
                    follow_redirects=False,
                )
            return self._http

    def close(self) -> None:
        if self._own_client and self._http is not None:
            self._http.close()

    def __enter__(self) -> LinkChecker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _host_slot(self, url: str) -> Iterator[None]:
        with self._lock:
            slot = self._slots.setdefault(
                host_key(url), threading.BoundedSemaphore(self._settings.per_host_concurrency)
            )
        with slot:
            yield

    def check_many(self, links: Iterable[tuple[str, Validators]]) -> dict[str, LinkAnswer]:
        """Every link checked once, hosts taken in turn so one slow host holds few workers."""
        unique = dict(links)
        if not unique:
            return {}
        by_host: dict[str, list[str]] = {}
        for url in unique:
            by_host.setdefault(host_key(url), []).append(url)
        queues = list(by_host.values())
        order = [q[i] for i in range(max(map(len, queues))) for q in queues if i < len(q)]
        workers = min(len(unique), MAX_WORKERS, len(queues) * self._settings.per_host_concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="link-check") as pool:
            futures = {url: pool.submit(self.check, url, unique[url]) for url in order}
            return {url: futures[url].result() for url in unique}

    def check(self, url: str, validators: Validators = Validators()) -> LinkAnswer:
        """One link's answer; never raises (a failure is the answer's ``failure``)."""
        import httpx

        from crawler.upstream.deadline import deadline, deadline_passed

        secrets = secrets_in_url(url)
        hop = _Hop(url)

        def failed(failure: LinkFailure, reason: str) -> LinkAnswer:
            reason = redact(reason, *secrets)[:500]
            return LinkAnswer(url, None, failure=failure, reason=reason, requests=hop.requests)

        try:
            with self._host_slot(url), deadline(self._settings.request_deadline):
                try:
                    return self._check(url, validators, hop, secrets)
                except httpx.TimeoutException:
                    if not deadline_passed():
                        raise
                    took = f"{self._settings.request_deadline:g}s (settings.request_deadline)"
                    return failed("unreachable", f"no answer within the request deadline of {took}")
        except _Refused as exc:
            return failed("refused", str(exc))
        except PageFetchError as exc:
            return failed("unresolved" if exc.unresolved else "refused", exc.message)
        except httpx.TimeoutException:
            return failed("unreachable", f"timed out after {self._settings.timeout:g}s")
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, ValueError) as exc:
            kind: LinkFailure = "unresolved" if unresolved_name(exc) else "unreachable"
            return failed(kind, f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # one hostile link can only fail itself
            return failed("unreachable", f"failed unexpectedly: {type(exc).__name__}: {exc}")

    def _check(self, url: str, validators: Validators, hop: _Hop, secrets: list[str]) -> LinkAnswer:
        _ = urlsplit(url).port  # a bad port or an unclosed IPv6 bracket: ValueError here
        host = host_key(url)
        with self._lock:
            method = "GET" if host in self._get_only else "HEAD"
        status, response_headers = self._follow(method, url, validators, hop, secrets)
        if method == "HEAD" and not (200 <= status < 400):
            # refused (405/501) or answered badly: GET decides; a host whose GET says otherwise
            # than its HEAD did is asked with GET for the rest of the run
            head_status = status
            hop.restart()
            status, response_headers = self._follow("GET", url, validators, hop, secrets)
            if head_status in _HEAD_REFUSED or status != head_status:
                with self._lock:
                    self._get_only.add(host)
        moved_to = hop.url if hop.moved and hop.permanent else None
        etag, modified = response_headers
        if 200 <= status < 300 or status == 304:
            return LinkAnswer(
                url, status, moved_to=moved_to, etag=etag, last_modified=modified,
                requests=hop.requests,
            )  # fmt: skip
        reason = f"HTTP {status}" + (f" from {display_url(hop.url)}" if hop.moved else "")
        reason = redact(reason, *secrets)
        failure: LinkFailure = "not_found" if status in _GONE else "unreachable"
        return LinkAnswer(url, status, failure=failure, reason=reason, requests=hop.requests)

    def _follow(
        self, method: str, url: str, validators: Validators, hop: _Hop, secrets: list[str]
    ) -> tuple[int, tuple[str | None, str | None]]:
        """Send ``method`` and follow redirects by hand: (final status, (ETag, Last-Modified))."""
        headers = {}
        if validators.etag:
            headers["If-None-Match"] = validators.etag
        if validators.last_modified:
            headers["If-Modified-Since"] = validators.last_modified
        for _ in range(MAX_REDIRECTS + 1):
            check_url(hop.url, allow_private=self._allow_private, allowed=self._allowed)
            request = self._client.build_request(method, hop.url, headers=headers)
            hop.requests += 1
            response = self._client.send(request, stream=True, follow_redirects=False)
            try:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    self._next_hop(hop, response.status_code, location.strip(), secrets)
                    continue
                if method == "GET" and 200 <= response.status_code < 300:
                    self._read_capped(response, hop.url)
                kept = (response.headers.get("etag"), response.headers.get("last-modified"))
                return response.status_code, kept
            finally:
                response.close()
        raise _Refused(f"more than {MAX_REDIRECTS} redirects from {display_url(url)}")

    @staticmethod
    def _next_hop(hop: _Hop, status: int, location: str, secrets: list[str]) -> None:
        target = urljoin(hop.url, location)
        secrets.extend(secrets_in_url(target))
        if target in hop.seen:
            chain = " → ".join(
                display_url(u) for u in [*hop.seen[hop.seen.index(target) :], target]
            )
            raise _Refused(f"redirect loop: {chain}")
        hop.seen.append(target)
        hop.url = target
        hop.moved = True
        hop.permanent = hop.permanent and status in _PERMANENT

    def _read_capped(self, response: httpx.Response, url: str) -> None:
        """Read the body up to the size cap (and no further): a longer one is refused."""
        limit = self._settings.page_size_limit
        hint = "raise settings.page_size_limit in sources.yaml if the answer is legitimate"
        length = response.headers.get("content-length", "").strip()
        if length.isdigit() and int(length) > limit:
            raise _Refused(
                f"{display_url(url)} answered {int(length)} bytes, over the size cap of "
                f"{limit} bytes: {hint}"
            )
        total = 0
        for chunk in response.iter_bytes():
            total += len(chunk)
            if total > limit:
                raise _Refused(
                    f"{display_url(url)} answered more than the size cap of {limit} bytes "
                    f"(stopped reading): {hint}"
                )


def check_links(
    settings: Settings, links: Sequence[tuple[str, Validators]]
) -> dict[str, LinkAnswer]:
    """``LinkChecker.check_many`` with a checker of its own (for one-off commands)."""
    with LinkChecker(settings) as checker:
        return checker.check_many(links)
