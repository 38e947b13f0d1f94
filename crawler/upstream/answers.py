"""Reading JSON answers from services we do not control: every field is checked, every string
that will be shown is capped. Shared by the sources' parse modules; pure."""

from __future__ import annotations

import json
import re
from typing import Any

MAX_NAME = 300  # a release name, tag or path shown in a report
MAX_DESCRIPTION = 1000  # a repository's description (GitHub allows 350 characters)


class ShapeError(ValueError):
    """The answer did not have the shape its service documents."""


def cap(value: Any, limit: int = MAX_NAME) -> str | None:
    """Untrusted text, at most ``limit`` characters (an ellipsis marks the cut)."""
    if value is None:
        return None
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def description(value: Any) -> str | None:
    """A repository's description: one line (white space collapsed), capped; None when empty
    or not text."""
    if not isinstance(value, str):
        return None
    return cap(" ".join(value.split()), MAX_DESCRIPTION) or None


def field(obj: Any, *keys: str, service: str) -> Any:
    """``obj[k1][k2]…``; ShapeError naming the field and the service when one is missing or
    null."""
    for key in keys:
        if not isinstance(obj, dict) or obj.get(key) is None:
            raise ShapeError(f"missing field {'.'.join(keys)!r} in {service} answer")
        obj = obj[key]
    return obj


def optional(obj: Any, *keys: str) -> Any:
    """``obj[k1][k2]…``, or None where the path stops."""
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


_ADDRESS = re.compile(
    r"\b(?:\d{1,3}\.){3}\d{1,3}\b|\b(?:[0-9a-f]{1,4}:){2,7}[0-9a-f]{0,4}(?::[0-9a-f]{1,4})*\b",
    re.IGNORECASE,
)
MAX_UPSTREAM_MESSAGE = 120


def upstream_message(body: str | bytes) -> str:
    """What an error answer says, summarised for a report, never its body as sent: the JSON
    ``message`` (or ``error``), whitespace collapsed, IP addresses masked and capped; a rate-limit
    message (GitHub's names the runner's address) as "rate limit exceeded"; a body that is no
    JSON message (an HTML error page) only described."""
    raw = body.encode() if isinstance(body, str) else body
    try:
        parsed = json.loads(raw)
    except ValueError:
        kind = "an HTML page" if raw.lstrip()[:1] == b"<" else "a non-JSON body"
        return f"answered with {kind}" if raw.strip() else "answered with an empty body"
    text = None
    if isinstance(parsed, dict):
        text = next(
            (parsed[k] for k in ("message", "error", "error_description")
             if isinstance(parsed.get(k), str)),
            None,
        )  # fmt: skip
    if text is None:
        return "answered without a message"
    if "rate limit" in text.lower():
        return "rate limit exceeded"
    text = _ADDRESS.sub("<address>", " ".join(text.split()))
    return cap(text, MAX_UPSTREAM_MESSAGE) or ""
