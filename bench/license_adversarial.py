"""Adversarial evaluation of the license reader (issue 13), imported by license_eval.py.

For every license GitHub's picker offers (the ``pychoosealicense`` texts, placeholders filled
as GitHub fills them) that the data knows, two restrictive and two permissive sentences
written for this benchmark are inserted at each structural position a reviewer would skim:
before the title, between title and copyright, inside the copyright block, appended to a
copyright line, between the copyright and the grant, between two clauses, inside a list of
conditions, after the disclaimer, after "END OF TERMS AND CONDITIONS", and in a second license
file of the tree inventory (analysed on its own, with its nested path). A case counts as
found when the verdict is not ``exact`` and a span of extra or altered text covers the
inserted line and quotes the sentence whole. The unmodified texts are read with realistic
copyright blocks (many holders, "All rights reserved.", contributor lists, year ranges,
SPDX-FileCopyrightText) and must stay ``exact``.
"""

from __future__ import annotations

import importlib.util
import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from crawler.analysis.license_templates import is_copyright_line, load_index
from crawler.analysis.licenses import LicenseAnalysis, analyze_license, normalize_github_spdx

POSITIONS = (
    "before the title",
    "between title and copyright",
    "inside the copyright block",
    "appended to a copyright line",
    "between copyright and grant",
    "between two clauses",
    "inside a list of conditions",
    "after the disclaimer",
    "after END OF TERMS AND CONDITIONS",
    "in a second file of the inventory",
)
# Written for this benchmark; the tests use other sentences.
RESTRICTIVE = (
    "This software may not be used in any system designed to harm people.",
    "Use of this code by any military or intelligence organisation is strictly prohibited.",
    "Commercial redistribution requires a separate written agreement with the authors.",
    "The permissions above do not apply to companies with more than 50 employees.",
    "You must notify the maintainers by e-mail before deploying this software in production.",
    "Government agencies and their contractors are excluded from this license.",
    "Redistribution is forbidden in countries under export restrictions.",
    "Only non-profit organisations may run this software on their servers.",
    # a second pool, written after the first passed (it found clause and quoting gaps)
    "Not to be used for surveillance of any kind.",
    "Free for personal and educational use.",
    "Licensed to Example Corp for internal evaluation only.",
    "Personal projects welcome; companies please ask first.",
    "Jane Doe reserves the right to revoke this license at any time.",
    "Redistribution in source form: prohibited.",
    "NOT FOR RESALE.",
    "Deployment in safety-critical systems is at the licensee's own risk and needs our "
    "sign-off.",
    "Binary redistribution is limited to members of the Example consortium.",
    "Patent rights are withheld from anyone who sues the authors.",
)
PERMISSIVE = (
    "You may also use this software under the terms of the Apache License, Version 2.0.",
    "The authors additionally grant everyone the right to relicense this code under any "
    "OSI-approved license.",
    "Attribution is appreciated but not required.",
    "Files in the examples directory are dedicated to the public domain.",
    "Anyone is free to copy and adapt the documentation without restriction.",
    "Permission to use the project logo is granted for unmodified builds.",
    "Have fun with it!",
    "Contributions are welcome under the same terms.",
    "Example code snippets in the documentation carry no conditions at all.",
    "Forks are encouraged.",
    "In addition, the CC-BY-4.0 license applies to the artwork.",
)
# (separator, clause) appended to a copyright line
RESTRICTIVE_CLAUSES = (
    (", ", "who does not permit use by police forces"),
    ("; ", "not for use in weapons systems"),
    (" - ", "commercial use requires a paid license"),
    (", ", "except for military applications"),
    (" (", "no use by government agencies)"),
    (". ", "Resale of this software is prohibited."),
    (", ", "for educational purposes"),
    (" (", "all uses other than research require approval)"),
    (". ", "Internal use at Example Corp. only."),
    (", ", "with export restrictions under EAR99"),
    (" -- ", "evaluation copy, expires 2025-12-31"),
    (", ", "and no one at Acme may touch it"),
)
PERMISSIVE_CLAUSES = (
    (", ", "and you may additionally use it under the MIT terms"),
    ("; ", "this notice may be omitted in binary distributions"),
    (", ", "dedicated to the public domain where the law allows"),
    (". ", "Anyone may relicense this file under the GPL."),
    (", ", "and everyone else is welcome to use it"),
    ("; ", "relicensing to Apache-2.0 is fine"),
)
# Realistic copyright blocks that must not read as extra text.
HOLDER_BLOCKS: dict[str, tuple[str, ...]] = {
    "one holder": ("Copyright (c) 2024 Jane Doe",),
    "many holders, all rights reserved": (
        "Copyright (c) 2014-2024 Example Corporation and its affiliates.",
        "Copyright (c) 2016, 2018-2020 Jane Doe <jane@example.org>",
        "Copyright (c) 2021 John Q. Public (https://example.net/~jqp)",
        "Copyright (c) 2022 Zhang Wei",
        "All rights reserved.",
    ),
    "contributor list": (
        "Copyright (c) 2015-present, The Example Project Authors and contributors.",
        "Contributors:",
        "    Jane Doe",
        "    María José García-López",
        "    Zhang Wei <zw@example.cn>",
    ),
    "holder continued on the next line": (
        "Copyright (c) 2020 United States Government as represented by the",
        "Administrator of the National Aeronautics and Space Administration.",
        "All Rights Reserved.",
    ),
    "SPDX-FileCopyrightText": (
        "SPDX-FileCopyrightText: 2023 Jane Doe <jane@example.org>",
        "SPDX-FileCopyrightText: 2019-2024 Example GmbH",
    ),
    "mixed markers": (
        "© 2024 Example Ltd. All rights reserved.",
        "(c) 2012-2013 Bar Software, Inc.",
        "Copyright 2019-2024 The Foo Developers",
        "Portions Copyright (C) 2010 Baz Labs",
    ),
    "headed groups of holders": (
        "From Example Labs:",
        "Copyright (c) 2016-     Example Labs, Inc (Jane Doe)",
        "Copyright (c) 2014-     Example Inc (John Smith)",
        "",
        "All contributions by Example University:",
        "Copyright (c) 2015 Example University",
        "All rights reserved.",
        "",
        "All other contributions:",
        "Copyright(c) 2015, 2016 the respective contributors",
        "All rights reserved.",
    ),
    "holders and other contributors": (
        "Copyright (c) 2018-2024 Jane Doe, John Smith, and other contributors",
        "Copyright 2023 Acme Widgets, LLC. All Rights Reserved.",
    ),
}
TWO_HOLDERS = ("Copyright (c) 2019-2024 Jane Doe", "Copyright (c) 2024 Example Corp.")
_LIST_ITEM_RE = re.compile(r"^(\s*)(\d{1,2}[.)]|\([a-z0-9]{1,4}\)|[a-z][.)]|[*-])\s+\S")
_DISCLAIMER_RE = re.compile(r"\bAS[ -]IS\b|WITHOUT (?:ANY )?WARRANT|DISCLAIM", re.IGNORECASE)
_FILLS = {"year": "2024", "yyyy": "2024", "fullname": "Jane Doe", "email": "jd@example.org",
          "project": "Example Project", "projecturl": "https://example.org", "login": "janedoe"}


