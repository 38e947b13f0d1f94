"""Reading JSON answers from services we do not control: every field is checked, every string
that will be shown is capped. Shared by the sources' parse modules; pure."""

from __future__ import annotations

from typing import Any

MAX_NAME = 300  # a release name, tag or path shown in a report


class ShapeError(ValueError):
    """The answer did not have the shape its service documents."""


def cap(value: Any, limit: int = MAX_NAME) -> str | None:
    """Untrusted text, at most ``limit`` characters (an ellipsis marks the cut)."""
    if value is None:
        return None
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
