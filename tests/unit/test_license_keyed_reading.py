"""The license reading keyed on the text without its copyright lines (issue 32, defect 7).

A catalog's license files differ mostly in their copyright lines; reading each of them again
made a first audit of a catalog with a holder per repository five times nvchecker's CPU. Texts
that differ only in their copyright lines share one reading, each with its own holders; what
the keyed reading gives must be exactly what reading the text itself gives, and a text that
differs anywhere else is read anew. License texts come from the license-data package."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest

from crawler.analysis.license_keys import CopyrightKeyedReadings, split_copyright
from crawler.analysis.license_templates import reference_text as picker_text
from crawler.analysis.license_texts import reference_text
from crawler.analysis.licenses import analyze_license
from crawler.gather import LicenseAnalyses
from crawler.model import LicenseAnalysis, LicenseFile, ProjectSnapshot


class CountingReader:
    """The crawler's reading, counted."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str, path: str, siblings: Sequence[str]) -> LicenseAnalysis:
        self.texts.append(text)
        return analyze_license(text, path, list(siblings))


def keyed_reading(texts: Sequence[str], reader: CountingReader) -> list[LicenseAnalysis]:
    """Each text's reading through the keyed readings (as ``LicenseAnalyses`` uses them)."""
    readings = CopyrightKeyedReadings()
    out = []
    for text in texts:
        split = split_copyright(text)
        analysis = readings.take(split, "LICENSE", ()) if split else None
        if analysis is None:
            analysis = reader(text, "LICENSE", ())
            if split:
                readings.keep(split, "LICENSE", (), analysis)
        out.append(analysis)
    return out


def mit(line: str) -> str:
    return reference_text("MIT", line)  # "MIT License", "Copyright (c) <line>", the terms


def apache_above(line: str) -> str:
    return f"Copyright {line.rstrip('.')}. All rights reserved.\n\n{reference_text('Apache-2.0')}"


def apache_appendix(line: str) -> str:
    return reference_text("Apache-2.0").replace(
        "Copyright [yyyy] [name of copyright owner]", f"Copyright {line}"
    )


def bsd_picker(line: str) -> str:
    text = picker_text("BSD-3-Clause", "choosealicense")
    return text.replace("[year], [fullname]", f"{line}\nAll rights reserved.")


def mit_picker(line: str) -> str:
    return picker_text("MIT", "choosealicense").replace("[year] [fullname]", line)


def mit_untitled(line: str) -> str:
    return mit(line).replace("MIT License\n\n", "", 1)


# holders that are names only (a year, two names), and holders of other lengths or with words
# of the licenses themselves, which the reading may match
NAMES = ["2020 Kamine Zorvex", "2019-2024 Bo Tanaka", "2018-present Quin Maru", "2023 Lena Ruso"]
OTHERS = ["2020 Kamine Inc.", "2021 Permission Granted", "2017 MIT Software",
          "2020 The Kamine Authors", "2024 Warranty Free Inc.", "2016 Lena Ruso Labs",
          "2021 Kaloso Technologies Co., Ltd.", "2015-present Gor Labs and contributors",
          "2022 The Software Holders Group", "2004 Apache License Authors"]  # fmt: skip
FORMS = [mit, mit_untitled, mit_picker, bsd_picker, apache_above, apache_appendix]


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__)
def test_texts_differing_only_in_copyright_lines_are_read_once_with_their_own_holders(
    form: Callable[[str], str],
) -> None:
    texts = [form(line) for line in NAMES]
    reader = CountingReader()
    keyed = keyed_reading(texts, reader)
    assert keyed == [analyze_license(t, "LICENSE") for t in texts]
    assert reader.texts == texts[:1]  # the first text read, the others took its reading
    named = [line.split(" ", 1)[1] for line in NAMES]
    assert [a.copyright_holders for a in keyed] == [(n,) for n in named]  # each its own


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__)
def test_the_keyed_reading_gives_the_facts_of_reading_each_text(
    form: Callable[[str], str],
) -> None:
    """Whatever the holders (of another length, or with words of the license, which may
    change the template a text is read with), a text's keyed reading is its own reading."""
    texts = [form(line) for line in NAMES + OTHERS]
    reader = CountingReader()
    keyed = keyed_reading(texts, reader)
    assert keyed == [analyze_license(t, "LICENSE") for t in texts]
    assert len(reader.texts) < len(texts)


