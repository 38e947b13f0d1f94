"""License templates read at run time from maintained packages, normalised and indexed.

No license text lives in this repository. Templates come from ScanCode's license database
(``licensedcode-data``, ~2,300 licenses incl. X11 and PSF-2.0) and from the choosealicense.com
texts (``pychoosealicense``: the 47 texts GitHub's license picker writes and licensee knows,
whose wording differs in places from ScanCode's). The first use reads every text once to build
an inverted index over the rarer words (half a second), kept in the user's cache folder for
the next process; a template is tokenised in full only when a file makes it a candidate, then
aligned word by word (difflib).

Normalisation follows licensee and the SPDX matching guidelines closely enough for word
alignment: case, punctuation, quotes, hyphens (also across line breaks), bullets and list
numbering, ``http(s)``, Markdown markup and wrapping are ignored, a few varietal spellings are
folded, and copyright statements are set aside (they name holders, they are not terms).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import logging
import marshal
import math
import os
import re
import sys
import tempfile
import threading
from array import array
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import chain, pairwise, repeat
from pathlib import Path
from typing import cast

from crawler.analysis.license_clauses import copyright_clause, reads_as_prose
from crawler.analysis.word_match import matching_blocks
from crawler.xdg import xdg_dir

log = logging.getLogger(__name__)

DATA_DISTRIBUTION = "licensedcode-data"
MIN_TEMPLATE_WORDS = 20  # shorter ScanCode texts are notices or references, not license texts
_MAX_DF_FRACTION = 0.25  # words found in more templates than this are not indexed
MIN_COVERAGE = 0.5  # below this share of a template, the template is not said to be present
MIN_WORDS = 20  # fewer matched words than this is no match
# template words that stand for a name and may be replaced ("the ORGANIZATION", "X CONSORTIUM")
PLACEHOLDER_WORDS = frozenset(
    (
        "the",
        "of",
        "organization",
        "organizations",
        "copyright",
        "holder",
        "holders",
        "owner",
        "owners",
        "author",
        "authors",
        "regents",
        "university",
        "california",
        "x",
        "consortium",
        "name",
        "names",
        "its",
        "yyyy",
        "year",
        "licensor",
        "company",
        "and",
        "or",
        "contributors",
    )
)
_MAX_FILL_WORDS = 30
_LINES_KEPT = 1024  # tokenised lines kept (~250 bytes each): the lines of the common licenses

# Copyright statements: "Copyright (c) 2024 X", "© X", "(c) X", "Copyright 2019 X",
# "Copyright [yyyy] [name]", "SPDX-FileCopyrightText: 2024 X", but not body text such as
# "copyright notice ..." after re-wrapping.
_COPYRIGHT_RE = re.compile(
    r"^[\s*#/;>|!-]*(?:spdx-filecopyrighttext\s*:"
    r"|(?:copyright\s*(?:\(c\)|©)|©|copyright)(?:\s*(?:\(c\)|©|:|,|\ufffd))*\s*"
    r"(?:\d{4}|[\[<{]|(?!(?:notice|notices|license|licence|licensed|holder|holders|"
    r"owner|owners|and|or|law|laws|statement|statements|of|to|in|for|is|protection|by|the|this|"
    r"that|on|as|claim|interest|rights|assignment|infringement|policy|act)\b)(?-i:[A-Z])"
    r"|(?<=©)\s*\S)|\(c\)\s*\d{4}|all rights reserved\.?\s*$)",
    re.IGNORECASE,
)
SPDX_TAG_RE = re.compile(
    r"SPDX-License-Identifier\s*:\s*(?P<expr>.*?)\s*(?:\*/|-->)?\s*$", re.IGNORECASE
)
# length-preserving, so token offsets stay valid in the original line
_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00a0": " ",
        "\ufeff": " ",
        "\t": " ",
    }
)
# list markers ("1.", "(a)", "a)", "a.", "(iv)", "iv.") are dropped wherever they stand, so
# re-wrapping never changes the token stream; group 1 is a word (inner hyphens, apostrophes kept)
_TOKEN_RE = re.compile(
    r"(?<![\w.])(?:\(?\d{1,2}[.)](?!\d)|(?:\([a-z]{1,3}\)|[a-z]\)|\(?[ivx]{1,4}\)"
    r"|(?:[a-z]|[ivx]{1,4})\.(?=\s|$))(?!\w))"
    r"|([a-z0-9]+(?:(?:[-']|-[ ]+)[a-z0-9]+)*|&)"
)
# bytes.translate table for the index: ASCII letters and digits kept (lower-cased), rest space
_ROUGH_TABLE = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256)
)
# ScanCode's {{variable}} marks and choosealicense's [year]/[fullname]/[project] placeholders
_VARIABLE_RE = re.compile(r"\{\{.*?\}\}|\[[a-z ]{2,30}\]")
# varietal spellings treated as equal (after the SPDX matching guidelines' equivalent words)
_VARIANTS = {
    "licence": "license",
    "licences": "licenses",
    "licenced": "licensed",
    "licencing": "licensing",
    "https": "http",
    "acknowledgement": "acknowledgment",
    "acknowledgements": "acknowledgments",
    "analogue": "analog",
    "authorisation": "authorization",
    "authorised": "authorized",
    "favour": "favor",
    "organisation": "organization",
    "organisations": "organizations",
    "practise": "practice",
    "sublicence": "sublicense",
    "utilisation": "utilization",
    "whilst": "while",
    "wilful": "willful",
    "&": "and",
}


def is_copyright_line(line: str) -> bool:
    return _COPYRIGHT_RE.match(line) is not None


def _prep(text: str) -> str:
    low = text.lower()
    if len(low) != len(text):  # a few characters lower-case to two; keep offsets aligned
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low if low.isascii() else low.translate(_TRANSLATE)


def _word(raw: str) -> str:
    w = raw if raw.isalnum() or raw == "&" else re.sub(r"[-' ]", "", raw)
    return _VARIANTS.get(w, w)


def normalize_words(text: str) -> list[str]:
    """The normalised word sequence of ``text``."""
    return [_word(w) for w in _TOKEN_RE.findall(_prep(text)) if w]


def tokenize_line(line: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for each normalised word of one line, offsets into ``line``."""
    words, offsets = _line_tokens(line)
    if not words:
        return []
    ends = iter(offsets)
    return list(zip(words.split(" "), ends, ends, strict=True))


