"""Untrusted upstream text and URLs, made safe to show. Pure.

Text becomes one line without control, bidi or zero-width characters, capped (the template
HTML-escapes it); a URL is kept as a link target only when it is http(s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crawler.export.integrations import is_http_url
from crawler.untrusted import one_line, shown_url

MAX_TEXT = 200
MAX_URL = 2048


def text(value: Any, limit: int = MAX_TEXT) -> str:
    """Untrusted text as one safe line ("" for nothing)."""
    if value is None:
        return ""
    line = one_line(value, limit)
    return "" if line == "—" and str(value).strip() != "—" else line


def url(value: Any) -> str | None:
    """A link target: http(s) only, else None (the text is shown unlinked); never with a
    credential in it (crawler.untrusted.shown_url)."""
    if not isinstance(value, str) or len(value) > MAX_URL or not is_http_url(value):
        return None
    if any(ch.isspace() or ord(ch) < 0x20 or ch == "\x7f" for ch in value):
        return None
    return shown_url(value)


@dataclass(frozen=True)
class Part:
    """A run of text, linked when ``href`` is set."""

    text: str
    href: str | None = None
    broken: str = ""  # the link checks found it broken or unreachable: the day last seen working