def test_a_holder_of_another_length_or_with_license_words_is_read_for_itself() -> None:
    """The span the reading finds in a titled MIT text depends on the holder: its number of
    words, and words of the license in it ("MIT"), decide whether GitHub's template (title and
    copyright line included) or ScanCode's (the terms alone) explains the text best."""
    texts = [mit_untitled(line) for line in ("2017 Kamine Zorvex", "2017 MIT Software")]
    reader = CountingReader()
    keyed = keyed_reading(texts, reader)
    assert reader.texts == texts
    # each text's own reading (the engine's span for "MIT" in a holder has moved with its
    # versions; whatever it is, the keyed reading must be the text's own)
    assert keyed == [analyze_license(t, "LICENSE") for t in texts]
    texts = [mit(line) for line in ("2020 Kamine Zorvex", "2020 The Kamine Zorvex")]
    reader = CountingReader()
    keyed = keyed_reading(texts, reader)
    assert reader.texts == texts
    assert [a.matches[0].start_line for a in keyed] == [1, 5]


def test_a_text_differing_outside_its_copyright_lines_is_read_anew() -> None:
    first = mit("2020 Kamine Inc.")
    changed = mit("2021 Bo Tanaka").replace("free of charge", "for a yearly fee")
    added = mit("2022 Zorvex Corporation") + "\nThe software may not be used in weapons.\n"
    reader = CountingReader()
    keyed = keyed_reading([first, changed, added], reader)
    assert reader.texts == [first, changed, added]
    assert keyed == [analyze_license(t, "LICENSE") for t in (first, changed, added)]
    assert [a.verdict for a in keyed] == ["exact", "modified", "match_with_extra_text"]
    assert keyed[2].extra_text[0].text == "The software may not be used in weapons."


def test_copyright_lines_with_a_clause_or_a_templates_own_holder_are_not_shared() -> None:
    """A copyright line that also grants or restricts stays in the key; a holder some template
    lists as its own (the FSF) is read for itself, since the reading may drop it."""
    clause = [mit("2020 Kamine Inc., who forbids any military use"),
              mit("2021 Bo Tanaka, who forbids any military use")]  # fmt: skip
    reader = CountingReader()
    assert keyed_reading(clause, reader) == [analyze_license(t, "LICENSE") for t in clause]
    assert reader.texts == clause
    fsf = [mit("2020 Kamine Inc."), mit("2007 Free Software Foundation, Inc.")]
    reader = CountingReader()
    assert keyed_reading(fsf, reader) == [analyze_license(t, "LICENSE") for t in fsf]
    assert reader.texts == fsf


def test_the_key_leaves_out_only_copyright_lines_and_keeps_their_places() -> None:
    one, other = mit("2020 Kamine Inc."), mit("2024 Bo Tanaka")
    a, b = split_copyright(one), split_copyright(other)
    assert a is not None and b is not None
    assert a.key == b.key and a.at == b.at == (2,)
    assert a.left_out == ("Copyright (c) 2020 Kamine Inc.",)
    assert split_copyright(one.replace("\n", "\r\n")) == a  # the reading's own line breaks
    moved = one.replace("MIT License\n\n", "MIT License\n\n\n")
    assert split_copyright(moved).key != a.key  # type: ignore[union-attr]
    assert split_copyright(reference_text("BSD-3-Clause")) is None  # no copyright line
    apache = split_copyright(reference_text("Apache-2.0"))  # the appendix's is one
    assert apache is not None
    assert apache.left_out == ("   Copyright [yyyy] [name of copyright owner]",)


def _snapshot(name: str, text: str) -> ProjectSnapshot:
    lf = LicenseFile("LICENSE", f"blob-{name}", f"https://example.test/{name}/LICENSE", text=text)
    return ProjectSnapshot(project=name, license_file=lf)