@dataclass
class Layout:
    """A license text as lines, with a copyright block at ``copyright`` (first, last line)."""

    spdx_id: str
    lines: list[str]
    title: tuple[int, int] | None  # first and last line of the title paragraph
    copyright: tuple[int, int]


@dataclass
class Case:
    spdx_id: str
    position: str
    kind: str  # restrictive | permissive
    text: str
    lines: tuple[int, int]  # 1-based lines of the inserted text
    quoted: str  # what a span must quote
    path: str = "LICENSE"


@dataclass
class Tally:
    n: int = 0
    found: int = 0
    ids_ok: int = 0
    read_as_restriction: int = 0
    misses: list[str] = field(default_factory=list)


def picker_texts() -> list[tuple[str, str]]:
    """(SPDX id, text) for each choosealicense text whose license the data knows, with its
    placeholders filled as a project fills them."""
    spec = importlib.util.find_spec("pychoosealicense")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(next(iter(spec.submodule_search_locations))) / "_licenses"
    index = load_index()
    out = []
    for path in sorted(folder.glob("*.txt")):
        _, head, body = path.read_text(encoding="utf-8").split("---\n", 2)
        m = re.search(r"^spdx-id:\s*(\S+)", head, re.MULTILINE)
        spdx_id = normalize_github_spdx(m.group(1)) if m else None
        if spdx_id and index.by_id(spdx_id) is not None:
            filled = re.sub(r"\[([a-z]+)\]", lambda g: _FILLS.get(g.group(1), g.group(0)),
                            body.strip("\n"))
            out.append((spdx_id, filled))
    return out


