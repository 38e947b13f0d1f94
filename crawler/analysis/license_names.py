"""License names and ids as upstreams write them, read without ever raising.

Free text (PyPI's ``license``, Gitee's license name) is mapped to an SPDX id only where the
name is one the license data itself lists: an SPDX expression, an SPDX id, a license's full or
short name in ScanCode's database (``licensedcode-data``), or one of ScanCode's short
reference rules ("Apache License, Version 2.0", "New BSD License", a license URL) naming one
license. Names that leave the version or the variant open (PEP 639's ambiguous classifiers:
"BSD License", "GPL", "Apache Software License") map to nothing; the text is kept, quoted
and capped, as an unrecognised declaration.

Forge ids are compared through SPDX's equivalences, never as strings: the deprecated ``GPL-3.0``
that GitHub and GitLab still send matches both ``GPL-3.0-only`` and ``GPL-3.0-or-later``.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Any

from license_expression import Licensing, get_spdx_licensing

from crawler.analysis.license_templates import data_dir, normalize_words

MAX_DECLARED = 120  # characters of an unrecognised declaration kept
MAX_EXPRESSION = 200  # longer text is never parsed as an expression
_MAX_NAME_WORDS = 12  # a reference rule longer than this is a sentence, not a name
_RULE_HEAD = 4096  # bytes: a name rule is small; larger rule files are license texts
_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9.+_-]*$")
_UNSTATED = frozenset(("", "unknown", "none", "null", "n/a", "na", "noassertion", "other"))

# PEP 639, appendix "Mapping License Classifiers to SPDX Identifiers": these name a license
# family without its version or variant, so nothing may be inferred from them.
PEP639_AMBIGUOUS = (
    "Academic Free License (AFL)",
    "Apache Software License",
    "Apple Public Source License",
    "Artistic License",
    "BSD License",
    "GNU Affero General Public License v3",
    "GNU Free Documentation License (FDL)",
    "GNU General Public License (GPL)",
    "GNU General Public License v2 (GPLv2)",
    "GNU General Public License v3 (GPLv3)",
    "GNU Lesser General Public License v2 (LGPLv2)",
    "GNU Lesser General Public License v2 or later (LGPLv2+)",
    "GNU Lesser General Public License v3 (LGPLv3)",
    "GNU Library or Lesser General Public License (LGPL)",
)


@dataclass(frozen=True)
class Declared:
    """What a free-text license field says: an SPDX expression where the name is known,
    else the text itself (one line, capped) as an unrecognised declaration."""

    spdx: str | None
    text: str | None  # the declaration as written, when it is not an SPDX expression

    @property
    def label(self) -> str | None:
        """The SPDX expression, else the declaration in quotes."""
        return self.spdx or (f'"{self.text}"' if self.text else None)


@cache
def _licensing() -> Licensing:
    return get_spdx_licensing()


def spdx_expression(text: Any) -> str | None:
    """``text`` in SPDX's own spelling when the whole of it is a valid SPDX expression,
    else None. Never raises (license-expression raises several error types, some of which
    break on their own attributes)."""
    if not isinstance(text, str):
        return None
    value = text.strip()
    if not value or len(value) > MAX_EXPRESSION or "\n" in value:
        return None
    try:
        info = _licensing().validate(value)
    except Exception:  # any parser failure means "not an expression"
        return None
    if info.errors or info.invalid_symbols or not info.normalized_expression:
        return None
    return str(info.normalized_expression)


_REF_RE = re.compile(r"^(?:DocumentRef-[\w.-]+:)?LicenseRef-[\w.-]+$")


def _comparable(text: str | None) -> str | None:
    """An SPDX expression, user-defined ``LicenseRef-`` ids allowed (valid SPDX, though no
    list names them), in SPDX's spelling; else None. Never raises."""
    spdx = spdx_expression(text)
    if spdx is not None or not isinstance(text, str) or len(text) > MAX_EXPRESSION:
        return spdx
    try:
        info = _licensing().validate(text.strip())
        if info.invalid_symbols and all(_REF_RE.match(str(s)) for s in info.invalid_symbols):
            return str(_licensing().parse(text.strip(), validate=False).render())
    except Exception:  # not an expression at all
        return None
    return None


