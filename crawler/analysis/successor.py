"""A repository's description that says the project lives on elsewhere: "moved to X", "migrated
to X", "now lives at X" (the project moved), or "superseded by X", "replaced by X",
"deprecated in favour of X" (this one stopped, X carries on). Text in, a successor out; no I/O.

The description is the upstream's own free text, hence hostile: invisible and bidi characters
are read as spaces, the successor must be a link or a repository path (``owner/name``, a
monorepo path ``owner/name/projects/x``) right after the phrase, and what is kept is capped.
A description that names the repository itself (written before a rename the forge already
followed) names no successor.

A README is read the same way, but only its top (``readme_top``): the banner before its first
heading and that heading's own section, where "this project moved" notices stand. The rest of
a README names other projects for every reason (dependencies, forks, partners, mirrors).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from crawler.untrusted import visible

if TYPE_CHECKING:  # markdown-it and bs4 load only when a README is read (an unchanged night
    from markdown_it import MarkdownIt  # loads no heavy module)
    from markdown_it.token import Token

README_READ = 16_384  # characters of a README read at most: a notice stands at its top
README_KEPT = 2_000  # characters of its top kept (and read for a successor)

MAX_TARGET = 300  # characters of a successor as written
MAX_URL = 2048
SuccessorKind = Literal["moved", "superseded"]

# the phrase, then what may stand between it and the successor ("the new repository: ")
_MOVED = r"(?:moved|migrated|relocated|transferred)\s+(?:permanently\s+)?(?:to|into|under)"
_LIVES = r"now\s+(?:lives|hosted|maintained|developed)\s+(?:at|in|on|under)"
_CONTINUES = r"development\s+(?:continues|has\s+continued)\s+(?:at|in|on|under)"
_SUPERSEDED = r"superseded\s+by|replaced\s+by|(?:deprecated|archived)\s+in\s+favou?r\s+of"
_PHRASE = re.compile(
    rf"\b(?:(?P<moved>{_MOVED}|{_LIVES}|{_CONTINUES})|(?P<superseded>{_SUPERSEDED}))"
    r"\s*:?\s*(?:the\s+)?(?:new\s+|official\s+|upstream\s+)?"
    r"(?:(?:repository|repo|project|home|location|monorepo)\b\s*(?:at\s+|in\s+)?[:\-–—]?\s*)?",
    re.IGNORECASE,
)
_MARKDOWN_LINK = re.compile(r"\[[^\]\n]{0,300}\]\((https?://[^\s()<>]{1,2048})\)")
_URL = re.compile(r"https?://[^\s<>()\[\]\"'`]{1,2048}", re.IGNORECASE)
_BARE_HOST = re.compile(
    r"(?:www\.)?(?:github\.com|gitlab\.com|gitee\.com|codeberg\.org)/[^\s<>()\[\]\"'`]{1,2000}",
    re.IGNORECASE,
)
_PATH = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}(?:/[A-Za-z0-9_.-]{1,100}){1,6}(?![A-Za-z0-9_.-])"
)
_TRAILING = ".,;:!?)]}>'\"`*_"
_WORDS = frozenset({"and/or", "either/or", "he/she", "input/output", "read/write"})


@dataclass(frozen=True)
class Successor:
    """Where the description says the project lives on."""

    kind: SuccessorKind  # moved: the project goes on there; superseded: this one stopped
    phrase: str  # the words that said so, normalised ("superseded by")
    target: str  # the successor as written: a URL or a repository path
    url: str | None  # its web page: the URL, or the path on this repository's forge

    @property
    def stopped(self) -> bool:
        """This upstream stopped (its maturity is worth a look), not only moved."""
        return self.kind == "superseded"


def _clean(text: str) -> str:
    return " ".join(visible(text).split())


def _target_at(text: str) -> tuple[str, str | None, bool] | None:
    """(the successor as written, its URL, whether it was written as a link) at the start of
    ``text``; a link past the URL cap has no URL."""
    text = text.lstrip("[(<`\"'*_ ")
    for pattern, is_url in ((_URL, True), (_BARE_HOST, True), (_PATH, False)):
        found = pattern.match(text)
        if found is None:
            continue
        target = found.group(0).rstrip(_TRAILING)
        if not is_url:
            if target.lower() in _WORDS or not re.search(r"[A-Za-z]", target.split("/")[1]):
                return None  # "and/or", "1/2": not a repository
            return target[:MAX_TARGET], None, False
        url = target if target.lower().startswith("http") else f"https://{target}"
        return target[:MAX_TARGET], url if len(url) <= MAX_URL else None, True
    return None


def _forge_base(repo_url: str, full_name: str) -> str | None:
    """``https://github.com`` of ``https://github.com/org/name`` (the page of ``org/name``)."""
    if not full_name or not repo_url.lower().rstrip("/").endswith("/" + full_name.lower()):
        return None
    return repo_url.rstrip("/")[: -len(full_name) - 1]


def _is_itself(url: str | None, target: str, repo_url: str, full_name: str) -> bool:
    own = full_name.lower()
    if url is None:
        return target.lower().rstrip("/").removesuffix(".git") == own
    parts = urlsplit(url)
    mine = urlsplit(repo_url)
    path = parts.path.strip("/").lower().removesuffix(".git")
    return (parts.hostname or "").lower() == (mine.hostname or "").lower() and path == own


