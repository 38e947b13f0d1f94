"""One git repository over smart HTTP, through the crawler's shared HTTP client
(``crawler.upstream.json_api.JsonApi.exchange``): the environment's proxies and CA bundle,
retries, one deadline per request, the answer size cap. Every host is checked by the
private-address guard before it is asked (``crawler.upstream.pages.check_url``: the URL comes
from sources.yaml, like a page's), and so is every redirect's target.

Only the first request follows redirects, as git itself does (``http.followRedirects``'s
default): a repository moved with a redirect is asked at its new address from then on and
reported moved. A POST that is redirected, an answer that is not git's (a dumb HTTP server's
files, an HTML page), a 404 or a 401 is a SourceError, never an empty repository.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from crawler.upstream.http import USER_AGENT
from crawler.upstream.pages import PageFetchError, check_url, display_url
from crawler.upstream.source import SourceError
from crawler.upstream.sources.git import wire

if TYPE_CHECKING:
    from dulwich.objects import ShaFile

    from crawler.upstream.json_api import ApiResponse, JsonApi

SERVICE = "info/refs?service=git-upload-pack"
# GitHub, Bitbucket and others answer the smart protocol only to an agent that starts "git/"
# (as libgit2 and dulwich send); the rest says who we are
V2 = {"Git-Protocol": "version=2", "User-Agent": f"git/2.0 ({USER_AGENT})"}
BATCH = 100  # objects asked for in one fetch: a hundred commits are some 30 KB
# bytes of one fetch's answer: inflating it (zlib: 1,032 to 1 at most) stays within memory
OBJECTS_LIMIT = 1024 * 1024
MISSING_HINT = "deleted, private, or moved without a redirect: fix 'git' in sources.yaml"


@dataclass(frozen=True)
class Refs:
    """A repository's refs as its server listed them, and where it answered from."""

    url: str  # the repository's URL after redirects (as configured when it did not move)
    listing: wire.RefListing
    capabilities: frozenset[bytes]
    version: int
    source_url: str  # the request whose answer listed the refs: the evidence


class GitRemote:
    """One repository: ``refs()`` first, then ``objects()`` as often as needed."""

    def __init__(self, api: JsonApi, url: str, *, allow_private: bool) -> None:
        self.api = api
        self.url = url.rstrip("/")
        self._allow_private = allow_private

    def _guard(self, url: str) -> None:
        try:
            check_url(url, allow_private=self._allow_private)
        except PageFetchError as exc:
            raise SourceError(exc.message, display_url(url)) from None
        if urlsplit(url).scheme.lower() == "http" and not self._allow_private:
            raise SourceError(
                f"refusing {display_url(url)}: plain http:// is read only where private "
                "addresses are allowed (tests, an intranet mirror); use https://",
                display_url(url),
            )

    def refs(self) -> Refs:
        """HEAD, the branch it points at, and the tags (annotated ones peeled)."""
        first = f"{self.url}/{SERVICE}"
        self._guard(first)
        response = self.api.exchange(first, headers=V2, allow=(401, 403, 404))
        url = self._moved_to(response)  # a redirect to a sign-in page says so, even as a 404
        self._refused(response, url)
        advert = wire.advertisement(self._git_answer(response, wire.ADVERTISEMENT))
        if advert.refs is not None:
            return Refs(url, advert.refs, advert.capabilities, 0, response.url)
        if b"ls-refs" not in advert.capabilities and not any(
            c.startswith(b"ls-refs=") for c in advert.capabilities
        ):
            raise SourceError(f"{self.api.name} at {url} speaks protocol v2 without ls-refs", first)
        listing, where = self._post(url, wire.ls_refs_request())
        return Refs(url, wire.ls_refs(listing), advert.capabilities, 2, where)

    def objects(self, refs: Refs, wants: list[str], *, deepen: bool) -> dict[str, ShaFile]:
        """The objects named (commits without history, trees and blobs alone), by id, asked
        for BATCH at a time; {} when the server cannot fetch them filtered (nothing is asked
        then). An answer is capped at OBJECTS_LIMIT: what it can inflate to stays bounded."""
        if not wants or refs.version != 2 or not wire.can_fetch_filtered(refs.capabilities):
            return {}
        found: dict[str, ShaFile] = {}
        unique = list(dict.fromkeys(wants))
        for start in range(0, len(unique), BATCH):
            batch = unique[start : start + BATCH]
            request = wire.fetch_request(batch, deepen=deepen)
            answer, _where = self._post(refs.url, request, limit=OBJECTS_LIMIT)
            found.update((obj.id.decode("ascii"), obj)
                         for obj in wire.fetch_answer(answer, len(batch)))  # fmt: skip
        return {sha: found[sha] for sha in unique if sha in found}

    # -- one exchange --------------------------------------------------------------------------

    def _post(self, url: str, body: bytes, limit: int | None = None) -> tuple[bytes, str]:
        """The answer's body and the URL it came from."""
        target = f"{url}/git-upload-pack"
        headers = {**V2, "Content-Type": wire.REQUEST, "Accept": wire.RESULT}
        response = self.api.exchange(
            target, method="POST", content=body, headers=headers, allow=(401, 403, 404),
            follow_redirects=False, limit=limit,
        )  # fmt: skip
        self._refused(response, url)
        if 300 <= response.status < 400:
            where = display_url(response.headers.get("location", "elsewhere"))
            raise SourceError(
                f"{self.api.name} redirected git-upload-pack of {url} to {where} (not followed "
                "after the first request, as git does not)",
                target,
                response.status,
            )
        return self._git_answer(response, wire.RESULT), response.url

    def _refused(self, response: ApiResponse, url: str) -> None:
        status = response.status
        where = self.url if url == self.url else f"{self.url} (redirected to {url})"
        if status == 404:
            raise SourceError(
                f"repository {where} not found on its git server (HTTP 404): {MISSING_HINT}",
                response.url,
                404,
            )
        if status in (401, 403):
            raise SourceError(
                f"{where} asks for credentials (HTTP {status}): git servers answer so for a "
                f"repository they do not show; {MISSING_HINT}",
                response.url,
                status,
            )

    def _moved_to(self, response: ApiResponse) -> str:
        """The repository's URL after the first request's redirects."""
        final = response.final_url or response.url
        base, _, query = final.partition("?")
        if not base.endswith("/info/refs") or query != SERVICE.partition("?")[2]:
            raise SourceError(
                f"{self.url} redirected to {display_url(final)}, which is not a git "
                "repository's address (a sign-in or a web page?)",
                response.url,
            )
        moved = base.removesuffix("/info/refs")
        if moved != self.url:
            self._guard(final)  # a redirect off the host was guarded; this one is the same rule
        return moved

    def _git_answer(self, response: ApiResponse, expected: str) -> bytes:
        """The body, when its content type says it is git's smart protocol."""
        kind = (response.headers.get("content-type") or "").split(";")[0].strip().lower()
        body: bytes = response.data or b""
        if kind == expected:
            return body
        if kind in ("text/html", "application/xhtml+xml") or body.lstrip()[:1] == b"<":
            what = "an HTML page"
        elif expected == wire.ADVERTISEMENT:
            what = f"'{kind or 'no content type'}': a dumb HTTP server (files only)"
        else:
            what = f"'{kind or 'no content type'}'"
        raise SourceError(
            f"{display_url(response.final_url or response.url)} answered {what}, not git's smart "
            "HTTP protocol: is this a git repository's URL?",
            response.url,
            response.status,
        )
