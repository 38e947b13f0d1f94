"""Official variants of license texts: what differs from the template but is still the
license as its steward published it.

The FSF's texts circulate in several revisions (postal addresses, ``http`` and ``https``,
``/philosophy/why-not-lgpl.html``, "Appendix: How to Apply These Terms", "Library" before
"Lesser", Ty Coon and Moe Ghoul); GitHub's license picker and ScanCode carry different
revisions of the same licenses. ScanCode's database keeps such revisions as full-text rules of
the license itself (``is_license_text: yes`` with ``license_expression`` the key alone). A
difference from the template is an official variant when the file's words there, with a few
words of context either side, stand in one of those texts (or in the other source's text of
the same license).

Short texts have official variants too: BSD-3-Clause in its "author" wording ("The name of the
author may not be used", "THE AUTHOR ``AS IS''") is one of ScanCode's full-text rules of
bsd-new. For them only the differences are looked up (never the words after the text), words
only added count only beside a reworded place, and the reader
(``crawler.analysis.licenses``) checks the license's own variants before a near-miss template
(one that needs fewer changes, such as BSD-3-Clause-HP for that wording) wins. A changed word
that stands in no rule of the license -- what a project wrote itself -- stays visible.
"""

from __future__ import annotations

import bisect
import os
import re
import threading
from collections.abc import Sequence
from functools import cache

from crawler.analysis.license_templates import (
    Alignment,
    Template,
    TemplateIndex,
    data_dir,
    normalize_words,
)

MIN_VARIANT_WORDS = 1000  # template words: a long text's variants may go on past its end
MAX_VARIANT_RUN = 60  # file words: a longer difference is an addition, never a variant
CONTEXT = 3  # file words each side that must stand next to the run in the variant too
# Wordings of the FSF's latest revisions of its older texts (GPL-2.0, LGPL-2.1), which no
# data package carries yet: the postal address replaced by its web address, and Ty Coon by
# Moe Ghoul in the sample disclaimer. Accepted only as a whole run in a GNU license.
FSF_REVISION_RUNS = frozenset({("see", "http", "www", "gnu", "org", "licenses"), ("moe", "ghoul")})
_GNU_RE = re.compile(r"^(?:A|L)?GPL-\d")
_LOCK = threading.Lock()


@cache
def _rule_names() -> tuple[str, ...]:
    """The file names in ScanCode's rules folder, sorted: listed once per process (35,000
    names; globbing the folder for each license listed and pattern-matched all of them)."""
    try:
        return tuple(sorted(os.listdir(data_dir().parent / "rules")))
    except OSError:
        return ()


def _rule_texts(key: str) -> list[str]:
    """Bodies of ScanCode's full-text rules of ``key`` alone (``<key>.RULE``, ``<key>_*.RULE``,
    in name order)."""
    folder = data_dir().parent / "rules"
    names = _rule_names()
    out: list[str] = []
    for i in range(bisect.bisect_left(names, key), len(names)):
        name = names[i]
        if not name.startswith(key):
            break
        if name != f"{key}.RULE" and not (name.startswith(f"{key}_") and name.endswith(".RULE")):
            continue
        with open(folder / name, "rb") as fh:
            data = fh.read()
        if b"is_license_text" not in data:  # most rules are notices or references: not read
            continue
        raw = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        head, _, body = raw[3:].partition("\n---\n") if raw.startswith("---") else ("", "", "")
        if re.search(
            rf"^license_expression:\s*{re.escape(key)}\s*$", head, re.MULTILINE
        ) and re.search(r"^is_license_text:\s*yes\s*$", head, re.MULTILINE):
            out.append(body)
    return out


def _variants_of(index: TemplateIndex, keys: tuple[str, ...]) -> tuple[str, ...]:
    """Each variant text of the license as one space-joined, space-framed word string (from
    the derived cache when an earlier process read them)."""
    cached_as = "\0".join(keys)
    known = index.derived.get("variants", cached_as)
    if isinstance(known, tuple):
        return known
    texts: list[str] = []
    for key in keys:
        if key.startswith("choosealicense-"):
            continue
        texts += _rule_texts(key)
    found = tuple(f" {' '.join(normalize_words(t))} " for t in texts if t.strip())
    index.derived.put("variants", cached_as, found)
    return found


_CACHE: dict[str, tuple[tuple[str, ...], str]] = {}