def count_words(line: str) -> int:
    """``len(tokenize_line(line))``, without building the list (the tokens are kept)."""
    return len(_line_tokens(line)[1]) // 2


@lru_cache(maxsize=_LINES_KEPT)
def _line_tokens(line: str) -> tuple[str, array[int]]:
    """A line's words joined by spaces (a word has none) and their offsets (start, end, ...):
    license texts of a catalog share most of their lines (a thousand Apache-2.0 files, 200
    lines each), and the regular expression reads a line in 10 microseconds."""
    found = [(m.group(1), m.start(1), m.end(1)) for m in _TOKEN_RE.finditer(_prep(line))]
    toks = [(_word(w), s, e) for w, s, e in found if w]
    return " ".join(w for w, _, _ in toks), array("I", [x for _, s, e in toks for x in (s, e)])


_EOL_HYPHEN_RE = re.compile(r"[A-Za-z0-9]-\s*$")


def tokenize_lines(lines: Sequence[str]) -> list[tuple[int, str, int, int, int]]:
    """(line, word, start, end line, end) for every word of ``lines``; a word hyphenated
    across a line break ("royalty-" / "free") is one word, as it is where not wrapped."""
    out: list[tuple[int, str, int, int, int]] = []
    join = False
    for i, line in enumerate(lines):
        toks = tokenize_line(line)
        if join and toks and out and toks[0][1] == len(line) - len(line.lstrip()):
            ln, w, s, _, _ = out[-1]
            out[-1] = (ln, w + toks[0][0], s, i, toks[0][2])
            toks = toks[1:]
        out += [(i, w, s, i, e) for w, s, e in toks]
        join = bool(toks) and _EOL_HYPHEN_RE.search(line) is not None
    return out


@dataclass(frozen=True)
class Template:
    key: str  # ScanCode key, e.g. "bsd-new", or choosealicense-<name>
    spdx_id: str  # SPDX id, or LicenseRef-scancode-<key> for licenses SPDX does not list
    name: str
    is_exception: bool
    words: tuple[str, ...]
    variable: frozenset[int]  # positions of {{...}} / [placeholder] words ("\x00" in words)
    boiler: frozenset[int]  # positions on the template's own copyright lines (and addresses)
    title_len: int  # leading tokens of a title block, optional in a file
    optional_from: int  # tokens from here on are optional (after END OF TERMS AND CONDITIONS)
    ignorable_holders: tuple[str, ...]
    counts: Counter[str] = field(compare=False, repr=False, default_factory=Counter)

    @cached_property
    def boiler_sorted(self) -> list[int]:
        return sorted(self.boiler)

    @property
    def is_spdx_listed(self) -> bool:
        return not self.spdx_id.startswith("LicenseRef-")

    @property
    def required(self) -> int:
        return max(1, self.optional_from - self.title_len)

    def unique(self) -> dict[str, int]:
        """Words found once in the template -> their position (anchors for long files)."""
        return {w: p for p, w in enumerate(self.words) if self.counts[w] == 1}


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
    path: str  # the text is read again when a template is first needed: 2,300 bodies
    offset: int  # held in memory would cost ~15 MB for the few templates ever aligned

    @property
    def raw(self) -> bytes:
        """The license text, UTF-8."""
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            return fh.read()

    @property
    def body(self) -> str:
        return self.raw.decode("utf-8", errors="replace")


_Fields = tuple[
    str, str, str, bool, tuple[str, ...], frozenset[int], frozenset[int], int, int, tuple[str, ...]
]


def _template_fields(tpl: Template) -> _Fields:
    """A parsed template as built-in types, for the derived cache (``counts`` is rebuilt)."""
    return (tpl.key, tpl.spdx_id, tpl.name, tpl.is_exception, tpl.words, tpl.variable,
            tpl.boiler, tpl.title_len, tpl.optional_from, tpl.ignorable_holders)  # fmt: skip


