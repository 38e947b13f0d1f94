"""User regular expressions (``pages[].pins``, ``tag_pattern``), bounded in time.

They run on untrusted text (page bodies, upstream tag names), so a pattern with catastrophic
backtracking must not hang an audit: every match goes through the ``regex`` module with a
``timeout``, and a match that runs out of time raises PatternTimeout naming the pattern and
what it was matched against. ``regex`` in its default (VERSION0) mode accepts the ``re`` syntax.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex  # imported where a pattern is compiled: a night without patterns needs none

MATCH_TIMEOUT = 1.0  # seconds one user pattern may spend on one match
# ``regex`` writes counted repeats out when it compiles: (?:(?:a{1000}){1000}){1000} would take
# gigabytes before any match could time out. A pattern whose written-out size passes this is
# refused (100,000 is ~40 MB to compile; a real pin or tag pattern is a few dozen).
MAX_EXPANDED_SIZE = 100_000
_QUANTIFIER = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")
_BRACED_ESCAPES = frozenset("pPNxuUgk")  # \p{L}, \N{name}, \x{41}, \g{1}: not quantifiers


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


def expanded_size(pattern: str) -> int:
    """An upper bound of the pattern's size once its counted repeats are written out: each
    character, class or escape counts 1, a group the sum of its contents, and ``{m,n}``
    multiplies what it follows by n (m when open-ended). Read from the text alone, without
    compiling (an unbalanced pattern is left for the compiler to refuse)."""
    frames: list[int] = [0]  # the size so far of each open group
    last = 0  # the size of the item a quantifier would repeat
    i, end = 0, len(pattern)
    while i < end:
        char = pattern[i]
        if char == "\\":
            i += 2
            if pattern[i - 1 : i] in _BRACED_ESCAPES and pattern[i : i + 1] == "{":
                i = pattern.find("}", i) + 1 or end
            last = 1
        elif char == "[":
            i, last = _skip_class(pattern, i), 1
        elif char == "(":
            frames.append(0)
            i += 1
            continue
        elif char == ")" and len(frames) > 1:
            last = max(frames.pop(), 1)
            i += 1
        elif char == "{" and (quantifier := _QUANTIFIER.match(pattern, i)):
            low, comma, high = quantifier.groups()
            times = int(high) if comma and high else int(low or 0) or 1
            frames[-1] += last * (times - 1)
            last *= times
            i = quantifier.end()
            if frames[-1] > MAX_EXPANDED_SIZE:
                break
            continue
        elif char in "*+?|^$.":
            i += 1
            if char in "|^$":
                continue
            if char == ".":
                last = 1
            else:
                continue
        else:
            i, last = i + 1, 1
        frames[-1] += last
    return sum(frames)


def _skip_class(pattern: str, start: int) -> int:
    """The index after the character class that opens at ``start`` (nested sets too)."""
    i, depth = start + 1, 1
    if pattern[i : i + 1] == "^":
        i += 1
    if pattern[i : i + 1] == "]":
        i += 1
    while i < len(pattern) and depth:
        if pattern[i] == "\\":
            i += 1
        elif pattern[i] == "[":
            depth += 1
        elif pattern[i] == "]":
            depth -= 1
        i += 1
    return i


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """The compiled pattern; ValueError with the reason when it is not a valid expression or
    would take too much memory to compile."""
    if expanded_size(pattern) > MAX_EXPANDED_SIZE:
        raise ValueError(
            f"{pattern!r} repeats too much: its counted repetitions ({{n}}) written out come to "
            f"more than {MAX_EXPANDED_SIZE:,} characters, too large to compile; use + or * "
            "instead of large counts"
        )
    import regex

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
