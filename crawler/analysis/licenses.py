"""Our own reading of a license file, independent of GitHub's licensee verdict.

The file's normalised words are aligned (difflib, word level) against ScanCode license
templates picked by an inverted-index prefilter (``license_templates``). What no template
explains is sorted into copyright statements, titles, SPDX tags and *extra* or *altered*
text, kept verbatim with line numbers so that a reviewer reads the actual sentence rather
than a score. Several licenses in one file are found one after another on the words left.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from functools import cache
from pathlib import Path

from license_expression import Licensing, get_spdx_licensing

from crawler.analysis.license_clauses import (
    copyright_clause,
    reads_as_prose,
    span_effect,
    text_span,
)
from crawler.analysis.license_paths import is_test_data
from crawler.analysis.license_templates import (
    SPDX_TAG_RE,
    Alignment,
    Template,
    TemplateIndex,
    best_alignment,
    is_copyright_line,
    load_index,
    normalize_words,
    rival_alignments,
    runs_of,
    tokenize_lines,
)
from crawler.analysis.license_variants import accept_variants, differences, may_explain
from crawler.model import (
    LicenseAnalysis,
    LicenseMatch,
    LicenseVerdict,
    SpanEffect,
    TextSpan,
)

MAX_CHARS = 256 * 1024  # characters analysed per file
MAX_MATCHES = 8
MIN_SEGMENT = 20  # fewer unexplained words than this are not searched for another license
MAX_HOLDER_LINE_WORDS = 20  # a longer line after a copyright line does not continue it
_SENTENCE_END = ".;!?:"
_SENTENCE_BREAK_RE = re.compile(r"[.;!?:]\s")  # between two words of a line ("1.0" is not)
_FULL_STOP_RE = re.compile(r"[\"'”’)\]]*[.;!?:](?:\s|$)")  # right after a sentence's last word

# Bump when the analysis changes what it reports: stored analyses of older engines are redone.
ENGINE_VERSION = 4  # 2: variable regions take only names, years and holder lists (issue 13)
# 3: official variants of long texts (FSF revisions, http/https) are the license (issue 18)
# 4: short texts' official variants, title lines naming the software, whole-sentence quotes (32)

__all__ = [
    "ENGINE_VERSION",
    "LicenseAnalysis",
    "LicenseMatch",
    "SpanEffect",
    "TextSpan",
    "analyze_file",
    "analyze_license",
    "is_license_file",
    "normalize_github_spdx",
    "pick_root_license",
    "span_effect",
    "text_span",
    "with_effects",
    "word_diff",
]


@dataclass
class _Doc:
    lines: list[str]
    words: list[str]
    line: list[int]  # 0-based line of each word
    start: list[int]  # offset of each word in its line
    end_line: list[int]  # where each word ends (a hyphenated word goes on to the next line)
    end: list[int]
    ignorable: list[bool]  # word of a copyright statement (holders, years): never extra text
    kind: dict[int, str]  # line -> "copyright" | "holder" (continues one) | "spdx"
    clause: dict[int, int]  # copyright line -> offset of a clause that is extra text
    tags: list[tuple[int, str]]  # SPDX-License-Identifier lines
    truncated: bool  # longer than MAX_CHARS: only the start was read

    def span(self, lo: int, hi: int) -> TextSpan:
        """Verbatim text of words [lo, hi) with the punctuation attached to them."""
        l0, l1 = self.line[lo], self.end_line[hi - 1]
        first, last = self.lines[l0], self.lines[l1]
        floor = self.end[lo - 1] if lo > 0 and self.end_line[lo - 1] == l0 else 0
        ceil = self.start[hi] if hi < len(self.words) and self.line[hi] == l1 else len(last)
        s, e = self.start[lo], self.end[hi - 1]
        while s > floor and not first[s - 1].isspace():
            s -= 1
        while e < ceil and not last[e].isspace():
            e += 1
        parts = [first[s:e]] if l0 == l1 else [first[s:], *self.lines[l0 + 1 : l1], last[:e]]
        return text_span(l0 + 1, l1 + 1, "\n".join(parts))

    def prose(self, free: list[int]) -> set[int]:
        """Those of ``free`` (sorted word indices) in a sentence or clause rather than a name,
        a year or a list of holders; pieces are cut at sentence punctuation and paragraphs."""
        out: set[int] = set()
        piece: list[int] = []
        for k in [*free, -1]:
            if piece and (k < 0 or self._breaks(piece[-1], k)):
                lo, hi = piece[0], piece[-1] + 1
                if any(self.kind.get(self.line[i]) == "copyright" for i in piece) or reads_as_prose(
                    self.span(lo, hi).text
                ):
                    out.update(piece)  # a copyright line's words here are its clause
                piece = []
            piece.append(k)
        return out

    def _breaks(self, a: int, b: int) -> bool:
        """A sentence or paragraph ends between word ``a`` and the later word ``b``."""
        la, lb = self.end_line[a], self.line[b]
        if b != a + 1 or lb > la + 1 or self.kind.get(la) != self.kind.get(lb):
            return True
        if la == lb:
            return _SENTENCE_BREAK_RE.search(self.lines[la], self.end[a], self.start[b]) is not None
        last = self.lines[la].rstrip()[-1:]
        return bool(last) and last in _SENTENCE_END


def _prepare(text: str) -> _Doc:
    cut = text[:MAX_CHARS].lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    doc = _Doc(cut.split("\n"), [], [], [], [], [], [], {}, {}, [], len(text) > MAX_CHARS)
    for i, line in enumerate(doc.lines):
        tag = SPDX_TAG_RE.search(line)
        if tag:
            doc.kind[i] = "spdx"
            doc.tags.append((i, tag.group("expr")))
        elif is_copyright_line(line):
            doc.kind[i] = "copyright"
            clause = copyright_clause(line)
            if clause is not None:
                doc.clause[i] = clause
        elif (
            doc.kind.get(i - 1) in ("copyright", "holder")
            and i - 1 not in doc.clause
            and line.strip()
            and len(line.split()) <= MAX_HOLDER_LINE_WORDS
            and not reads_as_prose(line)
        ):
            doc.kind[i] = "holder"  # a holder list or address continuing a copyright line
    for ln, w, s, eln, e in tokenize_lines(doc.lines):
        kind = doc.kind.get(ln)
        if kind != "spdx":
            doc.words.append(w)
            doc.line.append(ln)
            doc.start.append(s)
            doc.end_line.append(eln)
            doc.end.append(e)
            held = kind == "holder" or (kind == "copyright" and s < doc.clause.get(ln, s + 1))
            doc.ignorable.append(held)
    return doc


@cache
def _licensing() -> Licensing:
    return get_spdx_licensing()


def _keys(expression: str | None) -> list[str]:
    """License ids in an expression (exceptions included); none when it does not parse."""
    try:
        return [str(k) for k in _licensing().license_keys(expression, unique=True)]
    except Exception:  # license-expression raises several error types on malformed input
        return []


def normalize_github_spdx(spdx_id: str | None) -> str | None:
    """An SPDX id or expression in current form; NOASSERTION, other, none and None -> None."""
    if spdx_id is None or spdx_id.strip().upper() in ("", "NOASSERTION", "OTHER", "NONE"):
        return None
    try:
        return str(_licensing().parse(spdx_id.strip(), validate=False).render())
    except Exception:  # malformed expression: keep what we were given
        return spdx_id.strip()


_GENERIC_TITLE = frozenset(
    (
        "the",
        "license",
        "version",
        "v",
        "software",
        "agreement",
        "terms",
        "and",
        "conditions",
        "of",
        "text",
        "new",
        "revised",
        "simplified",
        "or",
        "clause",
        "open",
        "source",
        "public",
        "general",
        "gnu",
        "for",
        "a",
        "full",
        "notice",
        "permission",
    )
)
_HOLDER_LEAD_RE = re.compile(
    r"^[\s*#/;>|!-]*(?:spdx-filecopyrighttext\s*:\s*)?(?:(?:copyright|\(c\)|©)[\s:,]*)*"
    r"|\ball rights reserved\.?",
    re.IGNORECASE,
)
_YEARS_RE = re.compile(r"^\s*(?:(?:\d{4}|present)\s*(?:[-–,]\s*)?)+[\s,.]*", re.IGNORECASE)
_ABBREV = ("inc.", "ltd.", "co.", "corp.", "l.p.", "s.a.", "jr.", "llc.", "e.v.", "b.v.")
_DUAL_RE = re.compile(
    r"dual[\s-]*licen[cs]ed|licen[cs]ed under (?:either|both)|either of (?:the )?(?:following )?"
    r"licen[cs]es|under the terms of either|at your (?:option|choice)(?!\)?,?\s*any later)",
    re.IGNORECASE,
)
_LATER_RE = re.compile(r"or\s*\(?at your option\)?,?\s*any later version", re.IGNORECASE)
_SIBLING_RE = re.compile(
    r"^(?:licen[cs]e|copying)[-_.](?P<x>[\w.-]+?)(?:\.(?:txt|md|rst))?$", re.IGNORECASE
)
_SIBLING_IDS = {
    "mit": "MIT",
    "apache": "Apache-2.0",
    "apache2": "Apache-2.0",
    "apache-2.0": "Apache-2.0",
    "isc": "ISC",
}
_ONLY_RE = re.compile(r"^((?:A|L)?GPL-\d\.\d|GFDL-\d\.\d)-only$")


def _holder(line: str) -> str | None:
    """The holder named on a copyright line: years, (c), "All rights reserved" dropped."""
    s = _YEARS_RE.sub("", _HOLDER_LEAD_RE.sub(" ", line))
    s = re.sub(r"^(?:\(c\)|©|by\s)\s*", "", " ".join(s.split()), flags=re.IGNORECASE)
    s = s.strip(" ,;:")
    if s.endswith(".") and not s.lower().endswith(_ABBREV):
        s = s[:-1].rstrip()
    return s[:200] if s and s[0] not in "[<{" and re.search(r"\w", s) else None


def copyright_holder(line: str) -> str | None:
    """The holder a copyright line names, as ``copyright_holders`` lists it (a line outside
    every license text; the keyed reading, ``license_keys``, takes the holders of a text's own
    lines from here)."""
    return _holder(line)


def _is_title(line: str, vocab: set[str]) -> bool:
    words = re.findall(r"[a-z0-9]+", line.lower())
    if not 0 < len(words) <= 12:
        return False
    known = sum(w in vocab or w in _GENERIC_TITLE or w.isdigit() for w in words)
    return known >= 0.8 * len(words) and any(w in vocab and w not in _GENERIC_TITLE for w in words)


_HEADING_WORDS = frozenset(("license", "licence", "notice"))
# A title line naming the software the license is for, as Meta's BSD template has under its
# "BSD License": "For Zstandard software", 'For "folly" software'. One to three name words,
# quoted or not; none of them a word of a sentence ("For commercial use of this software").
_FOR_SOFTWARE_RE = re.compile(
    r"^[\s#*_>]*for\s+(?P<name>[\"'“”‘’`]?[\w.+-]+(?:[ \t]+[\w.+-]+){0,2}[\"'“”‘’`]?)"
    r"\s+software[\s*_]*$",
    re.IGNORECASE,
)
_NOT_A_NAME = frozenset(
    (
        "a",
        "an",
        "the",
        "this",
        "that",
        "any",
        "all",
        "use",
        "of",
        "your",
        "our",
        "its",
        "their",
        "such",
        "which",
        "commercial",
        "personal",
        "non",
        "free",
        "other",
        "using",
        "in",
        "with",
    )
)


def _names_the_software(line: str) -> bool:
    """A title line that names the software ("For Zstandard software"): part of the title."""
    m = _FOR_SOFTWARE_RE.match(line)
    if m is None:
        return False
    words = re.findall(r"[\w.+-]+", m.group("name").lower())
    return not any(w in _NOT_A_NAME for w in words)


def _is_heading(line: str) -> bool:
    """A short heading that names a license or notice without a sentence in it ("COPYRIGHT
    AND PERMISSION NOTICE", "Eclipse Distribution License - v 1.0"): a title, not terms."""
    words = re.findall(r"[a-z0-9]+", line.lower())
    return (
        0 < len(words) <= 8
        and bool(_HEADING_WORDS & set(words))
        and not line.rstrip().endswith((".", ";", ",", ":"))
        and not any(
            w
            in (
                "is",
                "are",
                "may",
                "must",
                "shall",
                "you",
                "your",
                "not",
                "no",
                "this",
                "any",
                "if",
                "only",
                "will",
            )
            for w in words
        )
    )


def _signature(doc: _Doc, found: list[Alignment]) -> set[int]:
    """Lines after the last license text that only sign it (names and e-mail addresses, as
    zlib's authors do): at most three lines, none of them prose, one with an address."""
    if not found:
        return set()
    after = doc.end_line[max(m.hi for m in found) - 1]
    rest = [ln for ln in range(after + 1, len(doc.lines)) if doc.lines[ln].strip()]
    if not 0 < len(rest) <= 3 or any(reads_as_prose(doc.lines[ln]) for ln in rest):
        return set()
    return set(rest) if any("@" in doc.lines[ln] for ln in rest) else set()


def _references(words: list[str], index: TemplateIndex) -> list[tuple[int, str]]:
    """(word index, SPDX id) for licenses named after "under (the terms of) the" in prose,
    e.g. "licensed under the MIT License"."""
    out: list[tuple[int, str]] = []
    for i, w in enumerate(words):
        if w != "under":
            continue
        rest = [x for x in words[i + 1 : i + 12] if x not in ("the", "version")]
        while rest[:2] == ["terms", "of"]:
            rest = rest[2:]
        for n in range(min(6, len(rest)), 0, -1):
            key = tuple(rest[:n])
            if key in index.names and not set(key) <= _GENERIC_TITLE:
                out.append((i, index.names[key]))
                break
    return out


def _sibling_id(path: str, index: TemplateIndex) -> str | None:
    m = _SIBLING_RE.match(path.replace("\\", "/").rsplit("/", 1)[-1])
    if not m:
        return None
    x = m.group("x").lower()
    return _SIBLING_IDS.get(x) or index.names.get(tuple(normalize_words(x)))


def _boundary(doc: _Doc, i: int) -> bool:
    """A line or a sentence ends before word ``i``."""
    if i <= 0 or i >= len(doc.words) or doc.end_line[i - 1] != doc.line[i]:
        return True
    return (
        _SENTENCE_BREAK_RE.search(doc.lines[doc.line[i]], doc.end[i - 1], doc.start[i]) is not None
    )


def _ends_sentence(doc: _Doc, i: int) -> bool:
    """Word ``i`` is followed by sentence punctuation ("License." ends its sentence)."""
    return _FULL_STOP_RE.match(doc.lines[doc.end_line[i]], doc.end[i]) is not None


def _edge_score(doc: _Doc, a: int, b: int) -> int:
    """How well file words [a, b) stand on their own: 1 for starting a line or a sentence,
    1 for ending a line and 2 for ending a sentence (its last word carries the full stop: a
    quote that keeps it is a whole sentence)."""
    end = 2 if b > a and _ends_sentence(doc, b - 1) else int(_boundary(doc, b))
    return int(_boundary(doc, a)) + end


def _snap_insertions(doc: _Doc, m: Alignment) -> None:
    """Where an inserted run could equally be shifted (its first word repeats the word after
    it, or its last the word before), keep the shift that begins and ends a sentence or
    line: "... this License. <inserted sentence ending in license.>" quotes the sentence."""
    blocks = list(m.blocks)
    for n in range(len(blocks) - 1):
        t1, f1, k1 = blocks[n]
        t2, f2, k2 = blocks[n + 1]
        a, b = f1 + k1, f2
        if t1 + k1 != t2 or b <= a:
            continue  # not a pure insertion
        best, shift = _edge_score(doc, a, b), 0
        for step in (1, -1):
            d = step
            while d < k2 if step > 0 else -d < k1:  # each block keeps a word
                moved = a + d - 1 if step > 0 else a + d  # the word that changes sides
                if doc.words[moved] != doc.words[moved + b - a]:
                    break
                if (score := _edge_score(doc, a + d, b + d)) > best:
                    best, shift = score, d
                d += step
        if shift:
            kept = [r for r in m.inserted if not a <= r[0] < b]
            free = [i for i in range(a + shift, b + shift) if not doc.ignorable[i]]
            m.inserted = sorted(kept + runs_of(free))
            blocks[n] = (t1, f1, k1 + shift)
            blocks[n + 1] = (t2 + shift, f2 + shift, k2 - shift)
    # the same at the start: a text before the license ending in "... license." must not
    # lend its last word to the template's optional title
    # and the title's words matched alone ("BSD", "License" of "BSD 2-Clause License") in
    # the middle of such a sentence are the sentence's, not a title
    while (
        len(blocks) > 1
        and blocks[0][0] + blocks[0][2] <= m.tpl.title_len
        and not _boundary(doc, blocks[0][1])
    ):
        blocks.pop(0)
        m.lo = blocks[0][1]
    t0, f0, k0 = blocks[0] if blocks else (0, 0, 0)
    if not _boundary(doc, f0):
        for x in (1, 2):
            if t0 + x <= m.tpl.title_len and x < k0 and _boundary(doc, f0 + x):
                blocks[0] = (t0 + x, f0 + x, k0 - x)
                m.lo = f0 + x
                break
    m.blocks = blocks


def _unexplained(doc: _Doc, m: Alignment, lo: int, hi: int) -> int:
    """Words of file words [lo, hi) that ``m`` leaves unexplained: inserted, altered, missing
    from its template, or outside it (copyright statements aside)."""
    inside = sum(b - a for a, b in m.inserted) + sum(b - a for a, b, _ in m.altered)
    inside += sum(len(tw) for _, tw in m.missing)
    outside = [i for r in (range(lo, m.lo), range(m.hi, hi)) for i in r if not doc.ignorable[i]]
    return inside + len(outside)


def _official_reading(
    doc: _Doc, index: TemplateIndex, m: Alignment, lo: int, hi: int
) -> tuple[Alignment, list[str]]:
    """``m`` with its license's official variant wording accepted; unless another license,
    its own official variants accepted, explains file words [lo, hi) better: a near-miss
    template (BSD-3-Clause-HP, for BSD-3-Clause in its "author" wording) does not win over the
    license whose ScanCode rules carry the wording word for word."""
    _snap_insertions(doc, m)
    said = accept_variants(index, m, doc.words, doc.ignorable)
    if not (m.altered or m.missing):
        return m, said  # exact, or words added to it: no near miss
    best, notes, score = m, said, _unexplained(doc, m, lo, hi)
    places = differences(m)

    def worth(tpl: Template) -> bool:
        return may_explain(index, tpl, doc.words, places)

    words = doc.words[lo:hi]
    for rival in rival_alignments(index, words, lo, doc.ignorable, doc.prose, m, worth):
        _snap_insertions(doc, rival)
        accepted = accept_variants(index, rival, doc.words, doc.ignorable)
        if not accepted:
            continue  # without official wording it lost to ``m`` already
        if (left := _unexplained(doc, rival, lo, hi)) < score:
            best, notes, score = rival, accepted, left
    return best, notes


def _leftover(doc: _Doc, found: list[Alignment]) -> list[tuple[int, int]]:
    """Extra words, outside every template span or added inside one; titles and copyright
    headings are not extra."""
    covered = bytearray(len(doc.words))
    for m in found:
        covered[m.lo : m.hi] = b"\x01" * (m.hi - m.lo)
    inside = {i for m in found for a, b in m.inserted for i in range(a, b)}
    vocab = {
        w
        for m in found
        for label in (m.tpl.name, m.tpl.key, m.tpl.spdx_id)
        for w in re.findall(r"[a-z0-9]+", label.lower())
    }
    by_line: dict[int, list[int]] = {}
    for i, ln in enumerate(doc.line):
        by_line.setdefault(ln, []).append(i)
    starts = {m.lo for m in found} | {by_line[ln][0] for ln in list(by_line)[:3]}
    signed = _signature(doc, found)
    extra: list[int] = []
    for ln, idx in by_line.items():
        free = [i for i in idx if (not covered[i] or i in inside) and not doc.ignorable[i]]
        if not free or ln in signed:
            continue
        title = any(i in starts for i in idx) or idx[-1] + 1 in starts
        line = doc.lines[ln]
        if title and (_is_title(line, vocab) or _is_heading(line) or _names_the_software(line)):
            continue
        nxt = next((j for j in range(ln + 1, len(doc.lines)) if doc.lines[j].strip()), None)
        heading = (
            doc.lines[ln].rstrip().endswith(":")
            and len(idx) <= 8
            and span_effect(doc.lines[ln]) == "other"
        )
        if len(free) == len(idx) and heading and doc.kind.get(nxt or -1) == "copyright":
            continue
        extra += free
    return runs_of(extra)


def _merge(doc: _Doc, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join word ranges a few words apart unless a copyright or SPDX line stands between."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if (
            out
            and lo - out[-1][1] <= 3
            and not any(
                j in doc.kind for j in range(doc.end_line[out[-1][1] - 1] + 1, doc.line[lo])
            )
        ):
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return out


def _notes(doc: _Doc, found: list[Alignment]) -> list[str]:
    notes: list[str] = []
    if doc.truncated:
        notes.append(f"only the first {MAX_CHARS // 1024} KiB of the file were analysed")
    if len(found) == MAX_MATCHES:
        notes.append(f"stopped after {MAX_MATCHES} license texts; more may follow")
    for m in found:
        for a, b, tw in m.fills:
            s = doc.span(a, b)
            said = " ".join("[placeholder]" if w == "\x00" else w for w in tw)
            notes.append(f'{m.tpl.spdx_id}: "{said}" reads "{s.text}" (line {s.start_line})')
        for at, tw in m.missing:
            shown = " ".join(tw[:12]) + (" ..." if len(tw) > 12 else "")
            notes.append(
                f'{m.tpl.spdx_id}: template words missing after line {doc.line[at] + 1}: "{shown}"'
            )
    return notes


def _matches(
    doc: _Doc,
    found: list[Alignment],
    extra: list[tuple[int, int]],
    prose: str,
    index: TemplateIndex,
    notes: list[str],
) -> list[LicenseMatch]:
    """Template matches, then licenses only named in extra text or SPDX tags, in file order."""
    later = _LATER_RE.search(prose)
    tagged = [(ln, k) for ln, expr in doc.tags for k in _keys(normalize_github_spdx(expr))]
    out: list[LicenseMatch] = []
    for m in found:
        spdx_id = m.tpl.spdx_id
        only = _ONLY_RE.match(spdx_id)
        tag = next((ln for ln, k in tagged if only and k == f"{only[1]}-or-later"), None)
        if only and (later or tag is not None) and index.by_id(f"{only[1]}-or-later"):
            spdx_id = f"{only[1]}-or-later"
            said = (
                f'"{later[0]}"' if later else f"an SPDX-License-Identifier (line {(tag or 0) + 1})"
            )
            notes.append(f"{spdx_id}: the text is {m.tpl.spdx_id}, the file adds {said}")
        elif only:
            notes.append(
                f"{only[1]} text alone does not say -only or -or-later: reported as "
                f"{spdx_id}; check the notices in the source files"
            )
        out.append(
            LicenseMatch(
                spdx_id,
                doc.line[m.lo] + 1,
                doc.end_line[m.hi - 1] + 1,
                round(m.coverage, 4),
                m.verdict,
            )
        )
    known = {m.spdx_id for m in out}
    named = [
        (doc.line[lo + i] + 1, doc.line[lo + i] + 1, ref)
        for lo, hi in extra
        for i, ref in _references(doc.words[lo:hi], index)
    ]
    named += [(ln + 1, ln + 1, k) for ln, k in tagged]
    for start, end, ref in named:
        if ref and ref not in known:
            known.add(ref)
            out.append(LicenseMatch(ref, start, end, 0.0, "reference"))
    return sorted(out, key=lambda m: (m.start_line, m.end_line))


def _expression(
    doc: _Doc,
    found: list[Alignment],
    matches: list[LicenseMatch],
    prose: str,
    index: TemplateIndex,
    path: str | None,
    siblings: Sequence[str],
    notes: list[str],
) -> str | None:
    """A license expression, only on explicit evidence: SPDX tags, dual-license wording,
    LICENSE-<id> files side by side, or an exception text following its license."""
    exceptions = {f.tpl.spdx_id for f in found if f.tpl.is_exception}
    groups: list[str] = []  # licenses in file order, an exception joined to the one before
    for m in matches:
        if (
            m.spdx_id in exceptions
            and groups
            and " WITH " not in groups[-1]
            and groups[-1] != m.spdx_id
        ):
            groups[-1] += f" WITH {m.spdx_id}"
        elif m.spdx_id not in groups:
            groups.append(m.spdx_id)
    others = [x for p in siblings if p != path and (x := _sibling_id(p, index))]
    expression: str | None = None
    if doc.tags:
        exprs = list(dict.fromkeys(e for _, e in doc.tags if e))
        expression = " AND ".join(f"({e})" if len(exprs) > 1 else e for e in exprs)
        tagged = {k for e in exprs for k in _keys(normalize_github_spdx(e))}
        texts = [m.spdx_id for m in matches if m.verdict != "reference"]
        if any(t not in tagged for t in texts):
            notes.append(
                f"SPDX-License-Identifier says {expression}, the text reads {', '.join(texts)}"
            )
    elif _DUAL_RE.search(prose) and len(groups) == 2:
        expression = " OR ".join(groups)
    elif _DUAL_RE.search(prose) and len(groups) > 2:
        notes.append(f"dual-license wording, but {len(groups)} licenses: no expression inferred")
    elif path and _sibling_id(path, index) and len(groups) == 1 and set(others) - set(groups):
        expression = " OR ".join(dict.fromkeys([groups[0], *others]))
    elif len(groups) == 1 and " WITH " in groups[0]:
        expression = groups[0]
    if expression is None:
        return None
    try:
        parsed = _licensing().parse(expression, validate=False)
    except Exception as exc:  # license-expression raises several error types
        notes.append(f"expression {expression!r} does not parse: {exc}")
        return None
    unknown = [
        k for k in _licensing().unknown_license_keys(parsed) if not str(k).startswith("LicenseRef-")
    ]
    if unknown:
        notes.append(f"expression {expression!r} names unknown ids: {', '.join(map(str, unknown))}")
    return str(parsed.render()) if parsed is not None else None
    return expression


def _holders(doc: _Doc, found: list[Alignment]) -> list[str]:
    """Holders named on copyright lines, but not on lines that are template text (a license
    quoting its own copyright) nor those the template lists as ignorable (the FSF's)."""
    ignorable = {h.lower().rstrip(".") for m in found for h in m.tpl.ignorable_holders}
    equal = bytearray(len(doc.words))
    for m in found:
        for _, b, k in m.blocks:
            equal[b : b + k] = b"\x01" * k
    votes: dict[int, list[int]] = {}
    for i, ln in enumerate(doc.line):
        if doc.ignorable[i]:
            votes.setdefault(ln, []).append(equal[i])
    out: list[str] = []
    for ln in sorted(k for k, v in doc.kind.items() if v == "copyright"):
        v = votes.get(ln, [])
        line = doc.lines[ln][: doc.clause.get(ln)]  # a clause on the line is extra text
        h = _holder(line) if 2 * sum(v) < len(v) or not v else None
        if h and h.lower().rstrip(".") not in ignorable:
            out.append(h)
    return list(dict.fromkeys(out))


def _build(
    doc: _Doc,
    found: list[Alignment],
    index: TemplateIndex,
    path: str | None,
    siblings: Sequence[str],
    variant_notes: Sequence[str] = (),
) -> LicenseAnalysis:
    ranges = _merge(doc, _leftover(doc, found))
    extra = [doc.span(a, b) for a, b in ranges]
    altered = [doc.span(a, b) for m in found for a, b, _ in m.altered]
    notes = _notes(doc, found) + list(variant_notes)
    prose = "\n".join(s.text for s in extra)
    matches = _matches(doc, found, ranges, prose, index, notes)
    expression = _expression(doc, found, matches, prose, index, path, siblings, notes)
    verdict: LicenseVerdict
    if not found:
        verdict = "unknown"
    elif any(m.verdict == "modified" for m in found):
        verdict = "modified"
    else:
        verdict = "match_with_extra_text" if extra else "exact"
    weight = sum(m.tpl.required for m in found)
    coverage = sum(m.coverage * m.tpl.required for m in found) / weight if weight else 0.0
    return LicenseAnalysis(
        spdx_ids=tuple(dict.fromkeys(m.spdx_id for m in matches)),
        expression=expression,
        verdict=verdict,
        coverage=round(coverage, 4),
        matches=tuple(matches),
        copyright_holders=tuple(_holders(doc, found)),
        extra_text=tuple(extra),
        altered_text=tuple(altered),
        notes=tuple(notes),
    )


def analyze_license(
    text: str, path: str | None = None, sibling_paths: Sequence[str] = ()
) -> LicenseAnalysis:
    """Detect the license(s) in ``text`` and everything that is not standard license text."""
    doc = _prepare(text)
    index = load_index()
    found: list[Alignment] = []
    variants: list[str] = []
    todo = [(0, len(doc.words))]
    while todo and len(found) < MAX_MATCHES:
        lo, hi = todo.pop(0)
        if hi - lo < MIN_SEGMENT:
            continue
        m = best_alignment(index, doc.words[lo:hi], lo, doc.ignorable, doc.prose)
        if m is not None:
            m, said = _official_reading(doc, index, m, lo, hi)
            variants += said
            found.append(m)
            todo += [(lo, m.lo), (m.hi, hi)]
    found.sort(key=lambda m: m.lo)
    index.derived.save()  # what this text made the index derive, for the next process
    return _build(doc, found, index, path, sibling_paths, variants)


def analyze_file(path: str | Path) -> LicenseAnalysis:
    """Read a license file (BOM, CRLF, UTF-16, invalid UTF-8 all survive) and analyse it."""
    p = Path(path)
    limit = MAX_CHARS * 4  # bytes: enough for MAX_CHARS characters of any UTF-8 text
    with p.open("rb") as fh:
        raw = fh.read(limit + 1)
    more = len(raw) > limit
    raw = raw[:limit]
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = raw.decode("utf-16", errors="replace")
    else:
        raw = raw.removeprefix(b"\xef\xbb\xbf")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:  # not UTF-8: cp1252 when it is text, else replace
            cut = more and exc.start > len(raw) - 4  # only a character cut by the read limit
            text = raw.decode("utf-8" if cut else "cp1252", errors="replace")
    try:
        siblings = [str(s) for s in p.parent.iterdir() if is_license_file(s.name)]
    except OSError:
        siblings = []
    analysis = analyze_license(text, str(p), siblings)
    note = f"only the first {MAX_CHARS // 1024} KiB of the file were analysed"
    if more and note not in analysis.notes:
        analysis = replace(analysis, notes=(note, *analysis.notes))
    return analysis


_LICENSE_NAME_RE = re.compile(
    r"^(?:licen[cs]e|copying|notice|copyright|patents|third[_-]party|third-party-notices)",
    re.IGNORECASE,
)


# Names that match the patterns but are code or templates, not license texts (license.py,
# copyright.html, notice_test.go): kept out of the inventory.
_CODE_SUFFIX_RE = re.compile(
    r"\.(?:py|pyi|js|mjs|ts|tsx|jsx|go|rs|c|cc|cpp|cxx|h|hpp|java|kt|rb|php|sh|bash|ps1|"
    r"cmake|html?|css|scss|vue|swift|scala|cs|lua|pl|r|jl)$",
    re.IGNORECASE,
)


def is_license_file(path: str) -> bool:
    """LICENSE*, LICENCE*, COPYING*, NOTICE*, COPYRIGHT*, PATENTS*, THIRD_PARTY*, THIRD-PARTY*
    and third-party-notices*, case-insensitively, on the file's own name; source code and
    templates with such names (license.py, copyright.html) are not license files, nor is anything
    under a test or fixture data directory (crawler.analysis.license_paths)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if _LICENSE_NAME_RE.match(name) is None or _CODE_SUFFIX_RE.search(name) is not None:
        return False  # asked first: a tree's other files, tens of thousands, end here
    return not is_test_data(path)  # tests/ReplayData/License.setUp.txt: data a test reads


_LESSER_RE = re.compile(r"^(?:copying|licen[cs]e)\.lesser(?:\.(?:txt|md))?$", re.IGNORECASE)


def pick_root_license(paths: Sequence[str]) -> str | None:
    """The repository's license file among root paths: LICENSE/LICENCE before COPYING and
    UNLICENSE, before LICENSE-MIT and the like, before COPYRIGHT; NOTICE and PATENTS never.
    COPYING beside COPYING.LESSER (the LGPL's layout) gives COPYING.LESSER."""

    def rank(path: str) -> tuple[int, int, str] | None:
        name = path.rsplit("/", 1)[-1].lower()
        stem, dot, ext = name.partition(".")
        plain_ext = ext in ("", "txt", "md", "markdown", "rst")
        if stem in ("license", "licence") and plain_ext:
            kind = 0
        elif stem in ("copying", "unlicense") and plain_ext:
            kind = 1
        elif re.match(r"(?:licen[cs]e|copying)", name):
            kind = 2
        elif stem == "copyright":
            kind = 3
        else:
            return None
        return kind, 0 if not dot else 1 if plain_ext else 2, name

    ranked = []
    for p in paths:
        rel = p.replace("\\", "/").removeprefix("./").strip("/")
        r = rank(rel) if rel and "/" not in rel else None
        if r is not None:
            ranked.append((r, p))
    if not ranked:
        return None
    chosen = min(ranked)[1]
    # the GNU layout of an LGPL project: the GPL text in COPYING, the LGPL's additional
    # permissions in COPYING.LESSER; the pair is the LGPL, and licensee reads it so
    stem = chosen.replace("\\", "/").rsplit("/", 1)[-1].lower().partition(".")[0]
    lesser = [p for _, p in ranked if _LESSER_RE.match(p.replace("\\", "/").rsplit("/", 1)[-1])]
    return lesser[0] if stem in ("copying", "license", "licence") and lesser else chosen


def word_diff(old: str, new: str, context: int = 5) -> list[tuple[str, str]]:
    """Word-level diff: ('equal' | 'delete' | 'insert', words); long equal runs keep only
    ``context`` words each side around an ellipsis."""
    a, b = old.split(), new.split()
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            run = a[i1:i2]
            head = [] if i1 == 0 and i2 < len(a) else run[:context]
            tail = [] if i2 == len(a) else run[-context:]
            if len(head) + len(tail) < len(run):
                run = [*head, "…", *tail]
            out.append(("equal", " ".join(run)))
            continue
        if i2 > i1:
            out.append(("delete", " ".join(a[i1:i2])))
        if j2 > j1:
            out.append(("insert", " ".join(b[j1:j2])))
    return out


def with_effects(analysis: LicenseAnalysis) -> LicenseAnalysis:
    """``analysis`` with every span's effect: analyses stored before spans had one get it
    from their text, once, when the store reads them."""
    if all(s.effect is not None for s in (*analysis.extra_text, *analysis.altered_text)):
        return analysis

    def fill(spans: tuple[TextSpan, ...]) -> tuple[TextSpan, ...]:
        return tuple(s if s.effect is not None else replace(s, effect=span_effect(s.text))
                     for s in spans)  # fmt: skip

    return replace(analysis, extra_text=fill(analysis.extra_text),
                   altered_text=fill(analysis.altered_text))  # fmt: skip
