"""What is wrong with ``sources.yaml``, in the crawler's words: a validation error of one part
(a project, a section) becomes one line per problem, ``FILE:LINE: where: what is wrong (did you
mean …?)``, at the line of the key at fault however deeply it is nested (the YAML reader keeps
every mapping's line and the line of each of its keys). The validation library's own wording
(``Input should be …``, ``pages.0.tables.1``) never reaches the reader."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from crawler.config.common import KEY_LINES, LINE_KEY, AtKey

MAX_SHOWN_VALUE = 60  # characters of a wrong value quoted back
MAX_PROBLEMS = 100  # problems listed in one run; the rest counted


@dataclass(frozen=True, order=True)
class Problem:
    """One problem at one line of the file."""

    line: int
    text: str  # what is wrong, after ``FILE:LINE: ``


def listed(path: str, problems: list[Problem]) -> list[str]:
    """The problems as the lines a reader sees, in file order (at most MAX_PROBLEMS of them)."""
    ordered = sorted(problems, key=lambda p: p.line)  # stable: one line's problems as found
    lines = [f"{path}:{p.line}: {p.text}" for p in ordered[:MAX_PROBLEMS]]
    if len(ordered) > MAX_PROBLEMS:
        lines.append(f"{path}: and {len(ordered) - MAX_PROBLEMS:,} more problems")
    return lines


def suggestion(word: str, known: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``known``, else `` (known: a, b, c)``."""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    return f" (known: {', '.join(known)})" if known else " (check its spelling)"


def shown(value: Any) -> str:
    """A value of the file quoted back, capped."""
    text = repr(value)
    return text if len(text) <= MAX_SHOWN_VALUE else text[: MAX_SHOWN_VALUE - 1] + "…"


def validation_problems(
    exc: ValidationError,
    raw: Any,
    start: int,
    prefix: str,
    keys_at: Callable[[tuple[Any, ...]], list[str]],
) -> list[Problem]:
    """Each error of ``exc`` (validating ``raw``, the YAML read with its lines, which starts at
    line ``start``) as a Problem at the line of the key at fault, said after ``prefix``
    (``project 'X': ``). ``keys_at(loc)`` lists the keys accepted where an unknown one was met."""
    found: list[tuple[Problem, tuple[Any, ...] | None, bool]] = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, AtKey):  # in place of the field the model derives from its key
            loc = loc[:-1] if loc and loc[-1] in _DERIVED else loc
            loc += (cause.key,)
        line, where, key, union = _locate(raw, start, loc)
        what = _what(err, keys_at)
        if err["type"] == "extra_forbidden":
            key = key.rpartition(".")[0]  # the message names it: the mapping it is in
        elif isinstance(cause, AtKey):
            key = ""  # the message names it
        if key and not what.startswith((f"{key} ", f"{key}.")):
            what = f"{key}: {what}"
        if where and not what.startswith(where[-1]):
            what = f"{', '.join(where)}: {what}"
        elif len(where) > 1:
            what = f"{', '.join(where[:-1])}: {what}"
        # a value of a union (`text: SELECTOR` or `text: {heading: …}`) that is no member's
        # type: one problem a member; one that is a member's type: only that member's problem
        problem = (Problem(line, prefix + what), union, str(err["type"]).endswith("_type"))
        if problem not in found:
            found.append(problem)
    return _members_meant(found)


def _members_meant(found: list[tuple[Problem, tuple[Any, ...] | None, bool]]) -> list[Problem]:
    """The problems, without a union member's "must be X" (a type mismatch) where another
    member of the same union, the one the value is written as, has a problem of its own."""
    meant = {union for _, union, mismatch in found if union is not None and not mismatch}
    return [p for p, union, mismatch in found if not (mismatch and union in meant)]


_DERIVED = ("forge", "location")  # read from `repo:`, `gitee:`, `pypi:`… (AtKey names which)
_NAMED = {"pages": "page", "tables": "table"}  # a list whose entries are called by their name


def _locate(
    raw: Any, start: int, loc: tuple[Any, ...]
) -> tuple[int, list[str], str, tuple[Any, ...] | None]:
    """The line of the deepest part of ``loc`` the file holds, the named entries on the way
    (``page 'p'``, ``table 't'``), and the dotted keys after the last of them (``layer``,
    ``integrations.status``), and where a union's member was named (the loc up to it), if
    one was. A part the file does not hold (a key the reader derived) ends the walk."""
    line, where, keys = start, list[str](), list[str]()
    union: tuple[Any, ...] | None = None
    current = raw
    for index, part in enumerate(loc):
        if isinstance(part, str) and part not in (current if isinstance(current, dict) else ()):
            if union is None and keys:  # a union's member (`str`, `TextSection`): skipped
                union = loc[:index]
                continue
            break
        if isinstance(current, dict) and isinstance(part, str) and part in current:
            lines = current.get(KEY_LINES)
            if isinstance(lines, dict) and isinstance(lines.get(part), int):
                line = lines[part]
            current = current[part]
            keys.append(part)
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            current = current[part]
            if isinstance(current, dict) and isinstance(current.get(LINE_KEY), int):
                line = current[LINE_KEY]
            kind = _NAMED.get(keys[-1]) if keys and index > 0 else None
            if kind is not None:
                keys.pop()
                if keys:
                    where.append(".".join(keys))
                name = current.get("name") if isinstance(current, dict) else None
                where.append(f"{kind} {name!r}" if isinstance(name, str) else f"{kind} #{part + 1}")
                keys = []
            else:
                keys.append(f"[{part}]")
        else:
            break
    return line, where, ".".join(keys).replace(".[", "["), union


_TYPES = {
    "string_type": "must be text",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "dict_type": "must be a mapping (key: value lines)",
    "model_type": "must be a mapping (key: value lines)",
    "model_attributes_type": "must be a mapping (key: value lines)",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "missing": "is missing: add it",
}


def _what(err: ErrorDetails, keys_at: Callable[[tuple[Any, ...]], list[str]]) -> str:
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    if kind == "extra_forbidden":
        key = str(err["loc"][-1])
        return f"unknown key {key!r}" + suggestion(key, keys_at(tuple(err["loc"])))
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        hint = suggestion(str(value), choices) if isinstance(value, str) else ""
        hint = hint if hint.startswith(" (did") else ""
        return f"{shown(value)} is not one of {', '.join(map(repr, choices))}{hint}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        bound = {"greater_than_equal": "at least", "greater_than": "more than",
                 "less_than_equal": "at most", "less_than": "less than"}[kind]  # fmt: skip
        limit = next(iter(ctx.values()), "")
        return f"{shown(value)} is too {'small' if 'greater' in kind else 'large'}: it must be " \
               f"{bound} {limit}"  # fmt: skip
    if kind in ("string_too_short", "too_short"):
        return "must not be empty"
    if kind == "missing":
        return f"{err['loc'][-1]!r} is missing: add it" if err["loc"] else "is missing"
    if kind in _TYPES:
        return f"{_TYPES[kind]}, not {shown(value)}"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"])).removeprefix("Value error, ")
    return err["msg"]  # a kind no catalog has met yet: the library's words, said once