def _template_from(fields: _Fields) -> Template:
    return Template(*fields, counts=Counter(fields[4]))  # fields[4]: the words


def _parse(entry: _Entry) -> Template:
    lines = entry.body.splitlines()
    toks = tokenize_lines(lines)
    words = [w for _, w, _, _, _ in toks]
    spans = {
        i: [m.span() for m in _VARIABLE_RE.finditer(ln)]
        for i, ln in enumerate(lines)
        if "{{" in ln or "[" in ln
    }
    variable = {
        k
        for k, (ln, _, s, _, _) in enumerate(toks)
        if any(a <= s < b for a, b in spans.get(ln, ()))
    }
    for k in variable:  # a placeholder never equals a file word: whatever fills it is a fill
        words[k] = "\x00"
    # copyright lines and what continues them (an address, an e-mail) are the holder's data;
    # a clause on such a line ("Copyright [yyyy] [name] Licensed under the") is license text
    held: dict[int, int | None] = {}  # line -> where a clause begins on it
    for i, ln in enumerate(lines):
        if is_copyright_line(ln):
            held[i] = copyright_clause(ln)
        elif (
            i - 1 in held
            and held[i - 1] is None
            and ln.strip()
            and len(ln.split()) <= 12
            and re.search(r"\d|@|<|http", ln)
            and not reads_as_prose(ln)
        ):
            held[i] = None
    boiler = {
        k
        for k, (ln, _, s, _, _) in enumerate(toks)
        if ln in held and s < (held[ln] or len(lines[ln]))
    }
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
        boiler=frozenset(boiler),
        title_len=_title_len(lines),
        optional_from=optional_from,
        ignorable_holders=tuple(holders) if isinstance(holders, list) else (),
        counts=Counter(words),
    )


class TemplateIndex:
    """Every usable template, an inverted index from rare words to templates, and names."""

    def __init__(
        self,
        entries: list[_Entry],
        idf: dict[str, float],
        postings: dict[str, list[int]],
        weight: list[float],
        names: dict[tuple[str, ...], str],
    ) -> None:
        self.entries = entries
        self._parsed: dict[int, Template] = {}
        self._lock = threading.Lock()
        # templates parsed and texts derived by earlier processes (see load_index)
        self.derived: DerivedCache = DerivedCache(None)
        self.by_spdx: dict[str, int] = {}
        for i, e in enumerate(entries):
            self.by_spdx.setdefault(e.spdx_id, i)
        self.idf, self.postings, self.weight, self.names = idf, postings, weight, names

    @classmethod
    def build(cls, entries: list[_Entry], word_sets: list[tuple[str, ...]]) -> TemplateIndex:
        n = len(entries)
        df = Counter(chain.from_iterable(word_sets))
        max_df = max(1, int(n * _MAX_DF_FRACTION))
        idf = {w: math.log(n / c) for w, c in df.items() if c <= max_df}
        postings: dict[str, list[int]] = defaultdict(list)
        weight: list[float] = []
        for i, ws in enumerate(word_sets):
            rare = idf.keys() & ws
            weight.append(math.fsum(map(idf.__getitem__, rare)))
            for w in rare:
                postings[w].append(i)
        names: dict[tuple[str, ...], str] = {}
        for e in entries:
            if e.spdx_id.startswith("LicenseRef-") or e.meta.get("is_exception") == "yes":
                continue
            short = e.meta.get("short_name", "")
            for label in (e.name, short if isinstance(short, str) else "", e.spdx_id):
                key = tuple(w for w in normalize_words(label) if w not in {"the", "version"})
                if key:
                    names.setdefault(key, e.spdx_id)
        return cls(entries, idf, dict(postings), weight, names)

    def to_bytes(self) -> bytes:
        """The index as marshal data (built-in types only), for ``from_bytes``."""
        entries = [(e.key, e.spdx_id, e.name, e.meta, e.path, e.offset) for e in self.entries]
        return marshal.dumps((entries, self.idf, self.postings, self.weight, self.names))

    @classmethod
    def from_bytes(cls, data: bytes | memoryview) -> TemplateIndex:
        entries, idf, postings, weight, names = marshal.loads(data)
        return cls([_Entry(*e) for e in entries], idf, postings, weight, names)

    def template(self, i: int) -> Template:
        with self._lock:
            tpl = self._parsed.get(i)
            if tpl is None:
                entry = self.entries[i]
                known = cast("_Fields | None", self.derived.get("templates", entry.key))
                if known is not None:
                    tpl = _template_from(known)
                else:
                    tpl = _parse(entry)
                    self.derived.put("templates", entry.key, _template_fields(tpl))
                self._parsed[i] = tpl
            return tpl

    def by_id(self, spdx_id: str) -> Template | None:
        i = self.by_spdx.get(spdx_id)
        return None if i is None else self.template(i)

    def candidates(self, words: Iterable[str], min_containment: float = 0.45) -> list[int]:
        """Templates whose rare words are mostly present in ``words``, best first: ranked by
        the harmonic mean of how much of the template is present and how much of the words'
        rare vocabulary it explains, so that MIT ranks above a short fragment of MIT."""
        acc = [0.0] * len(self.weight)  # per template, the idf of its rare words present
        total = 0.0
        idf, postings = self.idf, self.postings
        for w in set(words):
            x = idf.get(w)
            if x is not None:
                total += x
                for i in postings.get(w, ()):
                    acc[i] += x
        scored = []
        for i, (s, weight) in enumerate(zip(acc, self.weight, strict=True)):
            if s >= min_containment * weight > 0:
                contained, explained = s / weight, s / total
                scored.append((2 * contained * explained / (contained + explained), i))
        scored.sort(reverse=True)
        return [i for _, i in scored]


