"""Our own license detection: synthetic texts built from the license data package at test
time (no license text is stored here), and the real upstream files when the corpus exists."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import msgspec
import pytest

from crawler.analysis.license_templates import reference_text
from crawler.analysis.licenses import (
    LicenseAnalysis,
    LicenseMatch,
    TextSpan,
    analyze_file,
    analyze_license,
    is_license_file,
    normalize_github_spdx,
    pick_root_license,
    text_span,
    word_diff,
)
from crawler.report.words import noassertion_explanation, render_analysis, why_forge_differs
from tests.support import SHARED

CORPUS = SHARED / "corpus"
NOTE = "The Example Foundation asks commercial users to write to it before shipping this code."


def text_of(spdx_id: str) -> str:
    """The license text as the data package ships it, {{placeholder}} marks removed."""
    return reference_text(spdx_id).rstrip("\n")


def nlines(text: str) -> int:
    return text.count("\n") + 1


# --- plain texts --------------------------------------------------------------------------


@pytest.mark.parametrize("spdx_id", ["MIT", "Apache-2.0", "BSD-3-Clause", "X11", "PSF-2.0",
                                     "ISC", "BSD-2-Clause", "MPL-2.0", "Unlicense", "0BSD"])
def test_standard_texts_are_exact(spdx_id: str) -> None:
    a = analyze_license(text_of(spdx_id))
    assert a.spdx_ids == (spdx_id,)
    assert a.verdict == "exact"
    assert a.coverage == 1.0
    assert a.expression is None
    assert a.extra_text == () and a.altered_text == ()


@pytest.mark.parametrize("spdx_id", ["MIT", "Apache-2.0", "BSD-3-Clause", "GPL-3.0-only",
                                     "EPL-2.0", "MPL-2.0"])
def test_forge_license_picker_texts_are_exact(spdx_id: str) -> None:
    """GitHub's "Add license" writes choosealicense.com texts with the placeholders filled."""
    text = reference_text(spdx_id, "choosealicense")
    filled = text.replace("[year]", "2024").replace("[fullname]", "Jane Doe")
    a = analyze_license(filled)
    assert (a.spdx_ids, a.verdict, a.extra_text, a.altered_text) == ((spdx_id,), "exact", (), ())


def test_x11_is_not_mit_with_extra_text_and_mit_is_not_x11() -> None:
    assert analyze_license(text_of("X11")).spdx_ids == ("X11",)
    assert analyze_license(text_of("MIT")).spdx_ids == ("MIT",)


def test_title_copyright_and_markdown_rewrap_are_not_changes() -> None:
    body = text_of("MIT")
    paragraphs = [" ".join(p.split()) for p in body.split("\n\n")]
    wrapped = "\n\n".join(textwrap.fill(p, 60) for p in paragraphs)
    text = f"# The MIT License (MIT)\n\nCopyright (c) 2021-2024 Jane Doe\n\n{wrapped}\n"
    a = analyze_license(text)
    assert (a.spdx_ids, a.verdict, a.copyright_holders) == (("MIT",), "exact", ("Jane Doe",))
    assert a.extra_text == ()


def test_indented_bulleted_and_untitled_texts_are_exact() -> None:
    apache = text_of("Apache-2.0")
    untitled = apache.split("TERMS AND CONDITIONS", 1)[1]
    assert analyze_license("TERMS AND CONDITIONS" + untitled).verdict == "exact"
    assert analyze_license(textwrap.indent(apache, "        ")).verdict == "exact"
    bsd = re.sub(r"(?m)^(Redistributions|Neither)", r"  * \1", text_of("BSD-3-Clause"))
    assert analyze_license(bsd).verdict == "exact"


# --- extra and altered text ---------------------------------------------------------------


def test_inserted_note_is_extra_text_located_by_line() -> None:
    body = text_of("MIT")
    text = f"MIT License\n\nCopyright (c) Tile-AI.\n**{NOTE}**\n\n{body}\n"
    a = analyze_license(text)
    assert a.spdx_ids == ("MIT",)
    assert a.verdict == "match_with_extra_text"
    assert a.extra_text == (TextSpan(4, 4, f"**{NOTE}**"),)
    assert a.copyright_holders == ("Tile-AI",)
    assert a.matches == (LicenseMatch("MIT", 6, 5 + nlines(body), 1.0, "exact"),)


def test_notice_after_end_of_terms_is_flagged_unlike_licensee() -> None:
    terms = text_of("Apache-2.0").split("APPENDIX:")[0].rstrip()
    a = analyze_license(f"{terms}\n\n{NOTE}\n")
    assert a.spdx_ids == ("Apache-2.0",)
    assert a.verdict == "match_with_extra_text"
    assert a.extra_text == (TextSpan(nlines(terms) + 2, nlines(terms) + 2, NOTE),)


