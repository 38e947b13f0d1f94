"""The license reader's faster pieces give what the slower ones gave (issue 32 defect 7).

``word_match.matching_blocks`` must be difflib's matching blocks (no junk, no autojunk) for every
pair of word sequences: the alignment of a license file with a template is built on them. It is
compared with difflib on the real license files of ``../shared/replay/licenses`` against the
templates the reader considers for them, on the license data's own texts changed the ways real
files change them, and on short sequences of a few letters, where equally long runs tie.

A line's tokens are kept for the next text that has the line (``tokenize_line``): what a kept
line gives must be what reading it anew gives, on every line of the real files."""

from __future__ import annotations

import random
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from crawler.analysis import license_templates
from crawler.analysis.license_templates import (
    load_index,
    normalize_words,
    reference_text,
    tokenize_line,
)
from crawler.analysis.licenses import analyze_file
from crawler.analysis.word_match import matching_blocks
from tests.support import SHARED

REAL = SHARED / "replay" / "licenses"


def real_files() -> list[Path]:
    files = sorted(p for p in REAL.glob("*/*") if p.is_file())
    if not files:
        pytest.skip(f"{REAL} holds no license files")
    return files


def difflib_blocks(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    blocks = SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
    return [(i, j, k) for i, j, k in blocks if k]


def test_the_blocks_break_ties_as_difflib_does() -> None:
    # difflib's own example: the longest run starts earliest in a, then in b
    assert matching_blocks(list(" abcd"), list("abcd abcd")) == [(0, 4, 5)]
    # two runs of one word: "a" (earliest in a) wins, nothing is left on either side of it
    assert matching_blocks(list("ab"), list("ba")) == [(0, 1, 1)]
    # adjacent blocks found apart are joined, as difflib joins them
    assert matching_blocks(list("xaby"), list("ab")) == [(1, 0, 2)]
    assert matching_blocks([], list("ab")) == []


def test_the_blocks_are_difflibs_on_sequences_of_few_letters() -> None:
    rng = random.Random(32)
    for _ in range(3000):
        letters = "abcdef"[: rng.randint(1, 6)]
        a = [rng.choice(letters) for _ in range(rng.randint(0, 50))]
        b = list(a)
        for _ in range(rng.randint(0, 5)):  # insertions, deletions, changes, a repeat
            at = rng.randint(0, len(b))
            op = rng.random()
            if op < 0.4:
                b[at:at] = [rng.choice(letters) for _ in range(rng.randint(1, 8))]
            elif op < 0.7:
                del b[at : at + rng.randint(1, 8)]
            else:
                b[at : at + 1] = [rng.choice(letters)]
        if rng.random() < 0.3:
            b += b[: rng.randint(0, len(b))]
        assert matching_blocks(a, b) == difflib_blocks(a, b), (a, b)
        assert matching_blocks(b, a) == difflib_blocks(b, a), (b, a)


@pytest.mark.parametrize("spdx_id", ["Apache-2.0", "MIT", "BSD-3-Clause", "LGPL-2.1-only"])
def test_the_blocks_are_difflibs_on_license_texts_changed_as_real_files_change_them(
    spdx_id: str,
) -> None:
    tpl = normalize_words(reference_text(spdx_id))
    other = normalize_words(reference_text("MIT" if spdx_id != "MIT" else "ISC"))
    mid = len(tpl) // 2
    files = {
        "copyright line above": normalize_words("Copyright 2024 The Example Authors") + tpl,
        "sentence inserted": tpl[:mid]
        + normalize_words("The Example Foundation asks commercial users to notify it.")
        + tpl[mid:],
        "word altered": [*tpl[:mid], "redacted", *tpl[mid + 1 :]],
        "words deleted": tpl[: mid - 7] + tpl[mid + 5 :],
        "two licenses": tpl + other,
        "placeholders": ["\x00" if i % 97 == 0 else w for i, w in enumerate(tpl)],
    }
    for kind, words in files.items():
        assert matching_blocks(tpl, words) == difflib_blocks(tpl, words), kind
        assert matching_blocks(words, tpl) == difflib_blocks(words, tpl), kind


def test_the_blocks_are_difflibs_on_the_real_files_against_their_candidate_templates() -> None:
    index = load_index()
    compared = 0
    for path in real_files():
        words = normalize_words(path.read_text(encoding="utf-8", errors="replace"))[:6000]
        for i in index.candidates(words)[:2]:
            tpl = list(index.template(i).words)
            assert matching_blocks(tpl, words) == difflib_blocks(tpl, words), (path, i)
            compared += 1
    assert compared >= 100  # 97 files, most with two candidates


def read_anew(line: str) -> list[tuple[str, int, int]]:
    """The line's tokens as ``tokenize_line`` read them before it kept any."""
    prepared = license_templates._prep(line)
    return [
        (license_templates._word(m.group(1)), m.start(1), m.end(1))
        for m in license_templates._TOKEN_RE.finditer(prepared)
        if m.group(1)
    ]


def test_a_kept_line_gives_what_reading_it_anew_gives_on_the_real_files() -> None:
    lines = [
        line
        for path in real_files()
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
    ]
    assert len(lines) > 10_000
    license_templates._line_tokens.cache_clear()
    first = [tokenize_line(line) for line in lines]  # read, and kept up to the limit
    again = [tokenize_line(line) for line in lines]  # the last lines read come from the cache
    assert license_templates._line_tokens.cache_info().hits > len(lines)
    assert first == again == [read_anew(line) for line in lines]


def test_a_kept_line_is_not_changed_by_what_a_caller_does_with_its_tokens() -> None:
    line = "Copyright (c) 2024 Foo-Bar Inc."
    tokens = tokenize_line(line)
    assert tokens == [("copyright", 0, 9), ("2024", 14, 18), ("foobar", 19, 26), ("inc", 27, 30)]
    tokens.pop()
    tokens[0] = ("changed", 0, 0)
    assert tokenize_line(line) == [
        ("copyright", 0, 9),
        ("2024", 14, 18),
        ("foobar", 19, 26),
        ("inc", 27, 30),
    ]
    assert tokenize_line("   (b) You must cause") == [("you", 7, 10), ("must", 11, 15),
                                                      ("cause", 16, 21)]  # fmt: skip
    assert tokenize_line("the “Licence” — royalty- free &amp; non\u00a0exclusive") == [
        ("the", 0, 3),
        ("license", 5, 12),
        ("royaltyfree", 16, 29),
        ("and", 30, 31),
        ("amp", 31, 34),
        ("non", 36, 39),
        ("exclusive", 40, 49),
    ]
    assert tokenize_line("") == [] and tokenize_line(" -- ") == []


def test_a_real_file_reads_the_same_with_its_lines_kept_or_read_anew() -> None:
    files = real_files()[:10]
    license_templates._line_tokens.cache_clear()
    cold = [analyze_file(p) for p in files]
    warm = [analyze_file(p) for p in files]
    assert cold == warm
    assert any(a.spdx_ids for a in cold)