def _paragraph_end(lines: list[str], start: int) -> int:
    k = start
    while k + 1 < len(lines) and lines[k + 1].strip():
        k += 1
    return k


def layout(spdx_id: str, text: str, block: tuple[str, ...]) -> Layout:
    """The text with ``block`` as its copyright statement: in place of the picker's own
    copyright line when it has one near the top, else after the title (or at the top)."""
    lines = text.split("\n")
    index = load_index()
    tpl = next((index.template(i) for i, e in enumerate(index.entries)
                if e.key.startswith("choosealicense-") and e.spdx_id == spdx_id), None)
    first = next(k for k, ln in enumerate(lines) if ln.strip())
    title = (first, _paragraph_end(lines, first)) if tpl and tpl.title_len else None
    own = next((k for k, ln in enumerate(lines[:15]) if is_copyright_line(ln)
                and "Jane Doe" in ln), None)
    if own is not None:
        lines[own : own + 1] = list(block)
        return Layout(spdx_id, lines, title, (own, own + len(block) - 1))
    at = title[1] + 2 if title else first
    lines[at:at] = [*block, ""]
    return Layout(spdx_id, lines, title, (at, at + len(block) - 1))


def _insert(lay: Layout, at: int, new: list[str], sentence: str, kind: str, position: str,
            offset: int) -> Case:
    """``new`` inserted before line ``at``; the sentence is ``new[offset]``."""
    lines = [*lay.lines[:at], *new, *lay.lines[at:]]
    line = at + offset + 1
    return Case(lay.spdx_id, position, kind, "\n".join(lines), (line, line), sentence)