def _read(path: str, sep: bytes) -> tuple[dict[str, str | list[str]], bytes, int] | None:
    """(front matter, body, offset of the body) of a data file."""
    with open(path, "rb") as fh:
        raw = fh.read()
    cut = raw.find(sep, 3)
    if not raw.startswith(b"---") or cut < 0:
        return None
    start = cut + len(sep)
    return _frontmatter(raw[4:cut].decode("utf-8", errors="replace")), raw[start:], start


def _load(folder: Path, extra: Path | None = None) -> TemplateIndex:
    """ScanCode's licenses, then the choosealicense.com texts (what GitHub's license picker
    writes into new repositories) when ``extra`` holds them."""
    entries: list[tuple[_Entry, tuple[str, ...] | None]] = []
    aliases: dict[str, str] = {}  # deprecated SPDX ids -> current (GPL-2.0 -> GPL-2.0-only)
    for item in sorted(os.scandir(folder), key=lambda e: e.name):
        got = _read(item.path, b"\n---\n") if item.name.endswith(".LICENSE") else None
        if got is None or any(
            got[0].get(f) == "yes" for f in ("is_deprecated", "is_unknown", "is_generic")
        ):
            continue
        meta, body, offset = got
        key = item.name.removesuffix(".LICENSE")
        spdx, name = meta.get("spdx_license_key"), meta.get("name")
        spdx_id = spdx if isinstance(spdx, str) and spdx else f"LicenseRef-scancode-{key}"
        for old in meta.get("other_spdx_license_keys", []):
            aliases.setdefault(old, spdx_id)
        label = name if isinstance(name, str) else key
        entries.append((_Entry(key, spdx_id, label, meta, item.path, offset), _word_set(body)))
    for path in sorted(extra.glob("*.txt")) if extra else []:
        got = _read(str(path), b"\n---\n")
        spdx = got[0].get("spdx-id") if got else None
        if got and isinstance(spdx, str):
            title = got[0].get("title")
            entry = _Entry(
                f"choosealicense-{path.stem}",
                aliases.get(spdx, spdx),
                title if isinstance(title, str) else spdx,
                got[0],
                str(path),
                got[2],
            )
            entries.append((entry, _word_set(got[1])))
    kept: list[_Entry] = []
    word_sets: list[tuple[str, ...]] = []
    for e, words in entries:
        if words is not None:
            kept.append(e)
            word_sets.append(words)
    return TemplateIndex.build(kept, word_sets)


def _word_set(body: bytes) -> tuple[str, ...] | None:
    """The template's vocabulary for the index (distinct words), or None for a text too short
    to be a license. Computed while reading, so no more than one body is in memory at a time;
    kept as a tuple until the index is built: 2,300 sets at once would take ~35 MB more."""
    rough = body.translate(_ROUGH_TABLE).decode("ascii").split()  # C speed, ASCII words
    if len(rough) < MIN_TEMPLATE_WORDS:
        return None
    # interned: 2,300 sets then share one vocabulary, which halves the peak memory
    words = set(map(sys.intern, rough))
    for w in words & _VARIANTS.keys():
        words.discard(w)
        words.add(_VARIANTS[w])
    return tuple(words)


def _choosealicense_dir() -> Path | None:
    spec = importlib.util.find_spec("pychoosealicense")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        if (Path(loc) / "_licenses").is_dir():
            return Path(loc) / "_licenses"
    return None


_LOCK = threading.Lock()
_INDEX: TemplateIndex | None = None


def load_index() -> TemplateIndex:
    """The process-wide template index, built on first use from the installed packages, or
    read from the user's cache folder where an earlier process left it for the same packages
    and the same code (reading 2,300 files and indexing them takes half a second of CPU, every
    first audit and every night a new license text turns up; the cache file, 20 ms)."""
    global _INDEX
    with _LOCK:
        if _INDEX is None:
            folder, extra = data_dir(), _choosealicense_dir()
            cache = _cache_path(folder, extra)
            _INDEX = _read_cached(cache) if cache else None
            if _INDEX is None:
                _INDEX = _load(folder, extra)
                if cache:
                    _write_cached(cache, _INDEX)
            _INDEX.derived = DerivedCache(
                _cache_path(folder, extra, _DERIVED_PREFIX, _DERIVED_FORMAT, _DERIVED_CODE)
            )
        return _INDEX


