"""The license reading keyed on the text without its copyright lines.

A catalog's license files differ mostly in their copyright lines: a thousand MIT files carry a
thousand holders and years above the same terms. Reading each of them (aligning it against the
templates) costs milliseconds; what the reading finds in the terms is the same for all of them.
So a reading is kept under the text with its copyright lines left out (their places kept), and
another text with the same key takes it, with the facts that come from its own copyright lines
(its holders) computed from its own lines.

A reading is shared only where the copyright lines cannot have changed it, which is checked on
the text that was read and on every text that takes it:

* only lines that are copyright statements and nothing else are left out of the key (no SPDX
  tag, no clause after the holder: ``copyright_clause``); a text with any other copyright line
  (one with a clause) is read for itself;
* every line left out stands above the first license text the reading found, and not inside
  it (Apache's appendix filled in with a holder is read for each text): the reading never
  aligned those words with a template, so they are no extra text, no altered text, no fill, and
  the holders they name are exactly what ``_holders`` lists for them;
* the words above the first license text stay fewer than the reading's ``MIN_SEGMENT`` (so no
  other license is searched for there, in either text), and every line left out has words;
* a holder that some template lists as its own (``ignorable_holders``, the FSF's) is never taken
  from a shared reading: that text is read for itself; and the holders the reading found must be
  exactly those of the lines left out, so that only they change.

Texts longer than ``MAX_CHARS`` (read in part) and texts without a copyright line are keyed by
themselves only (``split_copyright`` gives None).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from functools import cache

from crawler.analysis.license_clauses import copyright_clause
from crawler.analysis.license_templates import (
    SPDX_TAG_RE,
    count_words,
    is_copyright_line,
    load_index,
    tokenize_line,
    tokenize_lines,
)
from crawler.analysis.licenses import MAX_CHARS, copyright_holder
from crawler.model import LicenseAnalysis

# Every copyright line or SPDX tag has one of these: lines without any are read as they are.
_CANDIDATE_RE = re.compile(
    r"copyright|©|\(c\)|all rights reserved|spdx-license-identifier", re.IGNORECASE
)
_CANDIDATE_WORDS = ("copyright", "©", "(c)", "all rights reserved", "spdx-license-identifier")
_ASCII = _CANDIDATE_WORDS[2:]  # an ASCII text has no "©"
_FOLDED = "ıİſ"  # letters that match "i" or "s" of the words above only without case
_LEFT_OUT = b"\x01"  # a copyright line's place in the key (with its number of words)
_HYPHEN_END_RE = re.compile(r"[A-Za-z0-9]-[ \t]*$")  # the reading joins such a word to the next
_ARRANGEMENTS = 8  # readings kept under one key
KEYED_READINGS = 4096  # distinct keys kept between batches (each holds one reading)


@dataclass(frozen=True, slots=True)
class CopyrightSplit:
    """A license text as the reading cuts it into lines, and its key without the copyright
    lines that only name holders and years."""

    key: bytes
    text: str  # the text as the reading cuts it (BOM dropped, line ends made "\n")
    at: tuple[int, ...]  # 0-based lines left out of the key
    left_out: tuple[str, ...]  # their text
    other_copyright: bool  # a copyright line kept in the key (one with a clause)


def _candidate_lines(cut: str) -> list[int]:
    """Where the lines that may be copyright lines or SPDX tags begin, in order: those with a
    word of ``_CANDIDATE_RE``, searched in the lower-cased text at C speed unless the text has
    a letter that matches another only without case (the dotless i, the long s)."""
    low = cut.lower()
    if len(low) == len(cut) and not any(c in cut for c in _FOLDED):
        hits = []
        for word in _CANDIDATE_WORDS if not cut.isascii() else _CANDIDATE_WORDS[:1] + _ASCII:
            at = low.find(word)
            while at >= 0:
                hits.append(at)
                at = low.find(word, at + 1)
    else:
        hits = [m.start() for m in _CANDIDATE_RE.finditer(cut)]
    return sorted({cut.rfind("\n", 0, at) + 1 for at in hits})


def split_copyright(text: str) -> CopyrightSplit | None:
    """The text's key without its copyright lines, or None when it has none to leave out or
    is longer than the reading reads."""
    if len(text) > MAX_CHARS:
        return None
    cut = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    digest = hashlib.blake2b(digest_size=20)
    at: list[int] = []
    left_out: list[str] = []
    other = False
    taken = 0  # the key has taken cut[:taken]
    line_no, counted = 0, 0  # line_no: the line that cut[counted] is on
    for start in _candidate_lines(cut):
        end = cut.find("\n", start)
        end = len(cut) if end < 0 else end
        line = cut[start:end]
        if SPDX_TAG_RE.search(line) or not is_copyright_line(line):
            continue
        above = cut[cut.rfind("\n", 0, max(start - 1, 0)) + 1 : max(start - 1, 0)]
        joined = _HYPHEN_END_RE.search(line) or _HYPHEN_END_RE.search(above)
        if copyright_clause(line) is not None or joined:
            other = True  # kept in the key: a clause, or a word joined across the line break
            continue
        line_no += cut.count("\n", counted, start)
        counted = start
        chunk = cut[taken:start].encode("utf-8", "surrogatepass")
        words = count_words(line)
        digest.update(len(chunk).to_bytes(8, "big") + chunk + _LEFT_OUT + words.to_bytes(4, "big"))
        taken = end
        at.append(line_no)
        left_out.append(line)
    if not at:
        return None
    chunk = cut[taken:].encode("utf-8", "surrogatepass")
    digest.update(len(chunk).to_bytes(8, "big") + chunk)
    return CopyrightSplit(digest.digest(), cut, tuple(at), tuple(left_out), other)


@cache
def _template_holders() -> frozenset[str]:
    """Every holder some template lists as its own: such a line may be dropped by the reading
    of one license and kept by another's."""
    out: set[str] = set()
    for entry in load_index().entries:
        held = entry.meta.get("ignorable_holders", [])
        for h in held if isinstance(held, list) else ():
            out.add(h.lower().rstrip("."))
    return frozenset(out)


