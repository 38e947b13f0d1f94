"""KEY=VALUE files (``.properties``, env files, vLLM-MUSA's ``third_party/PINS``, the
``VLLM_VERSION="0.27.1"`` line of a shell script) read as pins, without a regex per key.
Pure: no I/O.

A line ``KEY=VALUE`` (or ``KEY = VALUE``, ``KEY: VALUE`` in a ``.properties`` file, ``export
KEY=VALUE`` in a shell script) sets KEY; the first setting of a key counts. Lines starting with
``#`` or ``!`` are comments; a value in quotes is the text between them, an unquoted one ends at
`` #``. Any other line (shell code, blank lines) is not a setting.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from crawler.analysis.pages.cells import MAX_CELL_CHARS, MAX_ROWS, ExtractionError, normalise_text
from crawler.analysis.pages.reading import ReadContext, Reading, data_file_pins
from crawler.analysis.placeholders import mark_placeholder
from crawler.config import PageSpec

_SETTING_RE = re.compile(
    r"^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.-]{0,200})[ \t]*[=:][ \t]*(.*?)[ \t]*$"
)
_QUOTED_RE = re.compile(r"""^(["'])(.*)\1(?:[ \t]+#.*)?$""")


def read_settings(body: str) -> dict[str, str]:
    """Every key the file sets, with its first value, in file order."""
    found: dict[str, str] = {}
    for line in body.lstrip("\ufeff").splitlines():
        if line.lstrip().startswith(("#", "!")):
            continue
        match = _SETTING_RE.match(line)
        if match is None:
            continue
        key, value = match.group(1), match.group(2)
        quoted = _QUOTED_RE.match(value)
        value = quoted.group(2) if quoted else re.split(r"[ \t]#", value, maxsplit=1)[0]
        found.setdefault(key, normalise_text(mark_placeholder(value), MAX_CELL_CHARS))
        if len(found) > MAX_ROWS:
            raise ExtractionError(f"the file sets more than {MAX_ROWS} keys: refusing to diff them")
    return found


def extract_keys(
    body: str, keys: Literal["all"] | Sequence[str], known: Sequence[str] = ()
) -> tuple[tuple[str, str | None], ...]:
    """(key, value or None when the file no longer sets it), by key: those keys, or every key
    the file sets and every ``known`` one (read last time: one no longer set reads None)."""
    settings = read_settings(body)
    wanted = [*settings, *known] if keys == "all" else list(keys)
    return tuple(sorted((key, settings.get(key)) for key in dict.fromkeys(wanted)))


class KeyValueForm:
    """A KEY=VALUE file: pins by key (``pins: all`` or a list), beside pattern pins."""

    name = "keyvalue"

    def read(self, body: str, spec: PageSpec, context: ReadContext) -> Reading:
        pins = data_file_pins(self.name, body, spec, context)
        if spec.tables:
            raise ExtractionError("a KEY=VALUE file holds pins, not tables: use 'pins'")
        keys = extract_keys(body, spec.pin_keys, context.known_keys) if spec.pin_keys else ()
        return Reading((), tuple(sorted((*pins, *keys))), None)


class PlainTextForm:
    """Any other text file (a Python module, a TOML file, a shell script): pattern pins over
    its text as written, nothing else (it has no tables, keys or headings to select)."""

    name = "text"

    def read(self, body: str, spec: PageSpec, context: ReadContext) -> Reading:
        if spec.tables or spec.pin_keys:
            raise ExtractionError(
                "a text file is read for pattern pins only ('pins: {name: regex}'): no tables "
                "or keys"
            )
        return Reading((), data_file_pins(self.name, body, spec, context), None)