def test_sentence_inside_a_paragraph_is_extra_text() -> None:
    lines = text_of("BSD-2-Clause").split("\n")
    k = next(i for i, ln in enumerate(lines) if "Redistributions in binary" in ln)
    lines[k] += " " + NOTE
    a = analyze_license("\n".join(lines))
    assert a.verdict == "match_with_extra_text"
    assert [(s.start_line, s.end_line) for s in a.extra_text] == [(k + 1, k + 1)]
    assert NOTE in a.extra_text[0].text


def test_altered_word_is_modified_with_the_replacing_text() -> None:
    body = text_of("MIT")
    assert " free of charge," in body
    a = analyze_license(body.replace(" free of charge,", " for a small fee,"))
    line = body[: body.index("free of charge")].count("\n") + 1
    assert a.verdict == "modified"
    assert a.spdx_ids == ("MIT",)
    assert a.altered_text == (TextSpan(line, line, "for a small fee,"),)
    assert a.coverage < 1.0


def test_deleted_words_are_modified_and_noted() -> None:
    body = text_of("MIT")
    line = body[: body.index("merge,")].count("\n") + 1
    a = analyze_license(re.sub(r"merge,\s+publish,\s+", "", body, count=1))
    assert (a.spdx_ids, a.verdict, a.altered_text) == (("MIT",), "modified", ())
    assert any(f'missing after line {line}: "merge publish"' in n for n in a.notes), a.notes


def test_condition_swapped_for_a_sentence_reads_as_mit0_plus_text() -> None:
    body = text_of("MIT")
    sentence = next(p for p in body.split("\n\n") if p.startswith("The above copyright"))
    a = analyze_license(body.replace(sentence, "Keep the notice."))
    assert a.verdict in ("modified", "match_with_extra_text")
    assert any("Keep the notice." in s.text for s in a.extra_text + a.altered_text)


def test_removed_line_is_noted_with_its_place() -> None:
    lines = text_of("Apache-2.0").split("\n")
    k = next(i for i, ln in enumerate(lines) if "Grant of Patent License" in ln) + 1
    removed = lines[k]
    a = analyze_license("\n".join(lines[:k] + lines[k + 1 :]))
    assert a.verdict == "modified"
    assert a.altered_text == ()
    assert any(f"missing after line {k}" in n for n in a.notes), a.notes
    assert removed.split()[0].lower() in " ".join(a.notes)


# --- several licenses, expressions --------------------------------------------------------


def test_two_licenses_are_found_one_by_one_without_an_expression() -> None:
    mit, apache = text_of("MIT"), text_of("Apache-2.0")
    a = analyze_license(f"{mit}\n\n{apache}\n")
    assert a.spdx_ids == ("MIT", "Apache-2.0")
    assert a.expression is None
    assert a.verdict == "exact"
    assert [(m.spdx_id, m.start_line) for m in a.matches] == [
        ("MIT", 1), ("Apache-2.0", nlines(mit) + 2)]


def test_dual_license_wording_gives_an_or_expression() -> None:
    lead = "This project is dual-licensed under the Apache License 2.0 or the MIT License."
    a = analyze_license(f"{lead}\n\n{text_of('Apache-2.0')}\n\n{text_of('MIT')}\n")
    assert a.spdx_ids == ("Apache-2.0", "MIT")
    assert a.expression == "Apache-2.0 OR MIT"
    assert a.extra_text == (TextSpan(1, 1, lead),)


def test_license_mit_beside_license_apache_gives_an_or_expression() -> None:
    a = analyze_license(text_of("Apache-2.0"), "LICENSE-APACHE",
                        ["LICENSE-APACHE", "LICENSE-MIT", "README.md"])
    assert a.expression == "Apache-2.0 OR MIT"
    alone = analyze_license(text_of("Apache-2.0"), "LICENSE-APACHE", ["LICENSE-APACHE"])
    assert alone.expression is None


def test_spdx_header_line_is_evidence_not_extra_text() -> None:
    a = analyze_license("SPDX-License-Identifier: Apache-2.0\n\n" + text_of("Apache-2.0"))
    assert (a.spdx_ids, a.verdict, a.expression) == (("Apache-2.0",), "exact", "Apache-2.0")
    old = analyze_license("# SPDX-License-Identifier: GPL-2.0+\n\n" + text_of("GPL-2.0-only"))
    assert old.expression == "GPL-2.0-or-later"
    assert old.spdx_ids == ("GPL-2.0-or-later",)
    assert old.notes == ("GPL-2.0-or-later: the text is GPL-2.0-only, the file adds an "
                         "SPDX-License-Identifier (line 1)",)