def _holders(split: CopyrightSplit) -> tuple[str, ...] | None:
    """The holders the lines left out name, as the reading lists them; None when one of them is
    a template's own holder (the text is then read for itself)."""
    out: list[str] = []
    own = _template_holders()
    for line in split.left_out:
        h = copyright_holder(line)
        if h is None:
            continue
        if h.lower().rstrip(".") in own:
            return None
        out.append(h)
    return tuple(dict.fromkeys(out))


def _quoted(split: CopyrightSplit, analysis: LicenseAnalysis) -> bool:
    """Whether the reading quotes a line left out (in extra or altered text, or a note)."""
    quotes = [*(t.text for t in (*analysis.extra_text, *analysis.altered_text)), *analysis.notes]
    return any(line.strip() and line.strip() in q for line in split.left_out for q in quotes)


def _shareable(split: CopyrightSplit, analysis: LicenseAnalysis) -> bool:
    """Whether other texts with the same key may take this reading of ``split``'s text."""
    texts = [m for m in analysis.matches if m.verdict != "reference"]
    if split.other_copyright or not texts or split.at[-1] >= max(m.end_line for m in texts):
        return False  # after the last license text, a line may sign it (``_signature``)
    if analysis.notes or any(m.verdict != "exact" for m in texts):
        return False  # fills, variants accepted, words added or missing inside a license text
    holders = [h for line in split.left_out if (h := copyright_holder(line)) is not None]
    if len(set(holders)) != len(holders) or tuple(holders) != analysis.copyright_holders:
        return False  # a line the reading took for license text, or a holder named twice
    return _holders(split) is not None and not _quoted(split, analysis)


@cache
def _license_words(spdx_ids: frozenset[str]) -> frozenset[str]:
    """Every word of every template of these licenses (GPL-2.0-only's for GPL-2.0-or-later)."""
    ids = spdx_ids | {i.replace("-or-later", "-only") for i in spdx_ids}
    out: set[str] = set()
    for entry in load_index().entries:
        if entry.spdx_id in ids:
            out.update(w for _, w, _, _, _ in tokenize_lines(entry.body.splitlines()))
    return frozenset(out)


def _signature(split: CopyrightSplit, words: frozenset[str]) -> tuple[tuple[str, ...], ...]:
    """The words of the lines left out that stand in the license's own texts, in place (the
    others, names and most years, as blanks): what the reading could have matched there."""
    return tuple(
        tuple(w if w in words else "" for w, _, _ in tokenize_line(line)) for line in split.left_out
    )


@dataclass(frozen=True, slots=True)
class _Shared:
    analysis: LicenseAnalysis
    words: frozenset[str]  # the words of the texts of the licenses it found
    signature: tuple[tuple[str, ...], ...]  # the text's own words of them on its lines left out


class CopyrightKeyedReadings:
    """Readings kept under (text without its copyright lines, the number of words on each of
    them, path, sibling paths); under one key, a reading for each arrangement of license words
    on the copyright lines (a holder "The MIT Authors" may change which template of MIT the
    text is read with). Not thread-safe: its owner locks around it."""

    def __init__(self) -> None:
        self._readings: dict[tuple[bytes, str, tuple[str, ...]], list[_Shared]] = {}

    def __len__(self) -> int:
        return len(self._readings)

    def clear(self) -> None:
        self._readings.clear()

    def take(
        self, split: CopyrightSplit, path: str, siblings: tuple[str, ...]
    ) -> LicenseAnalysis | None:
        """The reading of another text with the same key and the same license words on its
        copyright lines, with this text's holders; None when there is none to share (the text
        is then read)."""
        for shared in self._readings.get((split.key, path, siblings), ()):
            if _signature(split, shared.words) != shared.signature:
                continue
            holders = _holders(split)
            if holders is None:
                return None
            if holders == shared.analysis.copyright_holders:
                return shared.analysis
            return replace(shared.analysis, copyright_holders=holders)
        return None

    def keep(
        self,
        split: CopyrightSplit,
        path: str,
        siblings: tuple[str, ...],
        analysis: LicenseAnalysis,
    ) -> None:
        """Keep the reading of the text ``split`` was made from, to share when it may be."""
        if not _shareable(split, analysis):
            return
        ids = frozenset(m.spdx_id for m in analysis.matches if m.verdict != "reference")
        words = _license_words(ids)
        kept = self._readings.setdefault((split.key, path, siblings), [])
        if len(kept) < _ARRANGEMENTS:
            kept.append(_Shared(analysis, words, _signature(split, words)))