# -- the index cached on disk -------------------------------------------------------------

CACHE_ENV = "CRAWLER_CACHE_DIR"  # else $XDG_CACHE_HOME/crawler, else ~/.cache/crawler
_CACHE_FORMAT = b"crawler license index 1\n"
_CACHE_PREFIX = "license-index-"
# what analyses derive once per process from the texts (templates tokenised in full, official
# variants read from ScanCode's rules): the code of both modules names the file
_DERIVED_FORMAT = b"crawler license derived 2\n"  # 2: each value its own marshal bytes
_DERIVED_PREFIX = "license-derived-"
_DERIVED_CODE = ("license_templates.py", "license_variants.py")


def cache_dir() -> Path | None:
    """Where derived data that can be rebuilt is kept; None when there is no home folder."""
    explicit = os.environ.get(CACHE_ENV, "")
    if explicit:
        return Path(explicit)
    try:
        return xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache") / "crawler"
    except RuntimeError:  # no home folder to fall back on
        return None


def _cache_path(
    folder: Path,
    extra: Path | None,
    prefix: str = _CACHE_PREFIX,
    form: bytes = _CACHE_FORMAT,
    code: Sequence[str] = ("license_templates.py",),
) -> Path | None:
    """The cache file for these packages and this code: any change to either names another
    file (the index of a different ScanCode release, or of an edited tokenizer, is never read).
    The name begins with the packages' place (``_place``): each installation on the machine
    (two virtual environments, two checkouts) keeps a file of its own."""
    where = cache_dir()
    if where is None:
        return None
    key = hashlib.sha256(form)
    for part in (sys.version, str(marshal.version), str(folder), str(extra)):
        key.update(part.encode() + b"\0")
    for package in (DATA_DISTRIBUTION, "pychoosealicense"):
        try:
            key.update(importlib.metadata.version(package).encode() + b"\0")
        except importlib.metadata.PackageNotFoundError:
            key.update(b"-\0")
    try:
        for path in (folder, extra):
            key.update(str(path.stat().st_mtime_ns if path else 0).encode() + b"\0")
        for name in code:  # the code that builds what is cached
            key.update(Path(__file__).with_name(name).read_bytes())
    except OSError:
        return None
    return where / f"{prefix}{_place(folder, extra)}-{key.hexdigest()[:32]}.marshal"


def _place(folder: Path, extra: Path | None) -> str:
    """Where the license packages are installed, as 12 hex digits of a file name."""
    return hashlib.sha256(f"{folder}\0{extra}".encode()).hexdigest()[:12]


