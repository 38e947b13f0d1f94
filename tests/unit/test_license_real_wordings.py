"""License wordings seen in real repositories that the reader must take as the license they
are (issue 32): Meta's BSD title naming the software (defect 3), BSD-3-Clause in its "author"
wording (defect 4), and quotes of added sentences that keep their last word (defect 6).

No license text is stored here: the texts are the license data package's, read at test time,
with the few words each case changes written in the test."""

from __future__ import annotations

import pytest

from crawler.analysis.license_templates import reference_text
from crawler.analysis.licenses import analyze_license

META = "Copyright (c) Meta Platforms, Inc. and affiliates. All rights reserved."


def bsd3() -> str:
    return reference_text("BSD-3-Clause").rstrip("\n")


def spans(text: str) -> list[tuple[int, str]]:
    a = analyze_license(text)
    return [(s.start_line, s.text) for s in (*a.extra_text, *a.altered_text)]


# -- defect 3: "BSD License" then "For <Project> software" -----------------------------------


@pytest.mark.parametrize(
    "second",
    [
        "For Zstandard software",
        'For "folly" software',
        "For React software",
        "For “Hermes” software",
        "For fastText software",
    ],
)
def test_a_second_title_line_naming_the_software_is_part_of_the_title(second: str) -> None:
    """Meta's template: "BSD License", a line naming the software, the copyright lines and the
    unmodified BSD-3-Clause text. Before the fix: "plus extra text at line 3"."""
    text = f"BSD License\n\n{second}\n\n{META}\n\n{bsd3()}\n"
    a = analyze_license(text)
    assert (a.spdx_ids, a.verdict) == (("BSD-3-Clause",), "exact")
    assert a.extra_text == () and a.altered_text == ()
    assert a.copyright_holders == ("Meta Platforms, Inc. and affiliates",)


def test_a_sentence_after_the_title_is_still_extra_text() -> None:
    """The title may name the software; a sentence there is not a title."""
    said = "For commercial use of this software, write to the authors first."
    a = analyze_license(f"BSD License\n\n{said}\n\n{META}\n\n{bsd3()}\n")
    assert a.verdict == "match_with_extra_text"
    assert [(s.start_line, s.text) for s in a.extra_text] == [(3, said)]


# -- defect 4: BSD-3-Clause in its "author" wording --------------------------------------------


def author_wording(disclaimer: str) -> str:
    """BSD-3-Clause with its third clause and disclaimer in the "author" wording (as ScanCode's
    rules of bsd-new carry it)."""
    text = bsd3()
    text = text.replace(
        "Neither the name of the ORGANIZATION nor the names of its contributors may be\nused",
        "The name of the author may not be used",
    )
    text = text.replace('BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS\n"AS IS"', disclaimer)
    text = text.replace("THE COPYRIGHT HOLDER OR CONTRIBUTORS\nBE LIABLE", "THE AUTHOR BE LIABLE")
    assert "author may not" in text and "THE AUTHOR BE LIABLE" in text
    return f"Copyright (c) 2003 Jane Doe <jane@example.org>\nAll rights reserved.\n\n{text}\n"


@pytest.mark.parametrize("disclaimer", ["BY THE AUTHOR ``AS IS''", "``AS IS''"])
def test_bsd3_in_the_author_wording_reads_as_unmodified_bsd3(disclaimer: str) -> None:
    """Before the fix: BSD-3-Clause-HP, modified (a disagreement with GitHub's bsd-3-clause)."""
    a = analyze_license(author_wording(disclaimer))
    assert (a.spdx_ids, a.verdict) == (("BSD-3-Clause",), "exact")
    assert a.extra_text == () and a.altered_text == ()
    assert a.copyright_holders == ("Jane Doe <jane@example.org>",)
    assert any("official variant wording" in n for n in a.notes), a.notes


def test_a_changed_word_in_the_author_wording_is_still_seen() -> None:
    """The variant accepts ScanCode's wording, not any wording: a restriction written into the
    third clause stays altered text."""
    text = author_wording("BY THE AUTHOR ``AS IS''").replace(
        "may not be used to endorse", "may not be used by any government to endorse"
    )
    a = analyze_license(text)
    assert a.spdx_ids == ("BSD-3-Clause",)
    assert a.verdict != "exact"
    assert any("government" in t for _, t in spans(text))


# -- defect 6: a quoted addition keeps its last word -----------------------------------------


def test_a_sentence_before_an_untitled_text_is_quoted_whole() -> None:
    """Zlib's template opens with an optional "zlib License" title: the sentence's last word
    "License." lent itself to it ("Licensed under the MIT" before the fix)."""
    said = "Licensed under the MIT License."
    assert spans(f"{said}\n{reference_text('Zlib')}") == [(1, said)]


@pytest.mark.parametrize("spdx_id", ["BSD-2-Clause", "0BSD"])
def test_a_sentence_ending_in_the_title_words_is_quoted_whole(spdx_id: str) -> None:
    """ "…under the BSD License." before a BSD text: "BSD" and "License" are its title's words."""
    said = "Documentation is licensed under the BSD License."
    assert spans(f"{said}\n{reference_text(spdx_id)}") == [(1, said)]


def test_a_sentence_appended_to_a_heading_line_is_quoted_whole() -> None:
    """MPL-2.0's definition heading '"License"' ends where the sentence's last word repeats
    it: the quote took the heading's word and lost its own ('"License" Licensed under the
    MIT' before the fix)."""
    lines = reference_text("MPL-2.0").split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip().endswith('"License"'))
    said = "Licensed under the MIT License."
    lines[at] += f" {said}"
    assert spans("\n".join(lines)) == [(at + 1, said)]
