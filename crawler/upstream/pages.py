"""Fetching vendor documentation pages: SSRF-guarded, size-capped, charset-aware, conditional.

* only http/https; every hop's host is resolved and refused when any address is private,
  loopback, link-local, multicast, reserved, unspecified or otherwise not global, unless
  ``settings.allow_private_addresses`` or ``CRAWLER_ALLOW_PRIVATE_ADDRESSES=1``
  (the check runs before connecting; a DNS answer that changes in between is not caught);
* redirects followed by hand (at most ``MAX_REDIRECTS``), re-checking each hop;
* the body is streamed and refused once it passes ``settings.page_size_limit`` (decoded bytes,
  so a gzip bomb stops too), or up front when Content-Length says so;
* one wall-clock deadline per page, ``settings.request_deadline``: redirects, headers and body
  included (see ``crawler.upstream.deadline``), beside the per-operation ``settings.timeout``;
  pages are fetched directly, not through ``HTTP(S)_PROXY``, so the guard above checks the
  address actually connected to;
* conditional requests from the ResponseCache (If-None-Match / If-Modified-Since); a 304 reuses
  the cached body; a 2xx answer carrying a validator is stored;
* charset: BOM, else the Content-Type charset, else ``<meta charset>``/http-equiv, else UTF-8,
  else windows-1252; legacy labels map to their WHATWG supersets (gb2312 → gb18030, ...); a
  label that is not a text encoding (``hex``, ``rot13``, ``base64``, ``zip``, ``idna``...) is
  ignored like an absent one.

Every error, expected or not, is a PageFetchError whose message has credentials in the URL
redacted; a page URL is fetched with the ``${NAME}`` references it holds expanded from the
environment (crawler.config.credentials) and shown, stored and cached only in the form
crawler.untrusted.shown_url gives it.
"""

from __future__ import annotations

import codecs
import ipaddress
import os
import re
import socket
import stat
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urljoin, urlsplit

from crawler.config import Settings
from crawler.untrusted import shown_url, url_secrets
from crawler.upstream.http import (
    USER_AGENT,
    CachedResponse,
    MemoryCache,
    ResponseCache,
    cache_key,
    redact,
)

if TYPE_CHECKING:  # httpx and the page parser load when a page is first fetched or read
    import httpx

ACCEPT = "text/html, application/xhtml+xml, text/markdown;q=0.9, text/plain;q=0.8, */*;q=0.1"
MAX_REDIRECTS = 5
MAX_WORKERS = 16
ALLOW_ENV = "CRAWLER_ALLOW_PRIVATE_ADDRESSES"
PRIVATE_HINT = "set 'allow_private_addresses: true' under 'settings:' in sources.yaml"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_SECRET_PARAM = re.compile(r"token|key|secret|sig|pass|auth|credential|session", re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]{0,512}?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]+)", re.I)
_HEADER_CHARSET = re.compile(r"charset\s*=\s*[\"']?([^\"';\s]+)", re.IGNORECASE)
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))  # fmt: skip
_ALIASES = {
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "iso-8859-1": "cp1252",
    "latin1": "cp1252", "latin-1": "cp1252", "ascii": "cp1252", "us-ascii": "cp1252",
    "shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932",
    "windows-31j": "cp932", "euc-kr": "cp949", "big5": "big5hkscs",
}  # fmt: skip
# text codecs that decode bytes but are no document's charset (escape-sequence interpreters)
_NOT_A_CHARSET = frozenset({"unicode-escape", "raw-unicode-escape"})
_EVERY_BYTE = bytes(range(256))


