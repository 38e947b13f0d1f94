"""User regular expressions (``pages[].pins``, ``tag_pattern``), bounded in time.

They run on untrusted text (page bodies, upstream tag names), so a pattern with catastrophic
backtracking must not hang an audit: every match goes through the ``regex`` module with a
``timeout``, and a match that runs out of time raises PatternTimeout naming the pattern and
what it was matched against. ``regex`` in its default (VERSION0) mode accepts the ``re`` syntax.
"""

from __future__ import annotations

from functools import lru_cache

import regex

MATCH_TIMEOUT = 1.0  # seconds one user pattern may spend on one match


def shown(pattern: str) -> str:
    """A pattern quoted as written (``'v\\d+'``, not repr's ``'v\\\\d+'``); control characters
    escaped, so that a message stays one line."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in pattern)
    return f"'{text}'"


class PatternTimeout(ValueError):
    """A user pattern ran out of time on one text."""

    def __init__(self, pattern: str, subject: str, timeout: float) -> None:
        subject = subject if len(subject) <= 120 else subject[:119] + "…"  # may be upstream text
        super().__init__(
            f"pattern {shown(pattern)} took more than {timeout:g}s on {subject}: it backtracks "
            "too much; simplify it (avoid nested quantifiers such as (a+)+)"
        )
        self.pattern = pattern
        self.subject = subject


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """The compiled pattern; ValueError with the reason when it is not a valid expression."""
    try:
        return regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError) as exc:
        raise ValueError(f"{shown(pattern)} is not a valid regular expression: {exc}") from None


def search(
    pattern: str, text: str, *, subject: str, timeout: float = MATCH_TIMEOUT
) -> regex.Match[str] | None:
    """``regex.search`` bounded by ``timeout``; ``subject`` says what ``text`` is, for the error."""
    try:
        return compile_pattern(pattern).search(text, timeout=timeout)
    except TimeoutError:
        raise PatternTimeout(pattern, subject, timeout) from None
