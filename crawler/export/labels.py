"""The wording of the catalog's cells and cautions, as segments. Pure.

A cell is a tuple of segments: fixed wording of ours, and untrusted upstream text (a tag, a
path, an SPDX id from the forge) that a renderer must escape, optionally linked. The Markdown
snapshot escapes and links; the catalog JSON joins the plain text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from crawler.export.export_input import NOASSERTION, LicenseFacts, ProjectInput, TrackedRef
from crawler.report import words

MAX_NAME = 120  # a tag or release name shown in a cell
MAX_QUOTE = 160  # the quoted first line of extra license text
BUNDLED_SHOWN = 2  # bundled files named in a cell; the rest are counted



@dataclass(frozen=True)
class Segment:
    text: str
    untrusted: bool = False
    url: str | None = None  # a link target (only http(s) is ever linked)


Cell = tuple[Segment, ...]


def fixed(text: str) -> Segment:
    return Segment(text)


def upstream(text: str, url: str | None = None, limit: int = MAX_NAME) -> Segment:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return Segment(text, untrusted=True, url=url)


def plain(cell: Cell) -> str:
    return "".join(segment.text for segment in cell)


def prerelease_label(ref: TrackedRef) -> str:
    """``" (release candidate)"`` for rc tags, ``" (pre-release)"`` for other pre-releases."""
    return words.version_mark(ref.name, ref.prerelease)


def short_sha(name: str) -> str:
    return name[:7] if re.fullmatch(r"[0-9a-fA-F]{7,64}", name) else name


def ref_cell(ref: TrackedRef | None, forge: str | None) -> Cell:
    """The snapshot's "Latest ... release checked" cell; never a bare version for a non-release."""
    where = forge or "forge"
    if ref is None:
        return (fixed("not checked yet"),)
    if ref.kind == "none" or not ref.name:
        return (fixed(f"no {where} release, tag or commit found"),)
    if ref.kind == "release":
        return (upstream(ref.name, ref.url), fixed(prerelease_label(ref)))
    if ref.kind == "tag":
        return (
            fixed(f"no {where} release; tracked by tag "),
            upstream(ref.name, ref.url),
            fixed(prerelease_label(ref)),
        )
    when = f" ({words.day(ref.date)})" if ref.date else ""
    return (
        fixed("no tagged release; tracked by commit "),
        upstream(short_sha(ref.name), ref.url),
        fixed(when),
    )


def item_ref_cell(project: ProjectInput) -> Cell:
    """The release cell of an item: its ref; a riding item's host's, labelled ``part of
    HOST: …``; ``not trackable: WHY`` for an item no source follows."""
    if project.not_trackable is not None:
        return (fixed(f"{words.NOT_TRACKABLE}: "), upstream(project.not_trackable, limit=300))
    cell = ref_cell(project.ref, project.forge)
    if project.part_of is not None:
        return (fixed(f"{words.PART_OF} "), upstream(project.part_of), fixed(": "), *cell)
    return cell


def item_license_cell(project: ProjectInput) -> Cell:
    """The license cell of an item (a riding item's is its host's); ``—`` when not trackable."""
    if project.not_trackable is not None:
        return (fixed(words.NO_DATE),)
    return license_cell(project.license)


def ref_date(ref: TrackedRef | None) -> str | None:
    return words.day(ref.date) if ref is not None else None


def license_base(facts: LicenseFacts) -> str | None:
    """The license our reading of the root file found; else the forge's verdict if it named
    one. Never NOASSERTION: that is not a license."""
    if facts.expression:
        return facts.expression
    if facts.detected_spdx_ids:
        return " AND ".join(facts.detected_spdx_ids)
    if facts.forge_verdict and facts.forge_verdict != NOASSERTION:
        return facts.forge_verdict
    return None


def has_extra_text(facts: LicenseFacts) -> bool:
    return facts.verdict in ("match_with_extra_text", "modified")