_FORGE_HOSTS = frozenset({"github.com", "gitlab.com", "gitee.com", "codeberg.org", "gitcode.com"})


def _names_a_repository(url: str | None, repo_url: str) -> bool:
    """A repository's page (a forge host, or this repository's own, and at least
    ``owner/name``), not a documentation page: a README says "replaced by [Strongly Typed
    Networks](https://docs…)" of an API, which names no successor of the project."""
    if url is None:
        return True  # a bare owner/name path: a repository on this repository's forge
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().removeprefix("www.")
    own = (urlsplit(repo_url).hostname or "").lower()
    segments = [s for s in parts.path.split("/") if s]
    return (host in _FORGE_HOSTS or host == own) and len(segments) >= 2 and not parts.fragment


def successor_in(
    description: str | None,
    repo_url: str = "",
    full_name: str = "",
    forge: str = "",
    *,
    repository_only: bool = False,
) -> Successor | None:
    """The successor ``description`` names, or None. ``repo_url``, ``full_name`` and ``forge``
    are the repository's own: a bare path is taken to live on the same forge, its page that
    of the repository it names (``owner/name`` of ``owner/name/projects/x``; GitLab's groups
    nest, so there the whole path). ``repository_only`` (a README's top, which speaks of APIs
    and features too): only a repository counts as a successor, never another page."""
    if not description:
        return None
    text = _clean(description[:4000])
    for match in _PHRASE.finditer(text):
        rest = text[match.end() :]
        markdown = _MARKDOWN_LINK.match(rest)
        found = (markdown.group(1), markdown.group(1), True) if markdown else _target_at(rest)
        if found is None:
            continue
        target, url, linked = found
        if not linked:
            base = _forge_base(repo_url, full_name)
            repository = target if forge == "gitlab" else "/".join(target.split("/")[:2])
            url = f"{base}/{repository.removesuffix('.git')}" if base else None
        if _is_itself(url, target, repo_url, full_name):
            continue
        if repository_only and linked and not _names_a_repository(url, repo_url):
            continue
        kind: SuccessorKind = "moved" if match.group("moved") else "superseded"
        phrase = " ".join((match.group("moved") or match.group("superseded")).lower().split())
        return Successor(kind, phrase, target[:MAX_TARGET], url)
    return None


def _inline(children: list[Token]) -> str:
    """An inline run as text, links kept as ``[text](url)`` (the phrase reader reads them);
    images, inline HTML and a link with no words (a badge) dropped."""
    parts: list[str] = []
    opened: list[tuple[int, str | None]] = []  # (where the link's words start, its href)
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "link_open":
            href = child.attrs.get("href")
            opened.append((len(parts), href if isinstance(href, str) else None))
        elif child.type == "link_close" and opened:
            start, href = opened.pop()
            words = "".join(parts[start:]).strip()
            del parts[start:]
            if words:
                parts.append(f"[{words}]({href})" if href else words)
    return "".join(parts)


def _html_text(html: str) -> str:
    """An HTML block's words (a ``<p align="center">`` banner), its links as ``[text](url)``."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for anchor in soup.find_all("a"):
        href = anchor.get("href")
        anchor.replace_with(f"[{anchor.get_text(' ', strip=True)}]({href})" if href else
                            anchor.get_text(" ", strip=True))  # fmt: skip
    return soup.get_text(" ")


@functools.cache
def _markdown() -> MarkdownIt:
    """One CommonMark parser for every README (building one costs more than reading a short
    README), its rule chains compiled before it is shared: parsing then only reads it."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark")
    parser.parse("# a\n\n> [b](c) *d* `e`\n")
    return parser


def _top_tokens(text: str) -> list[Token]:
    """``MarkdownIt.parse`` of ``text`` up to its second heading: the blocks of the whole text
    (a link reference defined further down still counts), the inline runs of the top only
    (what ``readme_top`` reads; inline parsing is most of the cost of a long README, and each
    run is parsed on its own, so those kept read as in a whole parse)."""
    from markdown_it.rules_core import StateCore
    from markdown_it.rules_core import block as block_rule

    parser = _markdown()
    state = StateCore(text, parser, {})
    for rule in parser.core.ruler.getRules(""):
        rule(state)
        if rule is block_rule:
            heads = [i for i, token in enumerate(state.tokens) if token.type == "heading_open"]
            if len(heads) > 1:
                del state.tokens[heads[1] :]
    return state.tokens


def readme_top(text: str) -> str:
    """The top of a README as plain text, one block a line, where a "this project moved" notice
    stands: what comes before its first heading (a banner, a ``> [!WARNING]`` notice, an HTML
    ``<p>``) when that says anything, otherwise the first heading (the title) and its section
    up to the next heading. Code blocks, images, badges and HTML comments are left out. Read
    from the first ``README_READ`` characters, kept to ``README_KEPT``. Pure."""
    tokens = _top_tokens(text[:README_READ])
    lines: list[str] = []
    headings = 0
    for token in tokens:
        if token.type == "heading_open":
            headings += 1
            if headings == 2 or (headings == 1 and lines):
                break  # the preamble said something: it is the top; else the title's section
            continue
        if token.type == "inline":
            line = _inline(token.children or [])
        elif token.type == "html_block" and not token.content.lstrip().startswith("<!--"):
            line = _html_text(token.content)
        else:
            continue
        line = " ".join(visible(line).split())
        if line:
            lines.append(line)
    return "\n".join(lines)[:README_KEPT]