def test_exception_text_after_its_license_gives_a_with_expression() -> None:
    text = (f"{text_of('Apache-2.0')}\n\n---- LLVM Exceptions to the Apache 2.0 License ----\n\n"
            f"{text_of('LLVM-exception')}\n")
    a = analyze_license(text)
    assert a.spdx_ids == ("Apache-2.0", "LLVM-exception")
    assert a.expression == "Apache-2.0 WITH LLVM-exception"
    assert a.verdict == "exact"


def test_bare_gpl_says_it_cannot_tell_only_from_or_later() -> None:
    a = analyze_license(text_of("GPL-3.0-only"))
    assert a.spdx_ids == ("GPL-3.0-only",)
    assert a.notes == ("GPL-3.0 text alone does not say -only or -or-later: reported as "
                       "GPL-3.0-only; check the notices in the source files",)
    notice = ("This program is free software: you can redistribute it and/or modify it under "
              "the terms of the GNU General Public License as published by the Free Software "
              "Foundation, either version 3 of the License, or (at your option) any later "
              "version.")
    later = analyze_license(f"{notice}\n\n{text_of('GPL-3.0-only')}")
    assert later.spdx_ids == ("GPL-3.0-or-later",)
    assert later.expression is None


def test_unknown_text_and_empty_input() -> None:
    a = analyze_license("You may use this only on Tuesdays.\nNo other rights are granted.\n")
    assert (a.spdx_ids, a.verdict, a.coverage, a.matches) == ((), "unknown", 0.0, ())
    assert a.extra_text == (TextSpan(1, 2, "You may use this only on Tuesdays.\n"
                                           "No other rights are granted."),)
    empty = analyze_license("")
    assert (empty.verdict, empty.extra_text, empty.copyright_holders) == ("unknown", (), ())


def test_reference_only_names_the_license() -> None:
    a = analyze_license("Copyright 2024 Foo Ltd.\n\nThis code is licensed under the MIT License.\n")
    assert a.spdx_ids == ("MIT",)
    assert a.verdict == "unknown"
    assert a.matches == (LicenseMatch("MIT", 3, 3, 0.0, "reference"),)
    assert a.copyright_holders == ("Foo Ltd.",)
    assert noassertion_explanation(a) == (
        "No known license text found; the file only names MIT (line 3).")


# --- files, encodings, limits -------------------------------------------------------------


def test_analyze_file_handles_bom_crlf_utf16_and_bad_bytes(tmp_path: Path) -> None:
    body = text_of("ISC")
    crlf = tmp_path / "LICENSE"
    crlf.write_bytes(b"\xef\xbb\xbf" + body.replace("\n", "\r\n").encode())
    assert analyze_file(crlf).spdx_ids == ("ISC",)
    assert analyze_file(crlf).verdict == "exact"
    utf16 = tmp_path / "LICENSE.txt"
    utf16.write_bytes(body.encode("utf-16"))
    assert analyze_file(utf16).spdx_ids == ("ISC",)
    latin1 = tmp_path / "COPYING"
    latin1.write_bytes(b"Copyright \xa9 2020 J\xfcrgen M\xfcller\n\n" + body.encode())
    a = analyze_file(latin1)
    assert (a.spdx_ids, a.verdict) == (("ISC",), "exact")
    assert a.copyright_holders == ("Jürgen Müller",)  # not UTF-8: read as cp1252


def test_huge_and_binary_input_does_not_crash(tmp_path: Path) -> None:
    blob = tmp_path / "LICENSE"
    blob.write_bytes(bytes(range(256)) * 4096 + text_of("MIT").encode())  # MIT past the cap
    big = analyze_file(blob)
    assert big.verdict == "unknown"
    assert big.notes[0] == "only the first 256 KiB of the file were analysed"
    many = analyze_license((text_of("MIT") + "\n\n") * 30)
    assert many.spdx_ids == ("MIT",)
    assert len([m for m in many.matches if m.spdx_id == "MIT"]) == 8
    assert "stopped after 8 license texts; more may follow" in many.notes


def test_to_dict_round_trips_through_json() -> None:
    a = analyze_license(f"{text_of('MIT')}\n\n{NOTE}\n", "LICENSE")
    d = json.loads(json.dumps(a.to_dict()))
    assert msgspec.convert(d, LicenseAnalysis) == a
    assert d["extra_text"][0]["text"] == NOTE


