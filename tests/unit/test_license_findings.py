"""Issue 13: a template's variable regions (copyright lines, placeholders) take only what they
stand for; a sentence or clause there is extra text, quoted with its line, and restriction
language in it reads as such. Texts come from the license data packages at test time."""

from __future__ import annotations

import json
import re

import msgspec
import pytest

from crawler.analysis.license_clauses import (
    copyright_clause,
    reads_as_prose,
    span_effect,
)
from crawler.analysis.license_templates import reference_text
from crawler.analysis.licenses import (
    LicenseAnalysis,
    LicenseMatch,
    TextSpan,
    analyze_license,
    text_span,
    with_effects,
)
from crawler.report.words import finding_sentence, license_findings

GOVERNMENT = "This grant does not extend to government agencies."


def picker(spdx_id: str, copyright_block: str = "Copyright (c) 2024 Jane Doe") -> str:
    """The text GitHub's license picker writes, its copyright line replaced by ``block``."""
    text = reference_text(spdx_id, "choosealicense")
    return re.sub(r"^.*\[year\],? \[fullname\].*$", lambda _: copyright_block, text,
                  count=1, flags=re.MULTILINE)


# --- the two examples of the issue --------------------------------------------------------


def test_sentence_between_copyright_and_grant_of_0bsd_is_extra_text() -> None:
    text = picker("0BSD").replace("Jane Doe\n\n", f"Jane Doe\n\n{GOVERNMENT}\n\n", 1)
    assert text.split("\n")[4] == GOVERNMENT
    a = analyze_license(text)
    assert a.spdx_ids == ("0BSD",)
    assert a.verdict == "match_with_extra_text"
    assert a.extra_text == (TextSpan(5, 5, GOVERNMENT),)
    assert a.copyright_holders == ("Jane Doe",)
    assert a.extra_text[0].effect == "restriction"
    assert license_findings(a) == [f"adds a restriction: “{GOVERNMENT}” (line 5)"]


def test_clause_appended_to_mit_copyright_line_is_extra_text_not_holder() -> None:
    line = "Copyright (c) 2024 Jane Doe, who forbids use by any government agency"
    a = analyze_license(picker("MIT", line))
    assert a.spdx_ids == ("MIT",)
    assert a.verdict == "match_with_extra_text"
    assert a.extra_text == (TextSpan(3, 3, "who forbids use by any government agency"),)
    assert a.copyright_holders == ("Jane Doe",)
    assert a.extra_text[0].effect == "restriction"


# --- other places in the copyright region ---------------------------------------------------


def test_sentence_inside_a_copyright_block_is_extra_text() -> None:
    block = ("Copyright (c) 2024 Jane Doe\n"
             "No part of this software may be used to train machine learning models.\n"
             "Copyright (c) 2025 Max Power")
    a = analyze_license(picker("MIT", block))
    assert a.verdict == "match_with_extra_text"
    assert a.extra_text == (TextSpan(4, 4, "No part of this software may be used to train "
                                           "machine learning models."),)
    assert a.copyright_holders == ("Jane Doe", "Max Power")


@pytest.mark.parametrize(("spdx_id", "line", "clause"), [
    ("ISC", "Copyright (c) 2024 Jane Doe; use in aircraft is not permitted",
     "use in aircraft is not permitted"),
    ("BSD-2-Clause", "SPDX-FileCopyrightText: 2024 Jane Doe, for non-military use only",
     "for non-military use only"),
    ("Zlib", "(C) 2024 Jane Doe, and nobody at Initech may run it",
     "and nobody at Initech may run it"),
])
def test_clause_on_any_kind_of_copyright_line_is_extra_text(spdx_id: str, line: str,
                                                            clause: str) -> None:
    a = analyze_license(picker(spdx_id, line))
    assert (a.spdx_ids, a.verdict) == ((spdx_id,), "match_with_extra_text")
    assert a.extra_text == (TextSpan(3, 3, clause),)
    assert a.copyright_holders == ("Jane Doe",)


# --- realistic copyright blocks stay exact ----------------------------------------------------

MANY = ("Copyright (c) 2009-2013, 2015 Acme Widgets GmbH and its subsidiaries.\n"
        "Copyright (c) 2011 Erika Mustermann <erika@example.de>\n"
        "Copyright (c) 2020-present Li Lei\n"
        "All rights reserved.")
CONTINUED = ("Copyright (c) 2017-2025 The Kettle Project developers and contributors\n"
             "                        Ravi Kumar\n"
             "                        Jean-Luc Picard (https://example.com)")
SPDX_TEXT = ("SPDX-FileCopyrightText: 2021-2024 Ada Lovelace <ada@example.com>\n"
             "SPDX-FileCopyrightText: 2022 Analytical Engines Ltd.")
HOLDERS = {
    MANY: ("Acme Widgets GmbH and its subsidiaries", "Erika Mustermann <erika@example.de>",
           "Li Lei"),
    CONTINUED: ("The Kettle Project developers and contributors",),
    SPDX_TEXT: ("Ada Lovelace <ada@example.com>", "Analytical Engines Ltd."),
}


@pytest.mark.parametrize("spdx_id", ["MIT", "BSD-3-Clause", "ISC", "Zlib"])
@pytest.mark.parametrize("block", list(HOLDERS), ids=["many", "continued", "spdx"])
def test_realistic_copyright_blocks_in_the_template_stay_exact(spdx_id: str, block: str) -> None:
    a = analyze_license(picker(spdx_id, block))
    assert (a.spdx_ids, a.verdict, a.extra_text, a.altered_text) == ((spdx_id,), "exact", (), ())
    assert a.copyright_holders == HOLDERS[block]


