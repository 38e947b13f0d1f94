"""Rules every output shares for text it did not write itself. Pure, no crawler imports.

* ``INVISIBLE``: characters a reader cannot see but a renderer or a terminal acts on (control
  characters, zero-width and bidi controls, Unicode tag characters, fillers, variation
  selectors). report.md, snapshot.md, the Explorer, catalog.json and the terminal all replace
  them the same way: with a space, that one-line text then collapses.
* ``redact``: a secret never leaves the process as itself, nor lower- or upper-cased,
  percent- or base64-encoded, broken by white space, or in pieces of ``MIN_PIECE`` characters
  or more; an echoed ``Authorization:`` header loses its credentials whatever they are.
"""

from __future__ import annotations

import base64
import os
import re
import stat
from collections.abc import Iterable
from functools import lru_cache, partial
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

# C0 and C1 controls but tab and newline; soft hyphen; the combining grapheme joiner; Arabic,
# Syriac and other prepended format marks; Hangul and Khmer fillers; Mongolian variation
# selectors and vowel separator; zero-width characters, bidi embeddings, overrides and
# isolates; invisible operators; variation selectors; BOM; interlinear annotation marks;
# musical formatting; Unicode tag characters and the variation selector supplement.
INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891"
    "\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
MASK = "***"
MIN_PIECE = 12  # this many characters of a secret, in a row, are the secret
SHORT_SECRET = 8  # shorter secrets are masked only as whole words (never inside another word)
# "Authorization: Basic dXNlcjpwYXNz", "authorization=token abc", "Proxy-Authorization: …"
_AUTH_HEADER = re.compile(
    r"""(?i)\b((?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:[a-z][a-z0-9-]*[ \t]+)?)"""
    r"""([^\s"',;}\]]+)"""
)
_RUN = re.compile(r"[A-Za-z0-9_\-+/=%.~]{" + str(MIN_PIECE) + ",}")


MAX_CELL = 200  # a table cell or a terminal line of upstream text, at most
# Terminal escape sequences, removed whole (payload included): OSC (window title, OSC 8
# hyperlinks), DCS/SOS/PM/APC strings, CSI (colours, cursor moves), other ESC sequences; in their
# 7-bit (ESC …) and 8-bit (C1) forms.
_TERMINAL_ESCAPE = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|\x1b[ -/]*[0-~]?"
)


def terminal_text(text: str) -> str:
    """Untrusted multi-line text made safe for a terminal: escape sequences, control, bidi and
    zero-width characters removed; newlines and tabs kept."""
    return INVISIBLE.sub("", _TERMINAL_ESCAPE.sub("", text.replace("\r\n", "\n")))


_SPACES = re.compile(r"\s+")  # compiled once: every cell of a report is one line


def one_line(value: Any, limit: int = MAX_CELL) -> str:
    """Untrusted text made safe for a terminal line: no control characters, capped."""
    if value is None:
        return "—"
    text = INVISIBLE.sub(" ", _TERMINAL_ESCAPE.sub("", str(value)))
    text = _SPACES.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text or "—"


def visible(text: str) -> str:
    """``text`` with every invisible character replaced by a space."""
    return INVISIBLE.sub(" ", text)


def _b64_forms(secret: bytes) -> list[str]:
    """The base64 text of ``secret`` at each of its three alignments inside a longer value
    (``user:token`` encoded whole), without the characters its neighbours change."""
    forms = []
    for offset in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * offset + secret).decode().rstrip("=")
            skip = (offset * 4 + 2) // 3  # characters that also carry the neighbour's bits
            forms.append(encoded[skip : len(encoded) - (1 if (offset + len(secret)) % 3 else 0)])
    return forms


@lru_cache(maxsize=256)
def _forms(secret: str) -> tuple[str, ...]:
    """Lower-cased spellings of ``secret`` that are searched for; the longest first."""
    raw = secret.encode()
    forms = {secret, quote(secret, safe=""), quote(secret)}
    forms.add(base64.b64encode(raw).decode().rstrip("="))
    forms.add(base64.urlsafe_b64encode(raw).decode().rstrip("="))
    forms.update(f for f in _b64_forms(raw) if len(f) >= MIN_PIECE)
    return tuple(sorted({f.lower() for f in forms if f}, key=len, reverse=True))


@lru_cache(maxsize=256)
def _whole(secret: str) -> re.Pattern[str]:
    """Any spelling of ``secret``, in any case; a long one also broken by white space."""
    gap = r"\s*" if len(secret) >= SHORT_SECRET else ""
    spelled = "|".join(gap.join(re.escape(c) for c in form) for form in _forms(secret))
    if len(secret) < SHORT_SECRET:  # "pw1" must not be cut out of "upw12"
        spelled = rf"(?<![0-9A-Za-z])(?:{spelled})(?![0-9A-Za-z])"
    return re.compile(spelled, re.IGNORECASE)