# --- GitHub ids, inventory ----------------------------------------------------------------


@pytest.mark.parametrize(("given", "expected"), [
    (None, None), ("NOASSERTION", None), ("other", None), ("", None),
    ("GPL-3.0", "GPL-3.0-only"), ("GPL-2.0+", "GPL-2.0-or-later"), ("mit", "MIT"),
    ("Apache-2.0", "Apache-2.0"), ("LGPL-2.1", "LGPL-2.1-only"),
])
def test_normalize_github_spdx(given: str | None, expected: str | None) -> None:
    assert normalize_github_spdx(given) == expected


@pytest.mark.parametrize(("path", "expected"), [
    ("LICENSE", True), ("licence.txt", True), ("COPYING.LESSER", True), ("NOTICE", True),
    ("COPYRIGHT", True), ("PATENTS", True), ("THIRD_PARTY_NOTICES.txt", True),
    ("THIRD-PARTY-LICENSES", True), ("docs/third-party-notices.md", True),
    ("examples/device/ep/LICENSE-DeepEP", True), ("README.md", False),
    ("mylicense.txt", False), ("notices/README", False),
    ("tests/ReplayData/License.setUp.txt", False), ("src/testdata/COPYING", False),
    ("third_party/x/LICENSE", True), ("src/copyright.py", False), ("tests/run.py", False),
])
def test_is_license_file(path: str, expected: bool) -> None:
    assert is_license_file(path) is expected


@pytest.mark.parametrize(("paths", "expected"), [
    (["README.md", "NOTICE", "LICENSE"], "LICENSE"),
    (["LICENSE-APACHE", "README.md"], "LICENSE-APACHE"),
    (["COPYING", "LICENSE.txt"], "LICENSE.txt"),
    (["LICENSE-MIT", "LICENSE-APACHE"], "LICENSE-APACHE"),
    (["docs/LICENSE", "COPYRIGHT"], "COPYRIGHT"),
    (["NOTICE", "PATENTS", "THIRD_PARTY"], None),
    (["./LICENSE.md", "LICENSE.html"], "./LICENSE.md"),
    ([], None),
])
def test_pick_root_license(paths: list[str], expected: str | None) -> None:
    assert pick_root_license(paths) == expected


# --- reporting ----------------------------------------------------------------------------


def _analysis(verdict: str, **kw: object) -> LicenseAnalysis:
    base: dict[str, object] = dict(
        spdx_ids=("MIT",), expression=None, verdict=verdict, coverage=1.0,
        matches=(LicenseMatch("MIT", 5, 21, 1.0, "exact"),), copyright_holders=(),
        extra_text=(), altered_text=(), notes=())
    base.update(kw)
    return LicenseAnalysis(**base)  # type: ignore[arg-type]


def test_noassertion_explanation() -> None:
    extra = _analysis("match_with_extra_text", extra_text=(TextSpan(4, 5, "note"),))
    assert noassertion_explanation(extra) == "Known license MIT plus extra text at lines 4–5."
    modified = _analysis("modified", coverage=0.96, altered_text=(TextSpan(9, 9, "fee"),))
    assert noassertion_explanation(modified) == (
        "Modified MIT text, 96% of the template: altered line 9.")
    unknown = _analysis("unknown", spdx_ids=(), matches=(), coverage=0.0)
    assert noassertion_explanation(unknown) == (
        "No known license text found: unknown or custom license, review the file.")
    exact = _analysis("exact", spdx_ids=("X11",), matches=(LicenseMatch("X11", 1, 20, 1.0,
                                                                         "exact"),))
    assert noassertion_explanation(exact) == (
        "Standard X11 text, word for word apart from title, copyright and SPDX lines; "
        "GitHub's licensee does not recognise it in this form.")


def test_a_forge_that_gives_no_verdict_is_not_said_to_miss_a_standard_text() -> None:
    """A git server (or Forgejo) judges no license: it did not fail to recognise one."""
    exact = _analysis("exact", spdx_ids=("MIT",), matches=(LicenseMatch("MIT", 1, 20, 1.0,
                                                                         "exact"),))
    assert why_forge_differs(exact, "git server", None, "MIT", False) == (
        "Standard MIT text, word for word apart from title, copyright and SPDX lines; "
        "git server gives no license verdict of its own.")
    assert why_forge_differs(exact, "Gitee", "NOASSERTION", "MIT", False) == (
        "Standard MIT text, word for word apart from title, copyright and SPDX lines; "
        "Gitee does not recognise it in this form.")


