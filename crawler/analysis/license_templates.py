"""License templates from ScanCode's ``licensedcode-data`` package, normalised and indexed.

No license text lives in this repository: every template is read at run time from the
installed ``licensedcode-data`` wheel (ScanCode's license database, ~2,300 licenses). The
whole database is tokenised once per process (about a second) into word tuples, and an
inverted index over the rarer words picks the few templates worth aligning against a file.

Normalisation follows licensee and the SPDX matching guidelines closely enough for word
alignment: case, punctuation, quotes, hyphens, bullets and list numbering, ``http(s)``,
Markdown markup and line wrapping are ignored, a few varietal spellings are folded, and
copyright statements are set aside (they are data about the holder, not license terms).
"""

from __future__ import annotations

import importlib.util
import math
import re
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

DATA_DISTRIBUTION = "licensedcode-data"
MIN_TEMPLATE_WORDS = 20  # shorter ScanCode texts are notices or references, not license texts
_MAX_DF_FRACTION = 0.25  # words in more templates than this are too common to index

# Copyright statements: "Copyright (c) 2024 X", "© X", "(c) X", "Copyright 2019 X",
# "Copyright [yyyy] [name]", but not body text such as "copyright notice ..." after re-wrapping.
_COPYRIGHT_RE = re.compile(
    r"^[\s*#/;>|!-]*(?:(?:copyright|\(c\)|©)(?:\s*(?:\(c\)|©|:|,))*\s*"
    r"(?:\d{4}|\(c\)|©|[\[<{]|(?!(?:notice|notices|license|licence|licensed|holder|holders|owner|"
    r"owners|and|or|law|laws|statement|statements|of|to|in|for|is|protection|by|the|this|"
    r"that|on|as|claim|interest|rights|assignment|infringement|policy|act)\b)[^\W\d_])"
    r"|all rights reserved\.?\s*$)",
    re.IGNORECASE,
)
SPDX_TAG_RE = re.compile(r"SPDX-License-Identifier\s*:\s*(?P<expr>[^\n*]*?)\s*(?:\*/|-->)?\s*$",
                         re.IGNORECASE)
_TRANSLATE = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    "\u00a0": " ", "\ufeff": " ", "\t": " ", "&": " and ", "'": "", "`": "",
})
_JOIN_HYPHEN_RE = re.compile(r"(?<=[a-z0-9])-(?=[a-z0-9])")
# list markers: "1.", "(a)", "a)", "(iv)", "2)": dropped wherever they stand so that
# re-wrapping never changes the token stream; applied alike to templates and files.
_MARKER_RE = re.compile(r"(?<![\w.])(?:\(?\d{1,2}[.)]|\([a-z]{1,3}\)|[a-z]\)|\(?[ivx]{1,4}\))(?!\w)")
_WORD_RE = re.compile(r"[a-z0-9]+")
_VARIABLE_RE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
# varietal spellings treated as equal (SPDX matching guidelines, equivalent words list)
_VARIANTS = {
    "licence": "license", "licences": "licenses", "licenced": "licensed", "licencing": "licensing",
    "https": "http", "acknowledgement": "acknowledgment",
    "acknowledgements": "acknowledgments", "analogue": "analog", "authorisation": "authorization",
    "authorised": "authorized", "characterise": "characterize", "favour": "favor",
    "organisation": "organization", "organisations": "organizations", "practise": "practice", "sublicence": "sublicense", "utilisation": "utilization",
    "whilst": "while", "wilful": "willful",
}


def is_copyright_line(line: str) -> bool:
    return _COPYRIGHT_RE.match(line) is not None


def normalize_words(text: str) -> list[str]:
    """The normalised word sequence of ``text`` (one line or many; copyright lines kept)."""
    s = _MARKER_RE.sub(" ", _JOIN_HYPHEN_RE.sub("", text.translate(_TRANSLATE).lower()))
    words = _WORD_RE.findall(s)
    return [_VARIANTS.get(w, w) for w in words]


@dataclass(frozen=True)
class Template:
    key: str  # ScanCode key, e.g. "bsd-new"
    spdx_id: str  # SPDX id, or LicenseRef-scancode-... for licenses SPDX does not list
    name: str
    short_name: str
    is_exception: bool
    words: tuple[str, ...]
    variable: frozenset[int]  # token positions inside ScanCode {{...}} markers
    title_len: int  # leading tokens of a title block, optional in a file
    optional_from: int  # tokens from here on are optional (after END OF TERMS AND CONDITIONS)
    ignorable_holders: tuple[str, ...]

    @property
    def is_spdx_listed(self) -> bool:
        return not self.spdx_id.startswith("LicenseRef-")


def data_dir() -> Path:
    """The ``licenses`` folder of the installed licensedcode-data package."""
    spec = importlib.util.find_spec("licensedcode")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        path = Path(loc) / "data" / "licenses"
        if path.is_dir():
            return path
    raise RuntimeError(f"license texts not found: install the {DATA_DISTRIBUTION} package")


def _frontmatter(head: str) -> dict[str, str | list[str]]:
    meta: dict[str, str | list[str]] = {}
    current: list[str] | None = None
    for line in head.splitlines():
        if line[:1].isalpha() and ":" in line:
            k, _, v = line.partition(":")
            v = v.strip()
            if v:
                meta[k] = v.strip("'\"")
                current = None
            else:
                current = []
                meta[k] = current
        elif current is not None and line.lstrip().startswith("- "):
            current.append(line.lstrip()[2:].strip().strip("'\""))
    return meta