def _positions(lay: Layout) -> dict[str, Callable[[str, str], Case | None]]:
    """For each position, how to put a sentence there (None where the text has no such
    place, e.g. no list of conditions in MIT)."""
    lines = lay.lines
    c0, c1 = lay.copyright
    body_from = c1 + 1 if not lay.title or c0 > lay.title[1] else lay.title[1] + 1
    blanks = [k for k in range(body_from + 1, len(lines) - 1)
              if not lines[k].strip() and lines[k + 1].strip() and lines[k - 1].strip()]
    items = [k for k in range(body_from, len(lines)) if _LIST_ITEM_RE.match(lines[k])]
    second = next((b for a, b in pairwise(items) if b - a <= 25), None)
    disclaimer = next((k for k in range(body_from, len(lines))
                       if _DISCLAIMER_RE.search(lines[k])), None)
    end_terms = next((k for k, ln in enumerate(lines)
                      if "END OF TERMS AND CONDITIONS" in ln.upper()), None)

    def before_title(s: str, kind: str) -> Case:
        return _insert(lay, 0, [s, ""], s, kind, POSITIONS[0], 0)

    def title_copyright(s: str, kind: str) -> Case | None:
        if lay.title is None or c0 < lay.title[1]:
            return None
        return _insert(lay, c0, [s, ""], s, kind, POSITIONS[1], 0)

    def in_block(s: str, kind: str) -> Case:
        return _insert(lay, c0 + 1, [s], s, kind, POSITIONS[2], 0)

    def between_copyright_grant(s: str, kind: str) -> Case:
        return _insert(lay, c1 + 1, ["", s], s, kind, POSITIONS[4], 1)

    def between_clauses(s: str, kind: str) -> Case | None:
        if not blanks:
            return None
        return _insert(lay, blanks[len(blanks) // 2] + 1, [s, ""], s, kind, POSITIONS[5], 0)

    def in_list(s: str, kind: str) -> Case | None:
        if second is None:
            return None
        m = _LIST_ITEM_RE.match(lines[second])
        assert m is not None
        item = f"{m.group(1)}{m.group(2)} {s}"
        new = [item, ""] if not lines[second - 1].strip() else [item]
        return _insert(lay, second, new, s, kind, POSITIONS[6], 0)

    def after_disclaimer(s: str, kind: str) -> Case | None:
        if disclaimer is None:
            return None
        end = _paragraph_end(lines, disclaimer)
        return _insert(lay, end + 1, ["", s], s, kind, POSITIONS[7], 1)

    def after_end_of_terms(s: str, kind: str) -> Case | None:
        if end_terms is None:
            return None
        return _insert(lay, end_terms + 1, ["", s], s, kind, POSITIONS[8], 1)

    return {
        POSITIONS[0]: before_title,
        POSITIONS[1]: title_copyright,
        POSITIONS[2]: in_block,
        POSITIONS[4]: between_copyright_grant,
        POSITIONS[5]: between_clauses,
        POSITIONS[6]: in_list,
        POSITIONS[7]: after_disclaimer,
        POSITIONS[8]: after_end_of_terms,
    }


def _clause_case(lay: Layout, sep: str, clause: str, kind: str) -> Case:
    lines = list(lay.lines)
    c0 = lay.copyright[0]
    lines[c0] = lines[c0].rstrip() + sep + clause
    return Case(lay.spdx_id, POSITIONS[3], kind, "\n".join(lines), (c0 + 1, c0 + 1), clause)


def build_cases() -> tuple[list[Case], list[Case]]:
    """(adversarial cases, unmodified cases)."""
    cases: list[Case] = []
    clean: list[Case] = []
    for i, (spdx_id, text) in enumerate(picker_texts()):
        for name, block in HOLDER_BLOCKS.items():
            lay = layout(spdx_id, text, block)
            clean.append(Case(spdx_id, name, "unmodified", "\n".join(lay.lines) + "\n",
                              (0, 0), ""))
        lay = layout(spdx_id, text, TWO_HOLDERS)
        places = _positions(lay)
        for p, position in enumerate(POSITIONS):
            for kind, pool, clauses, half in (
                ("restrictive", RESTRICTIVE, RESTRICTIVE_CLAUSES, 0),
                ("permissive", PERMISSIVE, PERMISSIVE_CLAUSES, 0),
                ("restrictive", RESTRICTIVE, RESTRICTIVE_CLAUSES, 1),
                ("permissive", PERMISSIVE, PERMISSIVE_CLAUSES, 1),
            ):
                s = pool[(i + p + half * len(pool) // 2) % len(pool)]
                if position == POSITIONS[3]:
                    at = (i + p + half * len(clauses) // 2) % len(clauses)
                    cases.append(_clause_case(lay, *clauses[at], kind))
                elif position == POSITIONS[9]:  # another file of the tree, another place in it
                    others = [q for q in POSITIONS[:9] if q in places]
                    made = places[others[(i + 3 * p) % len(others)]](s, kind)
                    k = 1
                    while made is None:
                        made = places[others[(i + 3 * p + k) % len(others)]](s, kind)
                        k += 1
                    made.position = position
                    made.path = f"third_party/vendored-{spdx_id.lower()}/LICENSE.txt"
                    cases.append(made)
                else:
                    made = places[position](s, kind)
                    if made is not None:
                        cases.append(made)
    return cases, clean


def _flat(text: str) -> str:
    return " ".join(text.split())


def found(case: Case, a: LicenseAnalysis) -> bool:
    """Flagged, located by line, and the inserted words quoted whole."""
    if a.verdict not in ("match_with_extra_text", "modified"):
        return False
    want = _flat(case.quoted)
    return any(s.start_line <= case.lines[1] and case.lines[0] <= s.end_line
               and want in _flat(s.text) for s in a.extra_text + a.altered_text)


def _covering(case: Case, a: LicenseAnalysis) -> list[str]:
    return [s.effect for s in a.extra_text + a.altered_text
            if s.start_line <= case.lines[1] and case.lines[0] <= s.end_line]


def _text_ids(a: LicenseAnalysis) -> tuple[str, ...]:
    return tuple(m.spdx_id for m in a.matches if m.verdict != "reference")


def evaluate() -> int:
    """Run the adversarial section and print its tables; 0 when the targets are met."""
    cases, clean = build_cases()
    if not cases:
        print("adversarial section skipped: pychoosealicense is not installed")
        return 0
    by_position: dict[str, dict[str, Tally]] = defaultdict(lambda: defaultdict(Tally))
    elapsed = 0.0
    for case in cases:
        t = time.perf_counter()
        a = analyze_license(case.text, case.path)
        elapsed += time.perf_counter() - t
        tally = by_position[case.position][case.kind]
        tally.n += 1
        ok = found(case, a)
        tally.found += ok
        tally.ids_ok += _text_ids(a) == (case.spdx_id,)
        effects = _covering(case, a)
        tally.read_as_restriction += any(e in ("restriction", "condition") for e in effects)
        if not ok:
            spans = [(s.start_line, s.end_line, s.text[:50]) for s in a.extra_text]
            tally.misses.append(f"{case.spdx_id} [{case.kind}] line {case.lines[0]}: "
                                f"verdict {a.verdict}, spans {spans}")
    fp: list[str] = []
    clean_ids = 0
    for case in clean:
        t = time.perf_counter()
        a = analyze_license(case.text, case.path)
        elapsed += time.perf_counter() - t
        clean_ids += _text_ids(a) == (case.spdx_id,)
        if a.verdict != "exact":
            fp.append(f"{case.spdx_id} with {case.position}: {a.verdict} " + "; ".join(
                f"{s.start_line}-{s.end_line} {s.text[:60]!r}"
                for s in a.extra_text + a.altered_text))
    return _print(by_position, cases, clean, fp, clean_ids, elapsed)


def _print(by_position: dict[str, dict[str, Tally]], cases: list[Case], clean: list[Case],
           fp: list[str], clean_ids: int, elapsed: float) -> int:
    licenses = len({c.spdx_id for c in clean})
    print(f"\nadversarial placements ({licenses} licenses of GitHub's picker, "
          f"{len(cases)} modified files, {len(clean)} unmodified)")
    head = (f"{'position':<36} {'files':>5} {'found':>7} {'restrictive':>11} "
            f"{'permissive':>10} {'restriction read':>16} {'right id':>8}")
    print(head)
    print("-" * len(head))
    worst = 1.0
    misses: list[str] = []
    for position in POSITIONS:
        r, p = by_position[position]["restrictive"], by_position[position]["permissive"]
        n = r.n + p.n
        if not n:
            print(f"{position:<36} {0:>5}  (no such place in these texts)")
            continue
        share = (r.found + p.found) / n
        worst = min(worst, share)
        print(f"{position:<36} {n:>5} {100 * share:>6.1f}% {100 * r.found / max(1, r.n):>10.1f}%"
              f" {100 * p.found / max(1, p.n):>9.1f}%"
              f" {100 * r.read_as_restriction / max(1, r.n):>15.1f}%"
              f" {100 * (r.ids_ok + p.ids_ok) / n:>7.1f}%")
        misses += [f"{position}: {m}" for m in r.misses + p.misses]
    permissive_n = sum(t["permissive"].n for t in by_position.values())
    permissive_as = sum(t["permissive"].read_as_restriction for t in by_position.values())
    print(f"{'unmodified, realistic copyright blocks':<36} {len(clean):>5}  flagged: {len(fp)} "
          f"(target 0); right id {100 * clean_ids / max(1, len(clean)):.1f}%")
    print(f"permissive sentences read as a restriction or condition: {permissive_as}/"
          f"{permissive_n}")
    print(f"mean ms/file: {1000 * elapsed / max(1, len(cases) + len(clean)):.1f}")
    print("'found': verdict not exact, a span covers the inserted line and quotes it whole; "
          "'restriction read': restrictive sentences whose span reads as restriction or "
          "condition; 'right id': the license text's SPDX id (licenses a sentence names are "
          "references, not counted)")
    print(f"\nadversarial misses ({len(misses)}):")
    for m in misses:
        print(f"  - {m}")
    print(f"\nunmodified files flagged ({len(fp)}):")
    for f in fp:
        print(f"  - {f}")
    return 0 if worst >= 0.99 and not fp else 1