@pytest.mark.parametrize("block", list(HOLDERS), ids=["many", "continued", "spdx"])
def test_realistic_copyright_blocks_before_apache_stay_exact(block: str) -> None:
    a = analyze_license(f"{block}\n\n{reference_text('Apache-2.0')}")
    assert (a.spdx_ids, a.verdict, a.extra_text) == (("Apache-2.0",), "exact", ())
    assert a.copyright_holders == HOLDERS[block]


def test_names_filling_placeholders_in_the_body_are_not_extra_text() -> None:
    text = reference_text("PostgreSQL", "choosealicense").replace("[year], [fullname]",
                                                                  "2024, Example Org")
    a = analyze_license(text.replace("[fullname]", "Example Org"))
    assert (a.spdx_ids, a.verdict, a.extra_text) == (("PostgreSQL",), "exact", ())
    assert a.notes[0] == 'PostgreSQL: "[placeholder]" reads "Example Org" (line 10)'


def test_a_templates_own_clause_on_its_copyright_line_is_license_text() -> None:
    line = "\tCopyright [yyyy] [name of copyright owner] Licensed under the"
    assert line[copyright_clause(line) or 0 :] == "Licensed under the"
    a = analyze_license(reference_text("ECL-2.0"))
    assert (a.spdx_ids, a.verdict, a.extra_text) == (("ECL-2.0",), "exact", ())


# --- plain-language findings ------------------------------------------------------------------


@pytest.mark.parametrize(("text", "effect"), [
    ("You may not sell copies of this software.", "restriction"),
    ("Military use is prohibited.", "restriction"),
    ("For academic and research purposes only.", "restriction"),
    ("Licensees must send a postcard to the author.", "condition"),
    ("A royalty of 1% of revenue is due on each sale.", "condition"),
    ("The author also grants you a patent license.", "grant"),
    ("This file is dedicated to the public domain.", "grant"),
    ("Permission is granted without restriction.", "grant"),
    ("Written in Rust, mostly on weekends.", "other"),
])
def test_span_effect(text: str, effect: str) -> None:
    assert span_effect(text) == effect


def test_finding_sentence_quotes_locates_and_caps() -> None:
    one = text_span(5, 5, "Use by   banks\nis forbidden.")
    assert finding_sentence(one) == "adds a restriction: “Use by banks is forbidden.” (line 5)"
    two = text_span(7, 8, "See CONTRIBUTING.md\nfor the code of conduct.")
    assert finding_sentence(two) == ("adds text: “See CONTRIBUTING.md for the code of "
                                     "conduct.” (lines 7–8)")
    assert finding_sentence(text_span(9, 9, "for a fee,"), altered=True) == (
        "changes the wording to a condition: “for a fee,” (line 9)")
    long = finding_sentence(text_span(1, 1, "word " * 200))
    assert long == f"adds text: “{('word ' * 60)[:299].rstrip()}…” (line 1)"


def test_license_findings_put_restrictions_first() -> None:
    a = LicenseAnalysis(
        spdx_ids=("MIT",), expression=None, verdict="modified", coverage=0.98,
        matches=(LicenseMatch("MIT", 1, 21, 0.98, "modified"),), copyright_holders=(),
        extra_text=(text_span(2, 2, "Maintained by volunteers."),
                    text_span(30, 30, "Not for use in medical devices.")),
        altered_text=(text_span(9, 9, "for a fee,"),), notes=())
    assert license_findings(a) == [
        "changes the wording to a condition: “for a fee,” (line 9)",
        "adds a restriction: “Not for use in medical devices.” (line 30)",
        "adds text: “Maintained by volunteers.” (line 2)",
    ]


@pytest.mark.parametrize(("text", "prose"), [
    ("Jane Doe", False), ("and contributors", False), ("59 Temple Place, Suite 330", False),
    ("Jean-Luc Picard (https://example.com)", False), ("Contributors:", False),
    ("Have fun with it!", True), ("Not for resale.", True), ("free for personal use", True),
])
def test_reads_as_prose(text: str, prose: bool) -> None:
    assert reads_as_prose(text) is prose


# --- stored analyses ----------------------------------------------------------------------------


def test_analysis_stored_before_span_effects_still_loads() -> None:
    """A dict as today's database holds it (written before spans had an effect)."""
    stored = {
        "spdx_ids": ["MIT"], "expression": None, "verdict": "match_with_extra_text",
        "coverage": 1.0,
        "matches": [{"spdx_id": "MIT", "start_line": 5, "end_line": 21, "coverage": 1.0,
                     "verdict": "exact"}],
        "copyright_holders": ["Tile-AI"],
        "extra_text": [{"start_line": 4, "end_line": 4, "text": "Commercial use is forbidden."}],
        "altered_text": [], "notes": [],
    }
    a = with_effects(msgspec.convert(json.loads(json.dumps(stored)), LicenseAnalysis))
    assert a.extra_text == (TextSpan(4, 4, "Commercial use is forbidden."),)
    assert a.extra_text[0].effect == "restriction"
    assert a.matches == (LicenseMatch("MIT", 5, 21, 1.0, "exact"),)
    d = json.loads(json.dumps(a.to_dict()))
    assert d["extra_text"] == [{"start_line": 4, "end_line": 4,
                                "text": "Commercial use is forbidden.", "effect": "restriction"}]
    assert msgspec.convert(d, LicenseAnalysis).extra_text[0].effect == "restriction"
    assert msgspec.convert(d, LicenseAnalysis) == a