def _read_checked(path: Path, form: bytes) -> memoryview | None:
    """A cache file's body (a view of the bytes read: not a copy of them), or None when it is
    absent, unreadable, torn or altered (its checksum covers every byte: a half-written or
    edited file is rebuilt, never half-used)."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    n = len(form)
    head, digest, body = raw[:n], raw[n : n + 32], memoryview(raw)[n + 32 :]
    if head != form or hashlib.sha256(body).digest() != digest:
        log.info("license cache %s is not valid; rebuilding it", path)
        return None
    return body


def _write_checked(path: Path, form: bytes, body: bytes, prefix: str) -> None:
    """Write a cache file whole (a temporary file renamed into place), and remove the files
    that other package versions or code of the same installation wrote (and those of names
    without an installation's place, which older code wrote); another installation's files are
    its own: removed, they would be rebuilt by it on its next start, and this one's by this one
    (half a second of CPU each time, whenever two installations take turns). A folder that
    cannot be written only costs the next process the build."""
    temporary: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", delete=False) as out:
            temporary = out.name
            out.write(form + hashlib.sha256(body).digest() + body)
        os.replace(temporary, path)
        place = path.name[len(prefix) :].partition("-")[0]
        for old in path.parent.glob(f"{prefix}*.marshal"):
            named = old.name[len(prefix) : -len(".marshal")]
            if old != path and (named.startswith(f"{place}-") or "-" not in named):
                old.unlink(missing_ok=True)
    except OSError as exc:
        log.info("license data not cached in %s: %s", path.parent, exc)
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _read_cached(path: Path) -> TemplateIndex | None:
    """The cached index, or None when it is absent or not valid."""
    body = _read_checked(path, _CACHE_FORMAT)
    if body is None:
        return None
    try:
        return TemplateIndex.from_bytes(body)
    except (ValueError, TypeError, EOFError):
        log.info("license index cache %s could not be read; rebuilding it", path)
        return None


def _write_cached(path: Path, index: TemplateIndex) -> None:
    _write_checked(path, _CACHE_FORMAT, index.to_bytes(), _CACHE_PREFIX)


class DerivedCache:
    """What analyses derive from the license data and would otherwise derive again in every
    process: templates tokenised in full (a first text of a kind makes some 40 of them
    candidates, 0.15 s) and the official variants of a long license (ScanCode's full-text
    rules of it, read and normalised: 0.25 s for Apache-2.0). Kept by section and key in one
    checksummed file beside the index, read when first needed and written by ``save`` when
    something was added (merged with what another process wrote meanwhile). ``path`` None:
    nothing is read or written (an index built in memory, a machine without a cache folder).

    Each value is kept as its own marshal bytes and decoded when asked for: the file grows with
    every template a text ever made a candidate (486 after the license evaluation's texts, 8.6
    MB), and decoding all of it cost every process 50 MB of memory and 60 ms for the few dozen
    templates it reads."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._data: dict[str, dict[str, bytes]] | None = None
        self._added = False
        self._lock = threading.RLock()

    def _loaded(self) -> dict[str, dict[str, bytes]]:
        if self._data is None:
            self._data = self._read(self.path) if self.path is not None else {}
        return self._data

    @staticmethod
    def _read(path: Path) -> dict[str, dict[str, bytes]]:
        body = _read_checked(path, _DERIVED_FORMAT)
        try:
            data = marshal.loads(body) if body is not None else {}
        except (ValueError, TypeError, EOFError):
            data = {}
        return data if isinstance(data, dict) else {}

    def get(self, section: str, key: str) -> object | None:
        with self._lock:
            raw = self._loaded().get(section, {}).get(key)
        try:
            return marshal.loads(raw) if raw is not None else None
        except (ValueError, TypeError, EOFError):
            return None

    def put(self, section: str, key: str, value: _Fields | tuple[str, ...]) -> None:
        raw = marshal.dumps(value)
        with self._lock:
            self._loaded().setdefault(section, {})[key] = raw
            self._added = self.path is not None

    def save(self) -> None:
        """Write what this process added, if anything (one file for every process)."""
        with self._lock:
            if not self._added or self.path is None:
                return
            merged = self._read(self.path)
            for section, values in self._loaded().items():
                merged.setdefault(section, {}).update(values)
            _write_checked(self.path, _DERIVED_FORMAT, marshal.dumps(merged), _DERIVED_PREFIX)
            self._data, self._added = merged, False


@dataclass
class Alignment:
    """How one template lines up with a run of file words (indices are file word indices)."""

    tpl: Template
    lo: int  # file words [lo, hi) are explained by the template
    hi: int
    blocks: list[tuple[int, int, int]]  # (template pos, file word index, size) equal runs
    matched: int = 0
    missing: list[tuple[int, list[str]]] = field(default_factory=list)  # (file word, absent)
    fills: list[tuple[int, int, list[str]]] = field(default_factory=list)  # placeholder filled
    inserted: list[tuple[int, int]] = field(default_factory=list)  # added file words [a, b)
    altered: list[tuple[int, int, list[str]]] = field(default_factory=list)  # replacing words
    coverage: float = 0.0
    score: float = 0.0

    @property
    def verdict(self) -> str:
        if self.missing or self.altered:
            return "modified"
        return "match_with_extra_text" if self.inserted else "exact"


def _blocks(tpl: Template, words: Sequence[str]) -> list[tuple[int, int, int]]:
    """Matching blocks (template pos, file pos, size); common prefix and suffix fast-pathed."""
    a, b = tpl.words, words
    n = min(len(a), len(b))
    pre = suf = 0
    while pre < n and a[pre] == b[pre]:
        pre += 1
    while suf < n and a[-1 - suf] == b[-1 - suf]:
        suf += 1
    if pre + suf > n:  # overlapping: the longer run wins, the other is cut back
        if suf >= pre:
            pre = n - suf
        else:
            suf = n - pre
    mid = matching_blocks(a[pre : len(a) - suf], b[pre : len(b) - suf])  # difflib's blocks
    out = [(0, 0, pre)] if pre else []
    out += [(i + pre, j + pre, k) for i, j, k in mid]
    if suf:
        out.append((len(a) - suf, len(b) - suf, suf))

    # a few words matched in the optional tail (the Apache appendix) are chance, not a match;
    # a dense run of them is the appendix itself, though the file has only part of it
    tail = [blk for blk in out if blk[0] >= tpl.optional_from]
    matched = sum(k for _, _, k in tail)
    spread = tail[-1][1] + tail[-1][2] - tail[0][1] if tail else 0
    dense = matched >= 40 and 4 * matched >= 3 * spread
    if tail and not dense and matched < max(8.0, 0.3 * (len(a) - tpl.optional_from)):
        out = [blk for blk in out if blk[0] < tpl.optional_from]
    return _trim(out, a, b)


def _trim(
    out: list[tuple[int, int, int]], a: Sequence[str], b: Sequence[str]
) -> list[tuple[int, int, int]]:
    """Drop sparse runs of small blocks at either edge (a stray "the software" matched in text
    that is not the license), then extend the edge blocks over words that do match."""
    while len(out) > 1:
        big = [i for i, blk in enumerate(out) if blk[2] >= 5]
        if not big or big[-1] == len(out) - 1:
            break
        start = out[big[-1]][1] + out[big[-1]][2]
        edge = out[big[-1] + 1 :]
        if 2 * sum(k for _, _, k in edge) >= edge[-1][1] + edge[-1][2] - start:
            break
        out.pop()
    while len(out) > 1:
        big = [i for i, blk in enumerate(out) if blk[2] >= 5]
        if not big or big[0] == 0:
            break
        edge = out[: big[0]]
        if 2 * sum(k for _, _, k in edge) >= out[big[0]][1] - edge[0][1]:
            break
        out.pop(0)
    if out:
        i, j, k = out[-1]
        while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
            k += 1
        out[-1] = (i, j, k)
        i, j, k = out[0]
        while i > 0 and j > 0 and a[i - 1] == b[j - 1]:
            i, j, k = i - 1, j - 1, k + 1
        out[0] = (i, j, k)
    return out


def _unbind_boiler(
    tpl: Template, blocks: list[tuple[int, int, int]], offset: int, ignorable: Sequence[bool]
) -> list[tuple[int, int, int]]:
    """Template words of its own copyright lines ("All rights reserved") match words outside
    the file's copyright statements only by chance when one or two match alone: "rights" in
    an inserted sentence is no such match (a whole "Copyright (C) <year> <name of author>"
    re-wrapped into prose still is)."""
    boiler = tpl.boiler_sorted
    out: list[tuple[int, int, int]] = []
    for i, j, k in blocks:
        cuts: list[tuple[int, int]] = []  # block-relative [x, x + run) to unbind
        at = bisect_left(boiler, i)
        while at < len(boiler) and boiler[at] < i + k:
            x, run = boiler[at] - i, 0
            while (
                at < len(boiler)
                and boiler[at] == i + x + run < i + k
                and not ignorable[offset + j + x + run]
            ):
                run, at = run + 1, at + 1
            if 0 < run <= 2:
                cuts.append((x, x + run))
            at += run == 0
        start = 0
        for x0, x1 in cuts:
            if x0 > start:
                out.append((i + start, j + start, x0 - start))
            start = x1
        if k > start:
            out.append((i + start, j + start, k - start))
    return out


def runs_of(positions: list[int]) -> list[tuple[int, int]]:
    """Sorted positions as half-open runs: [1, 2, 3, 7] -> [(1, 4), (7, 8)]."""
    runs: list[tuple[int, int]] = []
    for p in positions:
        if runs and runs[-1][1] == p:
            runs[-1] = (runs[-1][0], p + 1)
        else:
            runs.append((p, p + 1))
    return runs


# given file word indices that would fill a variable region, those that read as sentences
# or clauses: they are extra text, not a fill
ProseFinder = Callable[[list[int]], set[int]]


def align(
    tpl: Template,
    words: Sequence[str],
    offset: int = 0,
    ignorable: Sequence[bool] = (),
    prose: ProseFinder | None = None,
) -> Alignment | None:
    """Align ``tpl`` with ``words`` (file words from index ``offset``). File words flagged in
    ``ignorable`` (indexed like the whole file: copyright lines) are never extra text. A
    variable region of the template (its copyright lines, placeholders) is filled only by
    words that ``prose`` does not call a sentence or clause; those are inserted text."""
    blocks = _blocks(tpl, words)
    if tpl.boiler and ignorable:
        blocks = _unbind_boiler(tpl, blocks, offset, ignorable)
    if not blocks:
        return None
    first, last = blocks[0], blocks[-1]
    res = Alignment(
        tpl,
        offset + first[1],
        offset + last[1] + last[2],
        [(a, offset + b, k) for a, b, k in blocks],
        sum(k for _, _, k in blocks),
    )
    gaps = [(0, first[0], first[1], first[1])]
    gaps += [(a1 + k1, a2, b1 + k1, b2) for (a1, b1, k1), (a2, b2, _) in pairwise(blocks)]
    gaps.append((last[0] + last[2], len(tpl.words), last[1] + last[2], last[1] + last[2]))
    optional_unmatched = 0
    for ta, tb, fa, fb in gaps:
        req = [p for p in range(ta, tb) if tpl.title_len <= p < tpl.optional_from]
        optional_unmatched += (tb - ta) - len(req)
        free = [offset + k for k in range(fa, fb) if not (ignorable and ignorable[offset + k])]
        tw = [tpl.words[p] for p in req]
        if not req:
            res.inserted += runs_of(free)
            continue
        boiler = all(p in tpl.boiler for p in req)  # the template's own copyright lines
        variable = boiler or all(
            p in tpl.variable or p in tpl.boiler or tpl.words[p] in PLACEHOLDER_WORDS for p in req
        )
        said = prose(free) if variable and free and prose is not None else set()
        names = [k for k in free if k not in said] if said else free
        if boiler:
            res.matched += len(req)
            res.inserted += runs_of(sorted(said))
            res.inserted += runs_of(names) if len(names) > _MAX_FILL_WORDS else []
        elif variable and len(names) <= _MAX_FILL_WORDS:
            res.matched += len(req)
            if names:
                res.fills.append((names[0], names[-1] + 1, tw))
            res.inserted += runs_of(sorted(said))
        elif free:
            res.altered.append((free[0], free[-1] + 1, tw))
        else:
            res.missing.append((offset + max(fa - 1, 0), tw))
    total = len(tpl.words) - optional_unmatched
    res.coverage = min(1.0, res.matched / total) if total else 0.0
    unexplained = sum(b - a for a, b in res.inserted) + sum(b - a for a, b, _ in res.altered)
    res.score = res.matched - (total - res.matched) - 0.5 * unexplained
    return res


def _shared(counts: Counter[str], seg: Counter[str]) -> int:
    """How many words the template (its word counts) and the file words have in common, each
    word counted as often as it stands in both: an upper bound of the words an alignment
    matches. The smaller of the two is looked up in the other, at C speed."""
    if len(seg) < len(counts):
        counts, seg = seg, counts
    return sum(map(min, counts.values(), map(seg.get, counts, repeat(0))))


def best_alignment(
    index: TemplateIndex,
    words: Sequence[str],
    offset: int = 0,
    ignorable: Sequence[bool] = (),
    prose: ProseFinder | None = None,
) -> Alignment | None:
    """The template that best explains ``words``, or None when none covers enough of itself."""
    seg = Counter(words)
    bounds = []
    for i in index.candidates(words)[:40]:
        tpl = index.template(i)
        ub = _shared(tpl.counts, seg)
        bounds.append((ub - max(0, tpl.required - ub), tpl.is_spdx_listed, -len(tpl.words), i))
    bounds.sort(reverse=True)
    best: Alignment | None = None
    for bound, _, _, i in bounds:
        if best is not None and bound < _rank(best)[0]:
            break
        tpl = index.template(i)
        w0, w1 = _window(tpl, words)
        cand = align(tpl, words[w0:w1], offset + w0, ignorable, prose)
        if cand is None or cand.coverage < MIN_COVERAGE or cand.matched < MIN_WORDS:
            continue
        if best is None or _rank(cand) > _rank(best):
            best = cand
    return best


def rival_alignments(
    index: TemplateIndex,
    words: Sequence[str],
    offset: int,
    ignorable: Sequence[bool],
    prose: ProseFinder | None,
    than: Alignment,
    worth: Callable[[Template], bool],
    limit: int = 40,
) -> Iterator[Alignment]:
    """Alignments of SPDX-listed licenses other than ``than``'s that could explain ``words``
    (among the ``limit`` likeliest templates, as ``best_alignment`` considers them, each
    short of at most a tenth of its words, and ``worth`` aligning), for a caller that weighs
    each with its official variants."""
    seg = Counter(words)
    for i in index.candidates(words)[:limit]:
        tpl = index.template(i)
        if tpl.spdx_id == than.tpl.spdx_id or not tpl.is_spdx_listed:
            continue
        ub = _shared(tpl.counts, seg)
        if tpl.required - ub > tpl.required // 10:
            continue  # too far from the words for any variant of it to be them
        if not worth(tpl):
            continue
        w0, w1 = _window(tpl, words)
        cand = align(tpl, words[w0:w1], offset + w0, ignorable, prose)
        if cand is not None and cand.coverage >= MIN_COVERAGE and cand.matched >= MIN_WORDS:
            yield cand


def _window(tpl: Template, words: Sequence[str]) -> tuple[int, int]:
    """The part of a long run of words where ``tpl`` most likely stands (the first such part
    when it stands there several times): alignment time grows with the words it is given."""
    n, t = len(words), len(tpl.words)
    if n <= 3 * t + 200:
        return 0, n
    unique = tpl.unique()
    votes: Counter[int] = Counter()
    for p, w in enumerate(words):
        q = unique.get(w)
        if q is not None:
            votes[(p - q) // 64] += 1
    if not votes:
        return 0, n
    top = max(votes.values())
    d = 64 * min(b for b, v in votes.items() if v == top)
    return max(0, d - t // 2 - 64), min(n, d + t + t // 2 + 64)


def _rank(a: Alignment) -> tuple[float, bool, int]:
    """Score, with a ScanCode-only (LicenseRef) variant needing a clear margin to win."""
    margin = 0.0 if a.tpl.is_spdx_listed else max(3.0, 0.02 * len(a.tpl.words))
    return a.score - margin, a.tpl.is_spdx_listed, -len(a.tpl.words)


def reference_text(spdx_id: str, source: str = "scancode") -> str:
    """The text of ``spdx_id`` as a data package ships it: ``source`` "scancode" (its {{...}}
    marks removed) or "choosealicense" (placeholders such as [year] kept). For demos and
    tests: this repository stores no license text."""
    index = load_index()
    prefix = "choosealicense-" if source == "choosealicense" else ""
    for e in index.entries:
        if (
            e.spdx_id == spdx_id
            and e.key.startswith(prefix)
            and (prefix or not e.key.startswith("choosealicense-"))
        ):
            body = re.sub(r"\{\{(.*?)\}\}", r"\1", e.body, flags=re.DOTALL)
            return body.strip("\n") + "\n"
    raise KeyError(f"{spdx_id} is not in the {source} license texts")
