"""What every part of the configuration shares: the error a user sees, the model base, and the
check that a user's regular expression compiles in the engine that will run it."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict

from crawler.patterns import compile_pattern
from crawler.untrusted import visible

LINE_KEY = "__line__"  # where a mapping of sources.yaml starts; stripped before validation
KEY_LINES = "__key_lines__"  # the line of each key of that mapping; stripped likewise
# a GitHub repository's "owner/name": the GitHub source and the notification issue both name one
GITHUB_REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


class ConfigError(Exception):
    """Configuration problems, each with the file and line it comes from: ``problems`` lists
    them (one line each, in file order); ``str()`` is those lines."""

    def __init__(self, *problems: str, total: int | None = None) -> None:
        super().__init__("\n".join(problems))
        self.problems: tuple[str, ...] = problems
        self.total = len(problems) if total is None else total  # beyond those listed too


class AtKey(ValueError):
    """A value that is wrong, raised where the model reads several keys at once (a project's
    ``repo:``, ``gitee:``…): ``key`` names the one at fault, so the message cites its line."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def refused_location(value: Any) -> Any:
    """A field validator's answer to the AtKey its model's reading of the location keys left
    in the field (said as that field's error, beside the entry's other errors)."""
    if isinstance(value, AtKey):
        raise value
    return value


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def check_regex(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    try:
        compile_pattern(value)  # the engine that will run it (with a time limit)
    except ValueError as exc:
        raise ValueError(f"{what} {exc}") from None
    return value


_NOT_ID = re.compile(r"[^a-z0-9]+")  # compiled once: every project's name is read through it


def catalog_id(text: str) -> str:
    """The id the catalog derives from a name: ``NVIDIA GPU`` → ``nvidia-gpu`` (accents,
    case, spaces, punctuation and invisible characters aside); non-Latin names get a hash."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    result = _NOT_ID.sub("-", ascii_text.lower()).strip("-")
    if not result:
        return "x-" + hashlib.sha256(text.encode()).hexdigest()[:10]
    return result


def name_keys(name: str) -> tuple[str, str]:
    """What two names must not share to be told apart in every output: the catalog id, and
    the name as a reader sees it (invisible characters and spacing aside, case folded)."""
    return catalog_id(name), " ".join(visible(name).split()).casefold()


def check_github_repo(value: str) -> str:
    if not GITHUB_REPO_RE.match(value):
        raise ValueError(f"repo {value!r} must look like 'owner/name'")
    return value
