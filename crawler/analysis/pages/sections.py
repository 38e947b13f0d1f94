"""Headings, sections and the page's text in the document model: where a selection looks (a
heading named as a reader names it, the section under it, a CSS selector), and what pins and
text blocks read. Pure: no I/O.

A ``heading:`` names a heading exactly, as a reader would (case, spacing, anchor marks and a
decorating emoji aside); one that is missing is "page layout changed", listing the headings the
page has.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from bs4 import BeautifulSoup, Tag
from bs4.element import NavigableString
from soupsieve import SelectorSyntaxError

from crawler.analysis.pages.cells import (
    MAX_HEADING_CHARS,
    MAX_HEADINGS_LISTED,
    MAX_TEXT_CHARS,
    NON_TEXT,
    ExtractionError,
    attribute,
    normalise_text,
    render_text,
)
from crawler.analysis.placeholders import mark_placeholder
from crawler.patterns import PatternTimeout, search

HEADING_RE = re.compile(r"^h[1-6]$")
_HEADING_BODY = ("table", "div", "p", "ul", "ol", "pre", "section")
_HEADING_JUNK = "¶#🔗§ "


def bare_heading(text: str) -> str:
    """A heading as a reader names it: whitespace collapsed, and the decoration around it
    (anchor marks ``¶ # 🔗 §``, a leading or trailing emoji or symbol) left out."""
    text = normalise_text(text)
    start, end = 0, len(text)
    while start < end and (text[start] in _HEADING_JUNK or _decoration(text[start])):
        start += 1
    while end > start and (text[end - 1] in _HEADING_JUNK or _decoration(text[end - 1])):
        end -= 1
    return text[start:end]


def _decoration(char: str) -> bool:
    return unicodedata.category(char) in ("So", "Sk", "Mn", "Zs", "Cf")


def heading_text(tag: Tag) -> str:
    block = tag.find(_HEADING_BODY)
    if block is None:
        return bare_heading(render_text(tag, links=False))
    # an unclosed heading swallowed what follows it: its title is the text before that
    parts: list[str] = []
    for node in tag.descendants:
        if node is block:
            break
        if isinstance(node, NavigableString) and not isinstance(node, NON_TEXT):
            parts.append(str(node))
    return bare_heading(" ".join(parts))


def headings(soup: BeautifulSoup) -> list[Tag]:
    return [h for h in soup.find_all(HEADING_RE) if isinstance(h, Tag)]


def find_heading(soup: BeautifulSoup, heading: str) -> Tag:
    """The heading whose text is ``heading`` (case and whitespace aside): never a heading
    that merely contains it, which would silently pick another section's table."""
    target = bare_heading(heading).casefold()
    found = headings(soup)
    texts = [heading_text(h) for h in found]
    for tag, text in zip(found, texts, strict=True):
        if text.casefold() == target:
            return tag
    shown = [repr(normalise_text(t, MAX_HEADING_CHARS)) for t in dict.fromkeys(texts) if t]
    listing = ", ".join(shown[:MAX_HEADINGS_LISTED])
    if len(shown) > MAX_HEADINGS_LISTED:
        listing += f", +{len(shown) - MAX_HEADINGS_LISTED} more"
    raise ExtractionError(
        f"page layout changed: heading {heading!r} not found; "
        + (f"the page's headings: {listing}" if listing else "the page has no headings")
    )


def heading_level(tag: Tag) -> int | None:
    """1-6 for a heading element, None for anything else."""
    return int(tag.name[1]) if HEADING_RE.match(tag.name) else None


def scope(soup: BeautifulSoup, selector: str | None, heading: str | None) -> Iterator[Tag]:
    """The elements a selection looks in, in document order: inside the element ``selector``
    matches, under ``heading`` until the next heading of its level or above, or the page."""
    if selector is not None:
        root: Tag = select_one(soup, selector)
        yield from (n for n in root.descendants if isinstance(n, Tag))
        return
    if heading is None:
        yield from (n for n in soup.descendants if isinstance(n, Tag))
        return
    start = find_heading(soup, heading)
    level = heading_level(start) or 6
    for node in start.next_elements:
        if not isinstance(node, Tag):
            continue
        found = heading_level(node)
        if found is not None and found <= level:
            return
        yield node


def section_text(soup: BeautifulSoup, heading: str) -> str:
    """The normalised text under ``heading``, up to the next heading of its level or above."""
    start = find_heading(soup, heading)
    level = heading_level(start) or 6
    parts: list[str] = []
    inside = {id(n) for n in start.descendants}
    for node in start.next_elements:
        if isinstance(node, Tag):
            found = heading_level(node)
            if found is not None and found <= level:
                break
            if node.name == "img":
                parts.append(attribute(node, "alt"))
        elif isinstance(node, NavigableString) and not isinstance(node, NON_TEXT):
            parts.append("" if id(node) in inside else str(node))  # not the heading's own
    return normalise_text(" ".join(parts), MAX_TEXT_CHARS)


def select_one(soup: BeautifulSoup, selector: str) -> Tag:
    """The first element ``selector`` matches; ExtractionError when it is invalid or matches
    nothing."""
    try:
        match = soup.select_one(selector)
    except (SelectorSyntaxError, ValueError, NotImplementedError) as exc:
        raise ExtractionError(f"invalid CSS selector `{selector}`: {exc}") from None
    if match is None:
        raise ExtractionError(f"page layout changed: selector `{selector}` matched nothing")
    return match


def page_text(soup: BeautifulSoup | Tag, limit: int | None = MAX_TEXT_CHARS) -> str:
    """The normalised text of a page or block, whitespace collapsed; an image reads as its
    alt text, as in a cell (a row of vendor logos names the vendors)."""
    parts: list[str] = []
    for node in soup.descendants:
        if isinstance(node, NavigableString):
            if not isinstance(node, NON_TEXT):
                parts.append(str(node))
        elif isinstance(node, Tag) and node.name == "img":
            parts.append(attribute(node, "alt"))
    return normalise_text(" ".join(parts), limit)


def extract_pins(
    text: str, pins: dict[str, str], *, text_limit: int
) -> tuple[tuple[str, str | None], ...]:
    """(name, first group of the pattern's first match in the page text, or None), by name.

    A pattern scans the first ``text_limit`` characters, within ``patterns.MATCH_TIMEOUT``;
    a pin not found in a page cut short, or a pattern out of time, is an ExtractionError (the
    page's last good extraction is kept) rather than a pin that vanished."""
    scanned = text[:text_limit]
    values: list[tuple[str, str | None]] = []
    for pin, pattern in sorted(pins.items()):
        subject = f"the page text ({len(scanned):,} characters)"
        try:
            match = search(pattern, scanned, subject=subject)
        except PatternTimeout as exc:
            raise ExtractionError(f"pin {pin!r}: {exc}") from exc
        except ValueError as exc:
            raise ExtractionError(f"pin {pin!r}: invalid regular expression: {exc}") from None
        if match is None and len(text) > text_limit:
            raise ExtractionError(
                f"pin {pin!r}: not found in the first {text_limit:,} characters of the page "
                f"text ({len(text):,} in all): raise settings.pin_text_limit in sources.yaml "
                "if the page is legitimate"
            )
        value = match.group(1) if match and match.re.groups else None
        values.append((pin, None if value is None else normalise_text(mark_placeholder(value))))
    return tuple(values)
