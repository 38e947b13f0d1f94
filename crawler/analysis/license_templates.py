"""License templates from ScanCode's ``licensedcode-data`` package, normalised and indexed.

No license text lives in this repository: every template is read at run time from the
installed ``licensedcode-data`` wheel (ScanCode's license database, ~2,300 licenses). Start-up
reads every text once to build an inverted index over the rarer words (about a second);
a template is tokenised in full only when a file makes it a candidate.

Normalisation follows licensee and the SPDX matching guidelines closely enough for word
alignment: case, punctuation, quotes, hyphens, bullets and list numbering, ``http(s)``,
Markdown markup and line wrapping are ignored, a few varietal spellings are folded, and
copyright statements are set aside (they name holders, they are not license terms).
"""

from __future__ import annotations

import importlib.util
import math
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

DATA_DISTRIBUTION = "licensedcode-data"
MIN_TEMPLATE_WORDS = 20  # shorter ScanCode texts are notices or references, not license texts
_MAX_DF_FRACTION = 0.25  # words found in more templates than this are not indexed

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
SPDX_TAG_RE = re.compile(r"SPDX-License-Identifier\s*:\s*(?P<expr>.*?)\s*(?:\*/|-->)?\s*$",
                         re.IGNORECASE)
# length-preserving, so token offsets stay valid in the original line
_TRANSLATE = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    "\u00a0": " ", "\ufeff": " ", "\t": " ",
})
# list markers ("1.", "(a)", "a)", "(iv)") are dropped wherever they stand, so re-wrapping
# never changes the token stream; group 1 is a word (hyphens and apostrophes inside kept).
_TOKEN_RE = re.compile(
    r"(?<![\w.])(?:\(?\d{1,2}[.)]|\([a-z]{1,3}\)|[a-z]\)|\(?[ivx]{1,4}\))(?!\w)"
    r"|([a-z0-9]+(?:[-'][a-z0-9]+)*|&)"
)
_ROUGH_RE = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_VARIABLE_RE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
# varietal spellings treated as equal (after the SPDX matching guidelines' equivalent words)
_VARIANTS = {
    "licence": "license", "licences": "licenses", "licenced": "licensed", "licencing": "licensing",
    "https": "http", "acknowledgement": "acknowledgment", "acknowledgements": "acknowledgments",
    "analogue": "analog", "authorisation": "authorization", "authorised": "authorized",
    "favour": "favor", "organisation": "organization", "organisations": "organizations",
    "practise": "practice", "sublicence": "sublicense", "utilisation": "utilization",
    "whilst": "while", "wilful": "willful", "&": "and",
}


def is_copyright_line(line: str) -> bool:
    return _COPYRIGHT_RE.match(line) is not None


def _prep(text: str) -> str:
    low = text.lower()
    if len(low) != len(text):  # a few characters lower-case to two; keep offsets aligned
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low if low.isascii() else low.translate(_TRANSLATE)


def _word(raw: str) -> str:
    w = raw.replace("-", "").replace("'", "") if ("-" in raw or "'" in raw) else raw
    return _VARIANTS.get(w, w)


def normalize_words(text: str) -> list[str]:
    """The normalised word sequence of ``text``."""
    return [_word(w) for w in _TOKEN_RE.findall(_prep(text)) if w]