def variant_texts(index: TemplateIndex, tpl: Template) -> tuple[tuple[str, ...], str]:
    """The official variants of ``tpl``'s license (ScanCode's full-text rules of it and the
    other sources' texts of the same SPDX id), and all of them joined: computed once per
    template."""
    if not tpl.is_spdx_listed:
        return (), ""
    with _LOCK:
        known = _CACHE.get(tpl.key)
    if known is not None:
        return known
    same = [i for i, e in enumerate(index.entries) if e.spdx_id == tpl.spdx_id]
    keys = tuple(index.entries[i].key for i in same)
    others = tuple(
        f" {' '.join(w for w in index.template(i).words if w != chr(0))} "
        for i in same
        if index.entries[i].key != tpl.key
    )
    with _LOCK:
        texts = _variants_of(index, keys) + others
        _CACHE[tpl.key] = (texts, "".join(texts))
        return _CACHE[tpl.key]


def _stands_in(words: Sequence[str], lo: int, hi: int, pool: str) -> bool:
    """File words [lo, hi) with ``CONTEXT`` words either side stand together in a variant
    (``pool``: the variants, each framed by spaces, joined: a needle never spans two)."""
    a, b = max(0, lo - CONTEXT), min(len(words), hi + CONTEXT)
    return f" {' '.join(words[a:b])} " in pool


def differences(m: Alignment) -> list[tuple[int, int]]:
    """File word ranges where ``m`` differs from its template: altered and inserted words,
    and the empty place of each missing run."""
    out = [(a, b) for a, b, _ in m.altered] + list(m.inserted)
    return out + [(at + 1, at + 1) for at, _ in m.missing]


def may_explain(
    index: TemplateIndex, tpl: Template, words: Sequence[str], places: Sequence[tuple[int, int]]
) -> bool:
    """Some official variant of ``tpl``'s license has the file's words at one of ``places``
    (with their context): only then is aligning ``tpl`` worth its time."""
    _, pool = variant_texts(index, tpl)
    return bool(pool) and any(
        hi - lo <= MAX_VARIANT_RUN and _stands_in(words, lo, hi, pool) for lo, hi in places
    )


def accept_variants(
    index: TemplateIndex, m: Alignment, words: Sequence[str], ignorable: Sequence[bool]
) -> list[str]:
    """Drop from ``m`` the inserted, altered and missing words that an official variant of
    its license has at that place; a note for each kind of wording accepted."""
    long = len(m.tpl.words) >= MIN_VARIANT_WORDS
    if not long and not (m.altered or m.missing):
        return []  # nothing reworded in a short text: its license's rules are not even read
    variants, pool = variant_texts(index, m.tpl)
    if not variants:
        return []
    accepted: list[str] = []

    gnu = _GNU_RE.match(m.tpl.spdx_id) is not None

    def official(lo: int, hi: int, absent: Sequence[str] = ()) -> bool:
        fsf = gnu and tuple(words[lo:hi]) in FSF_REVISION_RUNS
        if not fsf and (hi - lo > MAX_VARIANT_RUN or not _stands_in(words, lo, hi, pool)):
            return False
        said = " ".join(words[lo:hi])
        accepted.append(said if said else f"without {' '.join(absent[:8])}")
        return True

    # In a short text, words only added (Flask's "as well as documentation") widen what the
    # license covers: a reviewer sees them even where a rule has them. Added words belong to a
    # variant only beside a reworded or shortened place ("may not be used" next to "The name
    # of the author" for "Neither the name of ... nor ... may be used").
    reworded = [a for a, _, _ in m.altered] + [b for _, b, _ in m.altered]
    reworded += [at + 1 for at, _ in m.missing]
    m.inserted = [
        (a, b)
        for a, b in m.inserted
        if not ((long or any(a - CONTEXT <= r <= b + CONTEXT for r in reworded)) and official(a, b))
    ]
    m.altered = [(a, b, tw) for a, b, tw in m.altered if not official(a, b)]
    m.missing = [(at, tw) for at, tw in m.missing if not official(at + 1, at + 1, tw)]
    # words just past the end that a variant goes on with (a later revision's appendix)
    end = m.hi
    while (
        long
        and end < min(len(words), m.hi + MAX_VARIANT_RUN)
        and not ignorable[end]
        and f" {' '.join(words[max(0, m.hi - CONTEXT) : end + 1])} " in pool
    ):
        end += 1
    if end > m.hi:
        accepted.append(" ".join(words[m.hi : end]))
        m.hi = end
    if not accepted:
        return []
    shown = "; ".join(f'"{t[:60]}"' for t in accepted[:4])
    more = f" and {len(accepted) - 4} more" if len(accepted) > 4 else ""
    return [f"{m.tpl.spdx_id}: official variant wording accepted as the license: {shown}{more}"]