def test_word_diff_is_compact() -> None:
    old = "a b c d e f g h i j k l m"
    new = "a b c X e f g h i j k l m"
    assert word_diff(old, new, context=2) == [
        ("equal", "… b c"), ("delete", "d"), ("insert", "X"), ("equal", "e f …")]
    assert word_diff("same words", "same words") == [("equal", "same words")]
    assert word_diff("", "new") == [("insert", "new")]


def test_render_analysis() -> None:
    a = _analysis("match_with_extra_text", copyright_holders=("Tile-AI",),
                  extra_text=(text_span(4, 5, "**During the period\nsubject to terms.**"),))
    assert render_analysis(a, "LICENSE") == (
        "LICENSE: MIT — match_with_extra_text (coverage 100.0%)\n"
        "  finding: adds a condition: “**During the period subject to terms.**” (lines 4–5)\n"
        "  MIT                      lines 5–21  exact 100.0%\n"
        "  copyright holders:\n"
        "    Tile-AI\n"
        "  extra text, lines 4–5:\n"
        "    | **During the period\n"
        "    | subject to terms.**\n"
        "  why not a plain license: Known license MIT plus extra text at lines 4–5.\n")


# --- the real upstream files --------------------------------------------------------------


def corpus_file(name: str) -> Path:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"corpus file {name} not available")
    return path


def test_corpus_tilelang_mit_with_microsoft_note() -> None:
    a = analyze_file(corpus_file("tile-ai__tilelang/licenses/LICENSE"))
    assert (a.spdx_ids, a.verdict, a.copyright_holders) == (
        ("MIT",), "match_with_extra_text", ("Tile-AI",))
    assert a.extra_text == (TextSpan(4, 5, (
        "**During the period from December 1, 2024, to Mar 14, 2025, this project is\n"
        "    subject to additional collaboration terms with Microsoft Corporation.**")),)
    assert a.matches == (LicenseMatch("MIT", 7, 23, 1.0, "exact"),)
    assert noassertion_explanation(a) == "Known license MIT plus extra text at lines 4–5."


def test_corpus_nixl_notice_then_apache() -> None:
    a = analyze_file(corpus_file("ai-dynamo__nixl/licenses/LICENSE"))
    assert a.spdx_ids == ("MIT", "Apache-2.0")
    assert a.matches == (LicenseMatch("MIT", 5, 5, 0.0, "reference"),
                         LicenseMatch("Apache-2.0", 10, 210, 1.0, "exact"))
    assert a.expression is None
    assert a.verdict == "match_with_extra_text"
    assert [(s.start_line, s.end_line) for s in a.extra_text] == [(1, 8)]
    assert a.extra_text[0].text.startswith("NOTICE: The code under ./examples/device/ep")
    assert noassertion_explanation(a) == (
        "Known license Apache-2.0 plus extra text at lines 1–8; it also names MIT (line 5).")


def test_corpus_helion_untitled_bsd3() -> None:
    a = analyze_file(corpus_file("pytorch__helion/licenses/LICENSE"))
    assert (a.spdx_ids, a.verdict, a.copyright_holders) == (
        ("BSD-3-Clause",), "exact", ("Meta Platforms, Inc. and affiliates",))


def test_corpus_aiter_mit_with_amd_copyright_first() -> None:
    a = analyze_file(corpus_file("ROCm__aiter/licenses/LICENSE"))
    assert (a.spdx_ids, a.verdict, a.copyright_holders) == (
        ("MIT",), "exact", ("Advanced Micro Devices, Inc.",))


def test_corpus_mooncake_license_apache() -> None:
    path = corpus_file("kvcache-ai__Mooncake/licenses/LICENSE-APACHE")
    assert pick_root_license([path.name, "README.md"]) == "LICENSE-APACHE"
    a = analyze_file(path)
    assert (a.spdx_ids, a.verdict, a.expression) == (("Apache-2.0",), "exact", None)


def test_corpus_torch_gcu_holders_are_not_extra_text() -> None:
    a = analyze_file(corpus_file("sunnygui-L__torch-gcu/licenses/LICENSE"))
    assert a.spdx_ids == ("BSD-3-Clause",)
    assert len(a.copyright_holders) == 18
    assert a.copyright_holders[:3] == (
        "Enflame 燧原科技", "Facebook, Inc (Adam Paszke)", "Facebook, Inc (Soumith Chintala)")
    # only Caffe2's copyright-model paragraph is extra text, not the list of holders
    assert [(s.start_line, s.end_line) for s in a.extra_text] == [(51, 56)]
    assert a.extra_text[0].text.startswith("Caffe2 uses a copyright model")
    assert a.verdict == "match_with_extra_text"
