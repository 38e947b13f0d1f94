"""The links a document cites: Markdown (as GitHub renders it: inline links, references,
autolinks, bare URLs, tables, and the HTML inside it), HTML (``<a href>``), and the
catalog's JSON (every ``url``). Text in, links out; no I/O.

Only absolute http(s) links are kept (a relative link points into the document's own
repository); the fragment is dropped (a server never sees it), and each link is kept once, at
its first line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from crawler.patterns import PatternTimeout, search

MAX_LINKS = 5000  # links one document may cite (a hostile file cannot make a night of it)
MAX_URL = 2048
# forge hosts whose repository pages the forge's API answers for: host -> registry name
FORGE_HOSTS = {"github.com": "github", "gitee.com": "gitee", "gitlab.com": "gitlab"}
_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_TWO_PARTS = re.compile(rf"^/({_NAME})/({_NAME}?)(?:\.git)?/?$")
# first segments of site pages shaped like owner/name (github.com/orgs/x, /topics/x…): no owner
_NOT_OWNERS = frozenset({
    "about", "apps", "collections", "codespaces", "contact", "customer-stories", "enterprise",
    "events", "explore", "features", "issues", "join", "login", "marketplace", "notifications",
    "orgs", "organizations", "pricing", "pulls", "readme", "search", "security", "settings",
    "site", "sponsors", "team", "topics", "trending", "users",
})  # fmt: skip
_GROUP_PATH = re.compile(rf"^/((?:{_NAME}/){{1,19}}{_NAME})/?$")  # never a '/-/' page


@dataclass(frozen=True)
class CitedLink:
    url: str
    line: int | None  # 1-based, where the document has lines
    where: str  # ``line 12``, ``projects[3].evidence[0].url``


def checkable(url: str) -> str | None:
    """The URL as it is checked (no fragment, no surrounding space), or None when it is not an
    absolute http(s) link of a sensible length."""
    url = url.strip()
    if len(url) > MAX_URL or not re.match(r"^https?://[^/\s?#]+", url, re.IGNORECASE):
        return None
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return None
    return parts._replace(fragment="").geturl()


def forge_repository(
    url: str, hosts: Mapping[str, str] = FORGE_HOSTS
) -> tuple[str, str] | None:
    """(registry, owner/name) when ``url`` is a repository's own page on a known forge
    (``https://github.com/jax-ml/jax``; ``hosts``: ``host[:port]`` → registry name), None for
    anything else (a file, an issue, a user). GitLab's groups nest: ``group/sub/project``."""
    parts = urlsplit(url)
    forge = hosts.get(parts.netloc.rpartition("@")[2].lower())
    if forge is None or parts.query:
        return None
    if forge == "gitlab":
        match = _GROUP_PATH.match(parts.path)
        return (forge, match.group(1).removesuffix(".git")) if match else None
    match = _TWO_PARTS.match(parts.path)
    if match is None or not match.group(2) or match.group(1).lower() in _NOT_OWNERS:
        return None
    return forge, f"{match.group(1)}/{match.group(2).removesuffix('.git')}"


def excluded(url: str, patterns: Sequence[str]) -> bool:
    """``url`` matches one of ``settings.links_exclude`` (a pattern that runs out of time on it
    excludes nothing: the link is checked)."""
    for pattern in patterns:
        try:
            if search(pattern, url, subject=f"link {url[:200]}"):
                return True
        except PatternTimeout:
            continue
    return False


def _kept(found: Iterator[tuple[str, int | None, str]]) -> list[CitedLink]:
    links: dict[str, CitedLink] = {}
    for raw, line, where in found:
        url = checkable(raw)
        if url is not None and url not in links:
            links[url] = CitedLink(url, line, where)
            if len(links) >= MAX_LINKS:
                break
    return list(links.values())


def _html_links(text: str, first_line: int = 1) -> Iterator[tuple[str, int | None, str]]:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "html.parser")  # html.parser keeps each tag's source line
    for anchor in soup.find_all("a", href=True):
        href = anchor.get("href")
        if isinstance(href, str):
            line = (anchor.sourceline or 1) + first_line - 1
            yield href, line, f"line {line}"


def html_links(text: str) -> list[CitedLink]:
    return _kept(_html_links(text))


def _markdown_links(text: str) -> Iterator[tuple[str, int | None, str]]:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("gfm-like")  # CommonMark, tables, and bare URLs linkified as GitHub does
    line: int | None = None
    for token in parser.parse(text):  # a table row's cells carry no line: the row's is kept
        line = token.map[0] + 1 if token.map else line
        if token.type == "html_block":
            yield from _html_links(token.content, line or 1)
        for child in token.children or ():
            if child.type == "link_open" and isinstance(child.attrs.get("href"), str):
                yield str(child.attrs["href"]), line, f"line {line}" if line else "inline"
            elif child.type == "html_inline":
                yield from _html_links(child.content, line or 1)


def markdown_links(text: str) -> list[CitedLink]:
    return _kept(_markdown_links(text))


def document_links(text: str, *, name: str) -> list[CitedLink]:
    """The links of a Markdown or HTML document, told apart by its name (``.html``/``.htm``
    is HTML, anything else is read as Markdown, which also finds the HTML inside it)."""
    if name.lower().endswith((".html", ".htm", ".xhtml")):
        return html_links(text)
    return markdown_links(text)


def _json_urls(value: Any, path: str) -> Iterator[tuple[str, int | None, str]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key == "url" and isinstance(item, str):
                yield item, None, where
            else:
                yield from _json_urls(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _json_urls(item, f"{path}[{index}]")


def catalog_links(catalog: Mapping[str, Any]) -> list[tuple[str, CitedLink]]:
    """(record name, link) for every ``url`` of a catalog's projects, platforms and
    integrations; the record is named by its ``name``, else its ``id``."""
    found: list[tuple[str, CitedLink]] = []
    for collection in ("projects", "platforms", "integrations"):
        records = catalog.get(collection)
        for index, record in enumerate(records if isinstance(records, list) else ()):
            if not isinstance(record, Mapping):
                continue
            label = record.get("name") or record.get("id") or f"{collection}[{index}]"
            for link in _kept(_json_urls(record, f"{collection}[{index}]")):
                found.append((str(label), link))
    return found[:MAX_LINKS]