def tokenize_line(line: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for each normalised word of one line, offsets into ``line``."""
    return [(_word(m.group(1)), m.start(1), m.end(1))
            for m in _TOKEN_RE.finditer(_prep(line)) if m.group(1)]


@dataclass(frozen=True)
class Template:
    key: str  # ScanCode key, e.g. "bsd-new"
    spdx_id: str  # SPDX id, or LicenseRef-scancode-<key> for licenses SPDX does not list
    name: str
    is_exception: bool
    words: tuple[str, ...]
    variable: frozenset[int]  # token positions inside ScanCode {{...}} markers
    title_len: int  # leading tokens of a title block, optional in a file
    optional_from: int  # tokens from here on are optional (after END OF TERMS AND CONDITIONS)
    ignorable_holders: tuple[str, ...]
    counts: Counter[str] = field(compare=False, repr=False, default_factory=Counter)

    @property
    def is_spdx_listed(self) -> bool:
        return not self.spdx_id.startswith("LicenseRef-")

    @property
    def required(self) -> int:
        return max(1, self.optional_from - self.title_len)


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
            current = None if v.strip() else []
            meta[k] = v.strip().strip("'\"") if current is None else current
        elif current is not None and line.lstrip().startswith("- "):
            current.append(line.lstrip()[2:].strip().strip("'\""))
    return meta


def _title_len(body_lines: list[str]) -> int:
    """Tokens in a short title block (before the first blank line) naming the license."""
    block: list[str] = []
    for line in body_lines:
        if line.strip():
            block.append(line)
        elif block:
            break
    words = normalize_words(" ".join(block)) if 0 < len(block) <= 4 else []
    if len(words) > 24 or not {"license", "agreement", "version"} & set(words):
        return 0
    return len(words)


@dataclass
class _Entry:
    key: str
    spdx_id: str
    name: str
    meta: dict[str, str | list[str]]
    body: str


def _parse(entry: _Entry) -> Template:
    lines = [ln for ln in entry.body.splitlines() if not is_copyright_line(ln)]
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
    optional_from = len(words)
    joined = " ".join(words)
    cut = joined.find(" end of terms and conditions")
    if cut >= 0:
        at = joined.count(" ", 0, cut + 1) + 5
        if len(words) - at < 0.4 * len(words):
            optional_from = at
    holders = entry.meta.get("ignorable_holders", [])
    return Template(
        key=entry.key,
        spdx_id=entry.spdx_id,
        name=entry.name,
        is_exception=entry.meta.get("is_exception") == "yes",
        words=tuple(words),
        variable=frozenset(variable),
        title_len=_title_len(lines),
        optional_from=optional_from,
        ignorable_holders=tuple(holders) if isinstance(holders, list) else (),
        counts=Counter(words),
    )


class TemplateIndex:
    """Every usable template, an inverted index from rare words to templates, and names."""

    def __init__(self, entries: list[_Entry], word_sets: list[set[str]]) -> None:
        self.entries = entries
        self._parsed: dict[int, Template] = {}
        self._lock = threading.Lock()
        self.by_spdx: dict[str, int] = {}
        for i, e in enumerate(entries):
            self.by_spdx.setdefault(e.spdx_id, i)
        n = len(entries)
        df = Counter(chain.from_iterable(word_sets))
        max_df = max(1, int(n * _MAX_DF_FRACTION))
        self.idf = {w: math.log(n / c) for w, c in df.items() if c <= max_df}
        idf = self.idf
        postings: dict[str, list[int]] = defaultdict(list)
        self.weight: list[float] = []
        for i, ws in enumerate(word_sets):
            rare = ws & idf.keys()
            self.weight.append(math.fsum(map(idf.__getitem__, rare)))
            for w in rare:
                postings[w].append(i)
        self.postings = postings
        self.names: dict[tuple[str, ...], str] = {}
        for e in entries:
            if e.spdx_id.startswith("LicenseRef-") or e.meta.get("is_exception") == "yes":
                continue
            short = e.meta.get("short_name", "")
            for label in (e.name, short if isinstance(short, str) else "", e.spdx_id):
                key = tuple(w for w in normalize_words(label) if w not in {"the", "version"})
                if key:
                    self.names.setdefault(key, e.spdx_id)

    def template(self, i: int) -> Template:
        with self._lock:
            tpl = self._parsed.get(i)
            if tpl is None:
                tpl = self._parsed[i] = _parse(self.entries[i])
            return tpl

    def by_id(self, spdx_id: str) -> Template | None:
        i = self.by_spdx.get(spdx_id)
        return None if i is None else self.template(i)

    def candidates(self, words: Iterable[str], min_containment: float = 0.45) -> list[int]:
        """Templates whose rare words are mostly present in ``words``, best first."""
        acc: dict[int, float] = defaultdict(float)
        for w in set(words):
            idf = self.idf.get(w)
            if idf is not None:
                for i in self.postings[w]:
                    acc[i] += idf
        scored = [(s / self.weight[i], i) for i, s in acc.items()
                  if s >= min_containment * self.weight[i] > 0]
        scored.sort(reverse=True)
        return [i for _, i in scored]


def _load(folder: Path) -> TemplateIndex:
    entries: list[_Entry] = []
    word_sets: list[set[str]] = []
    for path in sorted(folder.glob("*.LICENSE")):
        raw = path.read_text(encoding="utf-8", errors="replace")
        cut = raw.find("\n---\n", 3)
        if not raw.startswith("---") or cut < 0:
            continue
        meta = _frontmatter(raw[4:cut])
        if any(meta.get(f) == "yes" for f in ("is_deprecated", "is_unknown", "is_generic")):
            continue
        body = raw[cut + 5 :]
        rough = _ROUGH_RE.findall(body.lower())
        if len(rough) < MIN_TEMPLATE_WORDS:
            continue
        spdx = meta.get("spdx_license_key")
        name = meta.get("name")
        entries.append(_Entry(
            key=path.stem,
            spdx_id=spdx if isinstance(spdx, str) and spdx else f"LicenseRef-scancode-{path.stem}",
            name=name if isinstance(name, str) else path.stem,
            meta=meta,
            body=body,
        ))
        words = set(rough)
        odd = [w for w in words if not w.isalnum() or w in _VARIANTS]
        words.difference_update(odd)
        words.update(_word(w) for w in odd)
        word_sets.append(words)
    return TemplateIndex(entries, word_sets)


_LOCK = threading.Lock()
_INDEX: TemplateIndex | None = None


def load_index() -> TemplateIndex:
    """The process-wide template index, built on first use from the installed package."""
    global _INDEX
    with _LOCK:
        if _INDEX is None:
            _INDEX = _load(data_dir())
        return _INDEX