def test_an_audit_reads_a_license_once_for_repositories_that_differ_only_in_holders() -> None:
    """Before: a thousand repositories with a holder each cost a thousand readings (their blob
    SHAs differ). Now one, and every repository gets its own holders."""
    lines = [f"{2014 + i % 10} Holder{i} Inc." for i in range(12)]
    reader = CountingReader()
    analyses = LicenseAnalyses((), reader)
    done = [analyses.apply(_snapshot(f"p{i}", apache_above(line))) for i, line in enumerate(lines)]
    assert len(reader.texts) == 1 and analyses.performed == 1
    got = [s.license_file.analysis for s in done if s.license_file]
    assert got == [analyze_license(apache_above(line), "LICENSE") for line in lines]
    assert [a.copyright_holders for a in got if a] == [(line.split(" ", 1)[1],) for line in lines]


@pytest.mark.parametrize(
    "line",
    ["Copyright © 2020 Kamine Zorvex", "COPYRıGHT 2020 Kamine Zorvex", "copyrİght 2020 Zorvex",
     "ſPDX-License-Identifier: MIT", "(C) 2019 Kamine Zorvex", "All Rights Reserved."],
)  # fmt: skip
def test_copyright_lines_are_found_whatever_their_letters(line: str) -> None:
    """The key finds the lines the reading takes for copyright lines (or SPDX tags), also
    where a letter matches only without case, as the reading's patterns match it."""
    from crawler.analysis.license_templates import SPDX_TAG_RE, is_copyright_line

    text = mit_untitled("2020 Kamine Zorvex").replace("Copyright (c) 2020 Kamine Zorvex", line)
    split = split_copyright(text)
    copyright_line = is_copyright_line(line) and not SPDX_TAG_RE.search(line)
    assert (split is not None and split.at == (0,)) == copyright_line


def _stored(name: str, text: str) -> ProjectSnapshot:
    """A prior state whose license file carries the analysis stored with it."""
    from crawler.gather import _analyse_license

    snapshot = _snapshot(name, text)
    assert snapshot.license_file is not None
    analysis = _analyse_license(text, "LICENSE", ())
    return replace(snapshot, license_file=replace(snapshot.license_file, analysis=analysis))


def test_a_batch_s_stored_analyses_serve_that_batch_and_are_let_go_at_the_next() -> None:
    """Before: the analyses of every batch's prior states were kept for the whole audit (4,096
    of them, about 4 MB, at 10,000 projects each with a license text of its own). Now a batch's
    serve it, and the next batch's replace them; a text the audit analysed stays known."""
    reader = CountingReader()
    analyses = LicenseAnalyses((), reader)
    first = [_stored(f"p{i}", mit(f"2020 Holder{i} Inc.")) for i in range(3)]
    analyses.remember(first)
    done = [analyses.apply(_snapshot(s.project, mit(f"2020 Holder{i} Inc.")))
            for i, s in enumerate(first)]  # fmt: skip
    assert reader.texts == [] and analyses.performed == 0  # each its own stored reading
    assert [s.license_file for s in done] == [s.license_file for s in first]
    bsd = reference_text("BSD-3-Clause")  # no copyright line: read, not keyed
    read = analyses.apply(_snapshot("p3", bsd)).license_file
    assert analyses.performed == 1 and analyses.held == 4 and read is not None
    second = [_stored(f"q{i}", mit(f"2021 Other{i} Ltd.")) for i in range(2)]
    analyses.remember(second)
    assert analyses.held == 3  # the second batch's two, and the text read tonight
    same = _snapshot("p3", bsd)  # the same file (blob) in another project of the next batch
    again = analyses.apply(replace(same, project="q9")).license_file
    assert analyses.performed == 1 and again is not None
    assert again.analysis is read.analysis and read.analysis is not None
    assert (read.analysis.spdx_ids, read.analysis.verdict) == (("BSD-3-Clause",), "exact")


@pytest.mark.parametrize(
    ("line", "count"),
    [("Copyright (c) 2019-2023 Kamine Zorvex Co., Ltd. All rights reserved.", 9),
     ("Copyright 2020 The Kamine Zorvex Authors & contributors", 8),
     ("   1. royalty-free, non-exclusive licence", 3), ("(a) ©", 0), ("", 0)],
)  # fmt: skip
def test_the_key_counts_a_copyright_lines_words_as_the_reading_tokenizes_them(
    line: str, count: int
) -> None:
    """The key holds each left-out line's number of words (a holder of another length may be
    read otherwise): counted without building the tokens, it is the tokenizer's number."""
    from crawler.analysis.license_templates import count_words, tokenize_line

    assert count_words(line) == len(tokenize_line(line)) == count