class PageFetchError(Exception):
    """A page could not be fetched; ``status`` is the HTTP status when there was one."""

    def __init__(
        self, message: str, *, status: int | None = None, unresolved: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.unresolved = unresolved  # the host's name did not resolve


@dataclass(frozen=True)
class FetchedPage:
    url: str  # as requested (the configured URL: evidence and cache key)
    body: str  # decoded text
    content_type: str | None  # media type only, e.g. "text/html"
    status: int  # 304 when the cached body was reused
    from_cache: bool
    final_url: str = ""  # after redirects
    charset: str = "utf-8"  # the codec the body was decoded with


def private_addresses_allowed(settings: Settings) -> bool:
    env = os.environ.get(ALLOW_ENV, "").strip().lower()
    return settings.allow_private_addresses or env in ("1", "true", "yes")


def display_url(url: str) -> str:
    """The URL as it may be shown: crawler.untrusted.shown_url (no ``user:password@``,
    secret-looking query values masked), even when it does not parse."""
    return shown_url(url)


def secrets_in_url(url: str, names: Iterable[str] = ()) -> list[str]:
    """What of ``url`` must not be written: its userinfo and secret-looking query values (by
    shown_url's names, or any name with token, key, secret, sig, pass, auth, session in it)."""
    found = url_secrets(url, names)
    try:
        parts = urlsplit(url)
    except ValueError:
        return found
    found += [v for k, v in parse_qsl(parts.query) if _SECRET_PARAM.search(k) and len(v) > 3]
    return sorted(set(found), key=len, reverse=True)


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries (and how): a packet to it reaches them."""
    found: list[tuple[str, ipaddress.IPv4Address]] = []
    if ip.sixtofour is not None:
        found.append(("6to4", ip.sixtofour))
    if ip.teredo is not None:
        found += [("Teredo server", ip.teredo[0]), ("Teredo", ip.teredo[1])]
    if any(ip in net for net in _NAT64):
        found.append(("NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
    return found


def _forbidden_kind(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address):  # judged by the address it embeds, first
        for how, embedded in _embedded_ipv4(ip):
            kind = _forbidden_kind(embedded)
            if kind is not None:
                return f"{kind} ({how} for {embedded})"
    for kind in ("loopback", "link_local", "multicast", "unspecified", "reserved", "private"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return None if ip.is_global else "non-global"


def allowed_networks(settings: Settings) -> tuple[IPNetwork, ...]:
    """``settings.private_networks``: the private networks reachable although the guard is on."""
    return tuple(ipaddress.ip_network(net, strict=False) for net in settings.private_networks)


def check_url(
    url: str, *, allow_private: bool, allowed: Sequence[IPNetwork] = ()
) -> None:
    """Refuse non-http(s) URLs and hosts that resolve to private/internal addresses (except
    those in ``allowed``)."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise PageFetchError(f"refusing {display_url(url)}: only http:// and https:// are fetched")
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        raise PageFetchError(f"refusing {display_url(url)}: invalid port") from None
    if not host:
        raise PageFetchError(f"refusing {display_url(url)}: no host")
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise PageFetchError(
            f"cannot resolve host {host!r} of {display_url(url)}: {exc}",
            unresolved=isinstance(exc, socket.gaierror),
        ) from None
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if any(ip in net for net in allowed):
            continue
        kind = _forbidden_kind(ip)
        if kind is not None:
            raise PageFetchError(
                f"refusing to fetch {display_url(url)}: host {host!r} resolves to {ip}, a {kind} "
                f"address (server-side request forgery guard); to allow it {PRIVATE_HINT} "
                f"or {ALLOW_ENV}=1"
            )


def _codec(label: str | bytes | None) -> str | None:
    """The Python codec for a charset label, or None when it names no text encoding."""
    if not label:
        return None
    name = (label.decode("ascii", "replace") if isinstance(label, bytes) else label).strip()
    return _text_codec(_ALIASES.get(name.lower().strip("\"'"), name))


@lru_cache(maxsize=256)
def _text_codec(name: str) -> str | None:
    try:
        codec = codecs.lookup(name).name
        if codec in _NOT_A_CHARSET:
            return None
        # bytes.decode refuses codecs that are not text encodings (hex, rot13, base64, zip...)
        # with LookupError; idna, punycode, undefined cannot decode arbitrary bytes
        _EVERY_BYTE.decode(codec, "replace")
    except (LookupError, UnicodeError, ValueError):
        return None
    return codec


def decode_body(body: bytes, content_type: str | None) -> tuple[str, str]:
    """(text, codec): BOM, header charset, <meta> charset, UTF-8, then windows-1252."""
    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(bom_codec, "replace"), bom_codec
    header = _HEADER_CHARSET.search(content_type or "")
    codec = _codec(header.group(1) if header else None)
    if codec is None:
        meta = _META_CHARSET.search(body[:4096])
        codec = _codec(meta.group(1) if meta else None)
        if codec is not None and codec.startswith("utf-16"):
            codec = "utf-8"  # an ASCII-compatible page cannot really be UTF-16
    if codec is not None:
        with suppress(LookupError, UnicodeError):  # _codec vetted it; never let a page raise
            return body.decode(codec, "replace"), codec
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return body.decode("cp1252", "replace"), "cp1252"


def _media_type(content_type: str | None) -> str | None:
    return content_type.split(";", 1)[0].strip().lower() or None if content_type else None


def host_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{(parts.hostname or '').lower()}:{parts.port or parts.scheme}"


class PageFetcher:
    """Fetch pages politely and safely. Thread-safe; ``fetch_many`` runs them in parallel."""

    def __init__(
        self,
        settings: Settings,
        cache: ResponseCache,
        *,
        client: httpx.Client | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._settings = settings
        self._cache = cache
        self._env: Mapping[str, str] = env if env is not None else {}  # ${NAME} in a page URL
        self._names = settings.secret_url_parameters
        self._allow_private = private_addresses_allowed(settings)
        self._allowed = allowed_networks(settings)
        self._own_client = client is None
        self._http: httpx.Client | None = client
        self._http_lock = threading.Lock()
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._slots_lock = threading.Lock()

    @property
    def _client(self) -> httpx.Client:
        """Made at the first page: an audit without pages never loads httpx."""
        with self._http_lock:
            if self._http is None:
                import httpx

                from crawler.upstream.network import client_transports

                self._http = httpx.Client(
                    **client_transports(proxies=False),  # direct: see the module docstring
                    timeout=self._settings.timeout,
                    headers={"User-Agent": USER_AGENT},
                    follow_redirects=False,
                )
            return self._http

    def close(self) -> None:
        if self._own_client and self._http is not None:
            self._http.close()

    def __enter__(self) -> PageFetcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _host_slot(self, url: str) -> Iterator[None]:
        with self._slots_lock:
            slot = self._slots.setdefault(
                host_key(url), threading.BoundedSemaphore(self._settings.per_host_concurrency)
            )
        with slot:
            yield

    def shown(self, url: str) -> str:
        """``url`` as it is shown and stored (crawler.untrusted.shown_url, with the names of
        ``settings.secret_url_parameters``)."""
        return shown_url(url, self._names)

    def fetch(self, url: str) -> FetchedPage:
        """GET one page (conditional when cached); PageFetchError on any failure, expected or
        not, so that one hostile page can only fail itself. ``url`` is as configured: its
        ``${NAME}`` references are expanded here, and what comes back names it as ``shown``
        makes it (never the credentials it was fetched with)."""
        import httpx

        from crawler.config.credentials import expand_environment
        from crawler.upstream.deadline import deadline, deadline_passed

        shown = self.shown(url)
        try:
            real = expand_environment(url, self._env)
        except ValueError as exc:
            raise PageFetchError(f"{shown}: {exc}") from None
        secrets = [*secrets_in_url(real, self._names), *secrets_in_url(url, self._names)]
        try:
            _ = urlsplit(real).port  # urllib refuses a bad port or an unclosed IPv6 bracket here
        except ValueError as exc:
            raise PageFetchError(redact(f"invalid URL {shown}: {exc}", *secrets)) from None
        try:
            with self._host_slot(real), deadline(self._settings.request_deadline):
                try:
                    return self._fetch(url, real, secrets)
                except httpx.TimeoutException:
                    if not deadline_passed():
                        raise
                    message = (
                        f"{shown} took longer than the request deadline of "
                        f"{self._settings.request_deadline:g}s (settings.request_deadline)"
                    )
                    raise PageFetchError(message) from None
        except PageFetchError as exc:
            raise PageFetchError(redact(exc.message, *secrets), status=exc.status) from None
        except httpx.TimeoutException:
            message = f"timed out after {self._settings.timeout}s fetching {shown}"
            raise PageFetchError(redact(message, *secrets)) from None
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError) as exc:
            message = f"fetching {shown} failed: {type(exc).__name__}: {exc}"
            raise PageFetchError(redact(message, *secrets)) from None
        except Exception as exc:  # anything else from one page is an error for that page only
            message = f"fetching {shown} failed unexpectedly: {type(exc).__name__}: {exc}"
            raise PageFetchError(redact(message, *secrets)) from exc

    def fetch_many(self, urls: Iterable[str]) -> dict[str, FetchedPage | PageFetchError]:
        """Fetch in parallel, at most ``settings.per_host_concurrency`` at a time per host."""
        unique = list(dict.fromkeys(urls))
        if not unique:
            return {}
        by_host: dict[str, list[str]] = {}
        for url in unique:
            by_host.setdefault(host_key(url), []).append(url)
        # round-robin over hosts so one slow host's queue does not hold every worker
        queues = list(by_host.values())
        order = [q[i] for i in range(max(map(len, queues))) for q in queues if i < len(q)]
        workers = min(len(unique), MAX_WORKERS, len(queues) * self._settings.per_host_concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="page-fetch") as pool:
            futures = {url: pool.submit(self._fetch_or_error, url) for url in order}
            return {url: futures[url].result() for url in unique}

    def _fetch_or_error(self, url: str) -> FetchedPage | PageFetchError:
        try:
            return self.fetch(url)
        except PageFetchError as exc:
            return exc

    def _fetch(self, url: str, real: str, secrets: list[str]) -> FetchedPage:
        """``url`` as configured (the cache key: a rotated credential keeps the validators),
        fetched as ``real`` (its credentials expanded)."""
        key = cache_key("GET", url, ACCEPT, "anonymous")
        cached = self._cache.get_response(key)
        headers = {"Accept": ACCEPT}
        if cached is not None and cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached is not None and cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
        current = real
        for _ in range(MAX_REDIRECTS + 1):
            check_url(current, allow_private=self._allow_private, allowed=self._allowed)
            request = self._client.build_request("GET", current, headers=headers)
            response = self._client.send(request, stream=True, follow_redirects=False)
            try:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    current = urljoin(current, location.strip())
                    secrets.extend(secrets_in_url(current, self._names))
                    continue
                return self._finish(url, current, response, cached, key)
            finally:
                response.close()
        raise PageFetchError(f"more than {MAX_REDIRECTS} redirects fetching {self.shown(url)}")

    def _finish(
        self,
        url: str,
        final: str,
        response: httpx.Response,
        cached: CachedResponse | None,
        key: str,
    ) -> FetchedPage:
        status = response.status_code
        if status == 304 and cached is not None:
            body, content_type = cached.body, cached.content_type
        elif 200 <= status < 300:
            body = self._read_capped(response, final)
            content_type = response.headers.get("content-type")
            etag, modified = response.headers.get("etag"), response.headers.get("last-modified")
            if etag or modified:  # stored under the URL as shown: the database holds no secret
                entry = CachedResponse(self.shown(url), etag, modified, body, content_type)
                self._cache.put_response(key, entry)
        else:
            raise PageFetchError(f"HTTP {status} from {self.shown(final)}", status=status)
        text, codec = decode_body(body, content_type)
        return FetchedPage(
            url=self.shown(url),
            body=text,
            content_type=_media_type(content_type),
            status=status,
            from_cache=status == 304,
            final_url=self.shown(final),
            charset=codec,
        )

    def _read_capped(self, response: httpx.Response, url: str) -> bytes:
        limit = self._settings.page_size_limit
        hint = "raise settings.page_size_limit in sources.yaml if the page is legitimate"
        length = response.headers.get("content-length", "").strip()
        if length.isdigit() and int(length) > limit:
            raise PageFetchError(
                f"{self.shown(url)} is {int(length)} bytes, over the page size limit "
                f"of {limit} bytes: {hint}"
            )
        chunks: list[bytes] = []
        total = 0
        for chunk in response.iter_bytes():  # a dripping body is cut off by the deadline
            total += len(chunk)
            if total > limit:
                raise PageFetchError(
                    f"{self.shown(url)} is larger than the page size limit of {limit} bytes "
                    f"(stopped reading): {hint}"
                )
            chunks.append(chunk)
        return b"".join(chunks)


def _load(source: str, settings: Settings) -> tuple[str, str | None, str]:
    """(text, content type, location) of a URL (fetched) or a local file."""
    if re.match(r"^https?://", source, re.IGNORECASE):
        with PageFetcher(settings, MemoryCache(), env=os.environ) as fetcher:
            page = fetcher.fetch(source)
        return page.body, page.content_type, page.final_url or page.url
    path = Path(source)
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or a device would never end
            raise PageFetchError(f"cannot read {source}: not a regular file")
        with path.open("rb") as handle:
            data = handle.read(settings.page_size_limit + 1)
    except OSError as exc:
        raise PageFetchError(f"cannot read {source}: {exc.strerror or exc}") from None
    if len(data) > settings.page_size_limit:
        raise PageFetchError(
            f"{source} is larger than the page size limit of {settings.page_size_limit} bytes"
        )
    return decode_body(data, None)[0], None, source


def preview_page_json(
    source: str,
    *,
    table_selector: str | None,
    heading: str | None,
    key: tuple[str, ...],
    settings: Settings,
    pins: Mapping[str, str] | None = None,
    items: str | None = None,
    labels: tuple[str, ...] = (),
    form: str | None = None,
) -> dict[str, Any]:
    """What ``crawler page --json`` prints: every table found (a KEY=VALUE file's keys), or
    the rows of the one selected. PageFetchError or ExtractionError on any failure."""
    from crawler.analysis.pages import ExtractionError, form_of, preview
    from crawler.config import TableSpec

    body, content_type, location = _load(source, settings)
    chosen = None
    if table_selector or heading or items or key:
        # built unchecked: a preview may show a table before its key is chosen
        chosen = TableSpec.model_construct(
            name=table_selector or heading or items or "table",
            selector=table_selector,
            heading=heading,
            key=("Item",) if items else key,
            items=items,
            labels=labels,
        )
    try:
        data = preview(body, form_of(form, location, content_type), chosen, dict(pins or {}),
                       settings.pin_text_limit)  # fmt: skip
    except ExtractionError:
        raise
    except Exception as exc:  # a parser failure on a hostile page: a message, no traceback
        raise ExtractionError(f"cannot extract from {source}: {type(exc).__name__}: {exc}") from exc
    return {"source": source, **data}