def _title_len(body_lines: list[str]) -> int:
    """Tokens in a short title block (before the first blank line) naming the license."""
    block: list[str] = []
    for line in body_lines:
        if not line.strip():
            if block:
                break
            continue
        block.append(line)
    if not block or len(block) > 4:
        return 0
    words = normalize_words(" ".join(block))
    if len(words) > 24 or not {"license", "licence", "agreement", "version"} & set(words):
        return 0
    return len(words)


def parse_template(key: str, raw: str) -> Template | None:
    if not raw.startswith("---"):
        return None
    _, head, body = raw.split("---\n", 2) if raw.count("---\n") >= 2 else ("", "", "")
    meta = _frontmatter(head)
    if any(meta.get(flag) == "yes" for flag in ("is_deprecated", "is_unknown", "is_generic")):
        return None
    spdx = meta.get("spdx_license_key")
    spdx_id = spdx if isinstance(spdx, str) and spdx else f"LicenseRef-scancode-{key}"
    lines = [ln for ln in body.splitlines() if not is_copyright_line(ln)]
    text = "\n".join(lines)
    words: list[str] = []
    variable: set[int] = set()
    pos = 0
    for m in _VARIABLE_RE.finditer(text):
        words += normalize_words(text[pos : m.start()])
        inner = normalize_words(m.group(1))
        variable.update(range(len(words), len(words) + len(inner)))
        words += inner
        pos = m.end()
    words += normalize_words(text[pos:])
    if len(words) < MIN_TEMPLATE_WORDS:
        return None
    optional_from = len(words)
    for i in range(len(words) - 4):
        if words[i : i + 5] == ["end", "of", "terms", "and", "conditions"]:
            if len(words) - (i + 5) < 0.4 * len(words):
                optional_from = i + 5
            break
    holders = meta.get("ignorable_holders", [])
    name, short = meta.get("name", key), meta.get("short_name", key)
    return Template(
        key=key,
        spdx_id=spdx_id,
        name=name if isinstance(name, str) else key,
        short_name=short if isinstance(short, str) else key,
        is_exception=meta.get("is_exception") == "yes",
        words=tuple(words),
        variable=frozenset(variable),
        title_len=_title_len(lines),
        optional_from=optional_from,
        ignorable_holders=tuple(holders) if isinstance(holders, list) else (),
    )


class TemplateIndex:
    """All usable templates plus an inverted index from rare words to templates."""

    def __init__(self, templates: Sequence[Template]) -> None:
        self.templates = list(templates)
        self.by_spdx: dict[str, Template] = {}
        for t in self.templates:
            self.by_spdx.setdefault(t.spdx_id, t)
        df: dict[str, int] = defaultdict(int)
        distinct = [frozenset(t.words) for t in self.templates]
        for ws in distinct:
            for w in ws:
                df[w] += 1
        n = len(self.templates)
        max_df = max(1, int(n * _MAX_DF_FRACTION))
        self.idf = {w: math.log(n / c) for w, c in df.items() if c <= max_df}
        self.postings: dict[str, list[int]] = defaultdict(list)
        self.weight: list[float] = []
        for i, ws in enumerate(distinct):
            total = 0.0
            for w in ws:
                idf = self.idf.get(w)
                if idf is not None:
                    self.postings[w].append(i)
                    total += idf
            self.weight.append(total)
        self.names = self._names()

    def _names(self) -> dict[tuple[str, ...], str]:
        """Normalised license names and ids -> SPDX id, for references in prose."""
        names: dict[tuple[str, ...], str] = {}
        for t in self.templates:
            if t.is_exception or not t.is_spdx_listed:
                continue
            for label in (t.name, t.short_name, t.spdx_id):
                key = tuple(w for w in normalize_words(label) if w not in {"the", "version"})
                if key:
                    names.setdefault(key, t.spdx_id)
        return names

    def candidates(self, words: Iterable[str], min_containment: float = 0.45) -> list[int]:
        """Templates whose rare words are mostly present in ``words``, best first."""
        acc: dict[int, float] = defaultdict(float)
        for w in set(words):
            idf = self.idf.get(w)
            if idf is None:
                continue
            for i in self.postings[w]:
                acc[i] += idf
        scored = [
            (score / self.weight[i], i)
            for i, score in acc.items()
            if self.weight[i] > 0 and score >= min_containment * self.weight[i]
        ]
        scored.sort(reverse=True)
        return [i for _, i in scored]


_LOCK = threading.Lock()
_INDEX: TemplateIndex | None = None


def load_index() -> TemplateIndex:
    """The process-wide template index, built on first use from the installed package."""
    global _INDEX
    with _LOCK:
        if _INDEX is None:
            folder = data_dir()
            templates = []
            for path in sorted(folder.glob("*.LICENSE")):
                tpl = parse_template(path.stem, path.read_text(encoding="utf-8", errors="replace"))
                if tpl is not None:
                    templates.append(tpl)
            _INDEX = TemplateIndex(templates)
        return _INDEX