def one_line(text: str, limit: int = MAX_DECLARED) -> str:
    """Whitespace folded to single spaces, cut to ``limit`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _frontmatter(raw: str) -> tuple[dict[str, str], list[str], str]:
    """Flat keys, the items of ``other_spdx_license_keys``, and the body of a data file."""
    if not raw.startswith("---"):
        return {}, [], raw
    parts = raw.split("---", 2)
    if len(parts) < 3:
        return {}, [], raw
    meta: dict[str, str] = {}
    others: list[str] = []
    current = ""
    for line in parts[1].splitlines():
        if line[:1].isalpha() and ":" in line:
            current, _, value = line.partition(":")
            meta[current] = value.strip().strip("'\"")
        elif current == "other_spdx_license_keys" and line.lstrip().startswith("- "):
            others.append(line.lstrip()[2:].strip().strip("'\""))
    return meta, others, parts[2]


def _name_key(text: str) -> tuple[str, ...]:
    return tuple(w for w in normalize_words(text) if w not in ("the", "version"))


@cache
def _ambiguous() -> frozenset[tuple[str, ...]]:
    """The PEP 639 ambiguous names as word keys, with and without their abbreviation."""
    out: set[tuple[str, ...]] = set()
    for name in PEP639_AMBIGUOUS:
        out.add(_name_key(name))
        bare, _, abbrev = name.partition("(")
        out.add(_name_key(bare))
        if abbrev:
            out.add(_name_key(abbrev.rstrip(")")))
    return frozenset(out)


@cache
def _spdx_by_key() -> dict[str, str]:
    """ScanCode key -> SPDX id, for licenses SPDX lists (LicenseRef- ids left out)."""
    out: dict[str, str] = {}
    for entry in os.scandir(data_dir()):
        if not entry.name.endswith(".LICENSE"):
            continue
        with open(entry.path, encoding="utf-8", errors="replace") as fh:
            meta, _, _ = _frontmatter(fh.read(_RULE_HEAD))
        spdx = meta.get("spdx_license_key", "")
        if spdx and not spdx.startswith("LicenseRef-") and meta.get("is_deprecated") != "yes":
            out[entry.name.removesuffix(".LICENSE")] = spdx
    return out


@cache
def name_index() -> dict[tuple[str, ...], str]:
    """Normalised license name -> SPDX id, for names that point at exactly one license."""
    found: dict[tuple[str, ...], set[str]] = defaultdict(set)
    by_key = _spdx_by_key()
    for key, spdx in by_key.items():
        with open(data_dir() / f"{key}.LICENSE", encoding="utf-8", errors="replace") as fh:
            meta, others, _ = _frontmatter(fh.read(_RULE_HEAD))
        for label in (meta.get("name", ""), meta.get("short_name", ""), spdx, *others):
            if label and not label.startswith("LicenseRef-"):
                found[_name_key(label)].add(spdx)
    rules = data_dir().parent / "rules"
    for entry in os.scandir(rules):
        if not entry.name.endswith(".RULE"):
            continue
        with open(entry.path, "rb") as fh:
            raw = fh.read(_RULE_HEAD)
        if len(raw) >= _RULE_HEAD:
            continue
        meta, _, body = _frontmatter(raw.decode("utf-8", errors="replace"))
        if "yes" not in (meta.get("is_license_reference"), meta.get("is_license_tag")):
            continue
        key = meta.get("license_expression", "")
        words = _name_key(body.strip().removeprefix("Classifier:"))
        if not _KEY_RE.match(key) or key not in by_key or not 0 < len(words) <= _MAX_NAME_WORDS:
            continue
        if key.endswith("-plus") and not any(c.isdigit() for w in words for c in w):
            continue  # "any version" is ScanCode's reading of a name that gives none
        found[words].add(by_key[key])
    ambiguous = _ambiguous()
    return {k: next(iter(v)) for k, v in found.items() if k and len(v) == 1 and k not in ambiguous}


def read_declared(text: Any) -> Declared:
    """A free-text license field read without raising: an SPDX expression, a name the
    license data lists, else the text kept (one line, capped). "", UNKNOWN and the like
    declare nothing."""
    if not isinstance(text, str) or text.strip().lower() in _UNSTATED:
        return Declared(None, None)
    if _name_key(text) in _ambiguous():  # "GPL", "BSD License": the version is left open
        return Declared(None, one_line(text))
    spdx = spdx_expression(text)
    if spdx is not None:
        return Declared(spdx, None)
    line = one_line(text)
    if len(text) <= MAX_EXPRESSION and "\n" not in text.strip():
        named = name_index().get(_name_key(text))
        if named is not None:
            return Declared(named, None)
    return Declared(None, line)


def _alternatives(symbol: str) -> list[str]:
    """The current ids a license id may stand for: a deprecated GNU id (``GPL-3.0``) stands
    for both its ``-only`` and ``-or-later`` forms, as SPDX's deprecation note says."""
    known = _licensing().known_symbols
    plain = symbol.removesuffix("+")
    if plain == symbol and f"{symbol}-only" in known and f"{symbol}-or-later" in known:
        return [f"{symbol}-only", f"{symbol}-or-later"]
    return [symbol]


def _symbols(expression: str) -> list[str]:
    return list(dict.fromkeys(re.findall(r"[A-Za-z0-9][A-Za-z0-9.+_:-]*", expression)))


def _expanded(first: str, right: str) -> bool:
    """``first``, its deprecated ids tried in each current form, equivalent to ``right``."""
    firsts = [s for s in _symbols(first) if s.upper() not in ("AND", "OR", "WITH")]
    choices = [_alternatives(s) for s in firsts]
    for combo in itertools.islice(itertools.product(*choices), 64):
        candidate = first
        for raw, chosen in zip(firsts, combo, strict=True):
            if raw != chosen:
                candidate = re.sub(rf"(?<![\w.+-]){re.escape(raw)}(?![\w.+-])", chosen, candidate)
        left = _comparable(candidate)
        try:
            if left is not None and _licensing().is_equivalent(left, right):
                return True
        except Exception:  # an expression that does not compare is not equal
            continue
    return False


def same_license(first: str | None, second: str | None) -> bool | None:
    """Whether two SPDX expressions name the same license, through SPDX's equivalences
    (deprecated ids, ``+`` and ``-or-later``, operand order); None when either is not an
    expression (nothing to compare). Never raises."""
    left, right = _comparable(first), _comparable(second)
    if first is None or second is None or left is None or right is None:
        return None
    return _expanded(first, right) or _expanded(second, left)
