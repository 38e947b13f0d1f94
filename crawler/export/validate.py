"""``crawler validate``: a catalog against ``catalog.schema.json``, then what a schema cannot say.

The schema (checked with ``jsonschema``) holds the shape, the types, the controlled
vocabularies (enums), the http(s) URL pattern, date formats and "at least one evidence record".
By hand: unique ids, references between records, no two statuses for one project, platform and
version range, dates not in the future. Every problem has
the JSON path of the offending value and what to do about it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from crawler.untrusted import UnreadableFile, read_regular_file, shown_url

EXIT_VALID, EXIT_INVALID, EXIT_NOT_JSON = 0, 1, 2
MAX_CATALOG_BYTES = 64 * 1024 * 1024  # a curated catalog of the seed's size is well under 1 MiB
MAX_DEPTH = 64  # a catalog nests 6 levels; deeper input only exhausts the stack
MAX_DIGITS = 30  # ids, counts and years: no catalog integer comes near
_DATE_KEYS = ("date", "last_checked", "last_ok", "checked")
_HINTS = {
    "http(s) URL": "links must start with http:// or https:// and name a host",
    "http(s) URL or null": "links must start with http:// or https:// and name a host",
}


@dataclass(frozen=True, order=True)
class Problem:
    path: str  # JSONPath of the offending value, e.g. $.integrations[12].platform
    message: str  # what is wrong, then what to do

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@cache
def catalog_schema() -> dict[str, Any]:
    text = resources.files("crawler.export").joinpath("catalog.schema.json").read_text("utf-8")
    return dict(json.loads(text))


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"


_JSON_TYPES = {
    dict: "an object", list: "an array", str: "a string", bool: "a boolean",
    int: "an integer", float: "a number", type(None): "null",
}  # fmt: skip


def _schema_problem(error: jsonschema.ValidationError) -> Problem:
    path = error.json_path
    schema = error.schema if isinstance(error.schema, dict) else {}
    title = schema.get("title")
    value = error.instance
    kind = error.validator
    if kind == "required":
        missing = next((p for p in error.validator_value if error.message.startswith(repr(p))), "?")
        what = "add at least one evidence record (the source's url and date)"
        hint = what if missing == "evidence" else "add it"
        return Problem(f"{path}.{missing}", f"required field {missing!r} is missing: {hint}")
    if kind == "type":
        expected = title or " or ".join(
            error.validator_value
            if isinstance(error.validator_value, list)
            else [error.validator_value]
        )
        got = _JSON_TYPES.get(type(value), type(value).__name__)
        return Problem(path, f"{_show(value)} is {got}, expected {expected}: fix its type")
    if kind == "enum":
        allowed = ", ".join(
            v if isinstance(v, str) else json.dumps(v) for v in error.validator_value
        )
        return Problem(
            path, f"{_show(value)} is not a known {title or 'value'}: use one of {allowed}"
        )
    if kind == "pattern":
        hint = _HINTS.get(title or "", f"match {error.validator_value}")
        return Problem(path, f"{_show(value)} is not a valid {title or 'value'}: {hint}")
    if kind == "format":
        return Problem(path, f"{_show(value)} is not a {title or error.validator_value}: fix it")
    if kind == "minItems" and path.endswith(".evidence"):
        return Problem(
            path,
            "an integration claim without evidence: add at least one evidence record "
            "(the source's url and the date it was observed)",
        )
    return Problem(path, f"{error.message}: fix the value")


def schema_problems(data: Any) -> list[Problem]:
    validator = jsonschema.Draft202012Validator(
        catalog_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    return sorted(_schema_problem(e) for e in validator.iter_errors(data))


def _records(data: Any, collection: str) -> Iterator[tuple[int, dict[str, Any]]]:
    items = data.get(collection) if isinstance(data, dict) else None
    if isinstance(items, list):
        for index, item in enumerate(items):
            if isinstance(item, dict):
                yield index, item


def _id_problems(data: Any) -> tuple[list[Problem], dict[str, set[str]]]:
    problems: list[Problem] = []
    ids: dict[str, set[str]] = {}
    for collection in ("projects", "platforms", "integrations"):
        first: dict[str, int] = {}
        for index, record in _records(data, collection):
            ident = record.get("id")
            if not isinstance(ident, str):
                continue
            if ident in first:
                problems.append(
                    Problem(
                        f"$.{collection}[{index}].id",
                        f"duplicate id {ident!r} (first at $.{collection}[{first[ident]}]): "
                        "give each record its own id, or merge the two records",
                    )
                )
            else:
                first[ident] = index
        ids[collection] = set(first)
    return problems, ids


def _reference_problems(data: Any, ids: dict[str, set[str]]) -> list[Problem]:
    problems = []
    fields = (("project", "projects"), ("platform", "platforms"), ("via", "projects"))
    for index, record in _records(data, "integrations"):
        for name, collection in fields:
            value = record.get(name)
            if isinstance(value, str) and value not in ids[collection]:
                problems.append(
                    Problem(
                        f"$.integrations[{index}].{name}",
                        f"{value!r} is not the id of any record in $.{collection}: add that "
                        f"record or fix the reference",
                    )
                )
    return problems


def _riding_problems(data: Any, ids: dict[str, set[str]]) -> list[Problem]:
    """A project's ``part_of`` names a project that exists, does not ride itself, and is not
    not_trackable too (a riding item shows its host's facts; a not-trackable one has none)."""
    projects = dict(_records(data, "projects"))
    riding = {r.get("id"): r.get("part_of") for r in projects.values()}
    problems = []
    for index, record in projects.items():
        host = record.get("part_of")
        if not isinstance(host, str):
            continue
        path = f"$.projects[{index}].part_of"
        if host not in ids["projects"]:
            what = f"{host!r} is not the id of any record in $.projects: fix the reference"
        elif isinstance(riding.get(host), str):
            what = (f"{host!r} is itself part of {riding[host]!r}: name {riding[host]!r} "
                    "directly (no chains)")  # fmt: skip
        elif host == record.get("id"):
            what = "a project cannot be part of itself: name the project it ships with"
        elif "not_trackable" in record:
            what = "a riding project shows its host's facts: drop part_of or not_trackable"
        else:
            continue
        problems.append(Problem(path, what))
    return problems


def _row_named(record: dict[str, Any]) -> str:
    evidence = record.get("evidence")
    first = evidence[0] if isinstance(evidence, list) and evidence else None
    if not isinstance(first, dict) or not isinstance(first.get("row"), dict):
        return ""
    row = " / ".join(str(v) for v in first["row"].values())
    return f", from table {first.get('table')!r} row {row!r}"


def _contradiction_problems(data: Any) -> list[Problem]:
    """Two records for one project, platform and version range with different statuses:
    the catalog would make two claims about one integration."""
    problems = []
    first: dict[tuple[Any, Any, Any], tuple[int, dict[str, Any]]] = {}
    for index, record in _records(data, "integrations"):
        claim = (record.get("project"), record.get("platform"), record.get("version_range"))
        if not all(isinstance(v, str) for v in claim[:2]):
            continue
        if claim not in first:
            first[claim] = (index, record)
            continue
        other_index, other = first[claim]
        if record.get("status") != other.get("status"):
            version = f", version {claim[2]!r}" if claim[2] else ""
            problems.append(
                Problem(
                    f"$.integrations[{index}].status",
                    f"{_show(record.get('status'))}{_row_named(record)} contradicts "
                    f"{_show(other.get('status'))} at $.integrations[{other_index}]"
                    f"{_row_named(other)} for project {claim[0]!r} on platform "
                    f"{claim[1]!r}{version}: keep one record, or tell the two apart "
                    "(platform or version range)",
                )
            )
    return problems


def _walk_dates(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}"
            if key in _DATE_KEYS and isinstance(item, str):
                yield sub, item
            else:
                yield from _walk_dates(item, sub)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk_dates(item, f"{path}[{index}]")


def _date_problems(data: Any, today: date) -> list[Problem]:
    problems = []
    for path, text in _walk_dates(data, "$"):
        try:
            when = date.fromisoformat(text)
        except ValueError:
            continue  # the schema's date format reports it
        if len(text) == 10 and when > today:
            problems.append(
                Problem(
                    path,
                    f"{text} is in the future (today is {today.isoformat()}): use the date "
                    "the source was observed",
                )
            )
    return problems


def _credential_problems(data: Any) -> list[Problem]:
    """Links that carry a credential (``user:password@``, ``?token=…``): a published catalog
    must not (crawler.untrusted.shown_url says what may be shown)."""
    problems = []
    stack: list[tuple[Any, str]] = [(data, "$")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                where = f"{path}.{key}"
                if key == "url" and isinstance(item, str) and shown_url(item) != item:
                    problems.append(Problem(
                        where,
                        f"{_show(shown_url(item))} holds a credential (a user name or password, "
                        "or a secret-looking query value): publish the link without it",
                    ))  # fmt: skip
                else:
                    stack.append((item, where))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{n}]") for n, item in enumerate(value))
    return sorted(problems)


def validate_catalog(data: Any, today: date | None = None) -> list[Problem]:
    """Every problem of a parsed catalog, schema first; an empty list means valid."""
    today = today or datetime.now(UTC).date()
    id_problems, ids = _id_problems(data)
    return (
        schema_problems(data)
        + id_problems
        + _reference_problems(data, ids)
        + _riding_problems(data, ids)
        + _contradiction_problems(data)
        + _date_problems(data, today)
        + _credential_problems(data)
    )


class CatalogFileError(ValueError):
    """A catalog file that cannot be read as JSON at all; the message names the file."""


def _whole_number(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise CatalogFileError(
            f"a number of {len(text.lstrip('-')):,} digits (a catalog needs at most "
            f"{MAX_DIGITS}): fix the value"
        )
    return int(text)


def _structure_problems(data: Any, duplicated: dict[int, list[str]]) -> list[Problem]:
    """Duplicate keys (JSON keeps the last silently) by path; CatalogFileError when nested
    deeper than MAX_DEPTH (checked without recursion)."""
    problems = []
    stack: list[tuple[Any, str, int]] = [(data, "$", 1)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise CatalogFileError(
                f"nested more than {MAX_DEPTH} levels deep (at {path}): not a catalog"
            )
        if isinstance(value, dict):
            for key in duplicated.get(id(value), []):
                problems.append(
                    Problem(
                        f"{path}.{key}",
                        f"the key {key!r} appears more than once in this object (JSON keeps "
                        "only the last): remove the duplicates",
                    )
                )
            stack += [(item, f"{path}.{key}", depth + 1) for key, item in value.items()]
        elif isinstance(value, list):
            stack += [(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    return sorted(problems)


def read_catalog(path: Path) -> tuple[Any, list[Problem]]:
    """A catalog file parsed, with its duplicate keys as problems. CatalogFileError (the
    message starts with the file) for anything that is not a JSON catalog one can read: not
    a regular file, over MAX_CATALOG_BYTES, not UTF-8, not JSON, nested deeper than
    MAX_DEPTH, a number of more than MAX_DIGITS digits."""
    try:
        raw = read_regular_file(path, MAX_CATALOG_BYTES)
        text = raw.decode("utf-8")
    except UnreadableFile as exc:
        raise CatalogFileError(str(exc)) from None
    except OSError as exc:
        raise CatalogFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CatalogFileError(
            f"{path}: not JSON: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    duplicated: dict[int, list[str]] = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            counts = Counter(key for key, _ in items)
            duplicated[id(obj)] = [key for key, count in counts.items() if count > 1]
        return obj

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_int=_whole_number)
        return data, _structure_problems(data, duplicated)
    except json.JSONDecodeError as exc:
        raise CatalogFileError(
            f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}: fix the syntax"
        ) from None
    except RecursionError:
        raise CatalogFileError(
            f"{path}: not JSON a catalog can be: nested more than {MAX_DEPTH} levels deep"
        ) from None
    except CatalogFileError as exc:
        raise CatalogFileError(f"{path}: {exc}") from None
    except ValueError as exc:  # a limit of the interpreter (e.g. digits in a number)
        raise CatalogFileError(f"{path}: not JSON a catalog can be: {exc}") from None


def validate_file(path: Path, today: date | None = None) -> tuple[int, list[str]]:
    """(exit status, lines to print): 0 valid, 1 invalid (duplicate keys included), 2 not JSON
    (or not a readable catalog file at all)."""
    try:
        data, duplicates = read_catalog(path)
    except CatalogFileError as exc:
        return EXIT_NOT_JSON, [str(exc)]
    problems = duplicates + validate_catalog(data, today)
    if problems:
        return EXIT_INVALID, [str(p) for p in problems] + [
            f"{path}: {len(problems)} problem{'' if len(problems) == 1 else 's'}: "
            "not a valid catalog"
        ]
    counts = ", ".join(
        f"{len(list(_records(data, c)))} {c}" for c in ("projects", "platforms", "integrations")
    )
    return EXIT_VALID, [f"{path}: valid catalog ({counts})"]
