"""The XDG base directories (freedesktop.org's Base Directory Specification): where a user's
configuration, data and caches go when nothing more specific is set."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def xdg_dir(env: Mapping[str, str], name: str, default: str) -> Path:
    """``$name`` if it is an absolute path (the specification: a relative one is invalid and
    ignored), else ``~/default``."""
    value = env.get(name, "")
    return Path(value) if value and Path(value).is_absolute() else Path.home() / default