def _mask_pieces(run: str, forms: tuple[str, ...]) -> str:
    """``run`` with every stretch of ``MIN_PIECE`` or more characters of a form masked."""
    lower = run.lower()
    covered = [False] * len(run)
    for start in range(len(run) - MIN_PIECE + 1):
        window = lower[start : start + MIN_PIECE]
        if any(window in form for form in forms):
            covered[start : start + MIN_PIECE] = [True] * MIN_PIECE
    if not any(covered):
        return run
    out: list[str] = []
    for char, hidden in zip(run, covered, strict=True):
        if not hidden:
            out.append(char)
        elif not out or out[-1] != MASK:
            out.append(MASK)
    return "".join(out)


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` fit to log, store or raise: every spelling and piece of every secret masked,
    and any echoed Authorization header's credentials."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = _whole(secret).sub(MASK, text)
        if len(secret) >= MIN_PIECE:
            text = _RUN.sub(partial(_mask_run, forms=_forms(secret)), text)
    return _AUTH_HEADER.sub(_mask_header, text)


def _mask_run(match: re.Match[str], forms: tuple[str, ...]) -> str:
    return _mask_pieces(match.group(0), forms)


def _mask_header(match: re.Match[str]) -> str:
    return match.group(0) if match.group(2) == MASK else match.group(1) + MASK


# Query parameters whose values are credentials, by name (or by one word of a longer name:
# private_token, client_secret, X-Amz-Signature); settings.secret_url_parameters adds names.
SECRET_QUERY_NAMES = frozenset(
    {"token", "key", "api_key", "apikey", "access_token", "secret", "password", "passwd",
     "signature", "sig"}
)  # fmt: skip
_NAME_WORDS = re.compile(r"[^a-z0-9]+")
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")
_ENV_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")


def shown_url(url: str, secret_names: Iterable[str] = ()) -> str:
    """A URL as it may be shown and stored anywhere (reports, the catalog, the database, logs):
    without its ``user:password@`` and with the value of every secret-looking query parameter
    (SECRET_QUERY_NAMES, and ``secret_names``) replaced by ``***``. Anything else stays as
    written, so the link still leads to the page; a URL that does not parse loses whatever
    stands where its userinfo would."""
    names = {n.lower() for n in secret_names}
    url = _USERINFO.sub(r"\1", url, count=1)
    head, mark, rest = url.partition("?")
    if not mark:
        return url
    query, hash_mark, fragment = rest.partition("#")
    parts = []
    for pair in query.split("&"):
        name, equals, value = pair.partition("=")
        if equals and value and _secret_name(unquote(name), names):
            pair = f"{name}={MASK}"
        parts.append(pair)
    return f"{head}?{'&'.join(parts)}{hash_mark}{fragment}"


def _secret_name(name: str, extra: set[str]) -> bool:
    lower = name.lower()
    if lower in SECRET_QUERY_NAMES or lower in extra:
        return True
    return any(word in SECRET_QUERY_NAMES for word in _NAME_WORDS.split(lower) if word)


def url_secrets(url: str, secret_names: Iterable[str] = ()) -> list[str]:
    """What ``shown_url`` hides of ``url``: its user name and password and the secret-looking
    query values, as written and percent-decoded (for redacting text that quotes them)."""
    found: list[str] = []
    userinfo = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)@", url)
    if userinfo:
        found += [p for p in userinfo.group(1).split(":", 1) if p]
    names = {n.lower() for n in secret_names}
    query = url.partition("?")[2].partition("#")[0]
    for pair in query.split("&") if query else ():
        name, _, value = pair.partition("=")
        if value and _secret_name(unquote(name), names):
            found.append(value)
    # an environment reference (${NAME}) names a secret, it is none; a value of a character or
    # three would mask every such word of a message, and guards nothing
    spelled = {v for f in found for v in (f, unquote(f))}
    values = {v for v in spelled if len(v) >= 4 and not _ENV_REF.fullmatch(v)}
    return sorted(values, key=len, reverse=True)


class UnreadableFile(Exception):
    """A file the user named that is not a regular file, or larger than its limit."""


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; UnreadableFile for a FIFO, a
    device or a directory (never opened for reading: a FIFO would wait for a writer, /dev/zero
    never ends) and for a larger file (not read past the limit). OSError as open() raises it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once, unread
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnreadableFile(f"{path}: not a regular file: pass the path of a file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnreadableFile(
            f"{path}: larger than {limit:,} bytes, the limit for this file: is it the right one?"
        )
    return data