def _license_path(facts: LicenseFacts) -> str:
    if facts.extra_text is not None:
        return facts.extra_text.path
    return facts.root_file.path if facts.root_file is not None else "the license file"


def license_cell(facts: LicenseFacts | None) -> Cell:
    """``MIT``, ``MIT plus extra text in LICENSE``, ``Apache-2.0 base; bundled X has a
    separate license``; NOASSERTION only when no text was recognised."""
    if facts is None:
        return (fixed("not checked yet"),)
    base = license_base(facts)
    cell: list[Segment] = []
    if base is not None:
        cell.append(upstream(base))
        if facts.bundled:
            cell.append(fixed(" base"))
    elif facts.root_file is not None:
        verdict = "NOASSERTION; " if facts.forge_verdict == NOASSERTION else ""
        cell += [
            fixed(f"{verdict}text of "),
            upstream(facts.root_file.path),
            fixed(" not recognised"),
        ]
    elif facts.forge_verdict == NOASSERTION:
        cell.append(fixed(NOASSERTION))
    else:
        cell.append(fixed("no license file found"))
    if has_extra_text(facts) and base is not None:
        altered = facts.extra_text is not None and facts.extra_text.altered
        what = words.ALTERED_TEXT if altered or facts.verdict == "modified" else words.EXTRA_TEXT
        cell += [fixed(f" {what} in "), upstream(_license_path(facts))]
    if facts.bundled:
        shown = facts.bundled[:BUNDLED_SHOWN]
        cell.append(fixed("; bundled "))
        for index, item in enumerate(shown):
            if index:
                last = index == len(shown) - 1 and len(facts.bundled) <= BUNDLED_SHOWN
                cell.append(fixed(" and " if last else ", "))
            cell.append(upstream(item.path))
        more = len(facts.bundled) - len(shown)
        if more:
            cell.append(fixed(f" and {more} more"))
        one = len(facts.bundled) == 1
        cell.append(fixed(" has a separate license" if one else " have separate licenses"))
    return tuple(cell)


def _who(project: ProjectInput) -> list[Segment]:
    who = [upstream(project.name)]
    if project.stale and project.last_checked is not None:
        who.append(fixed(f" ({words.stale_marker(project.last_checked)})"))
    return who


def caution_sentences(project: ProjectInput) -> list[Cell]:
    """The license cautions for one project, each with its evidence link."""
    facts = project.license
    if facts is None:
        return []
    sentences: list[Cell] = []
    base = license_base(facts)
    root = facts.root_file
    verdict = words.forge_verdict(project.forge, NOASSERTION)
    if facts.forge_verdict == NOASSERTION and root is not None:
        reading = (
            [fixed(" reads as "), upstream(base), fixed(".")]
            if base is not None
            else [fixed(" is not recognised as a known license.")]
        )
        sentences.append(
            (
                *_who(project),
                fixed(f": {verdict}, although a root license file exists; "),
                upstream(root.path, root.url),
                *reading,
            )
        )
    extra = facts.extra_text
    if has_extra_text(facts) and base is not None and extra is not None:
        verb = "alters the wording of" if extra.altered else "carries text beyond"
        sentences.append(
            (
                *_who(project),
                fixed(": "),
                upstream(extra.path, extra.url),
                fixed(f" {verb} the "),
                upstream(base),
                fixed(f" terms, from line {extra.line}: “"),
                upstream(extra.text, limit=MAX_QUOTE),
                fixed("”."),
            )
        )
    if facts.bundled:
        listed: list[Segment] = []
        for index, item in enumerate(facts.bundled):
            if index:
                listed.append(fixed("; "))
            ids = " AND ".join(item.spdx_ids) if item.spdx_ids else None
            listed.append(upstream(item.path, item.url))
            listed += (
                [fixed(" ("), upstream(ids), fixed(")")] if ids else [fixed(" (not identified)")]
            )
        sentences.append(
            (*_who(project), fixed(" bundles separately licensed files: "), *listed,
             fixed("."))
        )  # fmt: skip
    return sentences
