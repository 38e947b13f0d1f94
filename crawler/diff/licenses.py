"""License facets: the forge's verdict beside our reading of the root license file, what
changed in it, and the NOASSERTION flag. Pure."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from crawler.analysis.license_clauses import TextSpan, finding_verb
from crawler.analysis.license_names import same_license
from crawler.analysis.licenses import LicenseAnalysis, noassertion_explanation, word_diff
from crawler.diff.names import Names, label_of
from crawler.model import Change, ChangeKind, Flag, FlagKind, ProjectSnapshot

NOASSERTION = "NOASSERTION"


# The analysis dicts of snapshots read together are shared (one per license blob: the store's
# _SharedTexts), and one project's diff and report read its analysis seven times: each dict
# is turned into a LicenseAnalysis once. Keyed by identity, the dict kept alive beside it (so
# its id cannot be reused); bounded.
_READ: dict[int, tuple[dict[str, Any], LicenseAnalysis]] = {}
_READ_MAX = 4096


def analysis_of(snapshot: ProjectSnapshot | None) -> LicenseAnalysis | None:
    if snapshot is None or snapshot.license_file is None or not snapshot.license_file.analysis:
        return None
    raw = snapshot.license_file.analysis
    known = _READ.get(id(raw))
    if known is not None and known[0] is raw:
        return known[1]
    analysis = LicenseAnalysis.from_dict(raw)
    if len(_READ) >= _READ_MAX:
        _READ.clear()
    _READ[id(raw)] = (raw, analysis)
    return analysis


def forget_readings() -> None:
    """Let go of the analyses read during an audit (and of the dicts they were read from)."""
    _READ.clear()


def forge_spdx(snapshot: ProjectSnapshot | None) -> str | None:
    if snapshot is None or snapshot.forge_license is None:
        return None
    return snapshot.forge_license.spdx_id


def detected_license(snapshot: ProjectSnapshot | None) -> str | None:
    """Our own reading of the root license text: an expression, else the ids found."""
    analysis = analysis_of(snapshot)
    if analysis is None:
        return None
    if analysis.expression:
        return analysis.expression
    return " AND ".join(analysis.spdx_ids) or None


def forge_agrees(forge: str | None, ours: str | None) -> bool:
    """The forge's id and our reading name the same license, through SPDX's equivalences:
    the deprecated ``GPL-3.0`` GitHub and GitLab send agrees with ``GPL-3.0-only`` and with
    ``GPL-3.0-or-later``. Neither naming a license also agrees."""
    if forge in (None, NOASSERTION) or ours is None:
        return (forge or NOASSERTION) == (ours or NOASSERTION)
    return forge == ours or same_license(forge, ours) is True


def _carries_more(analysis: LicenseAnalysis | None) -> bool:
    return analysis is not None and analysis.verdict in ("match_with_extra_text", "modified")


def license_reading(snapshot: ProjectSnapshot | None, names: Names) -> dict[str, Any] | None:
    """Our reading of the root license file, for the report: ids, verdict, the text that
    differs from the template (verbatim, with lines) and why the forge may disagree."""
    analysis = analysis_of(snapshot)
    if snapshot is None or snapshot.license_file is None or analysis is None:
        return None
    forge = forge_spdx(snapshot)
    ours = detected_license(snapshot)
    agree = forge_agrees(forge, ours)
    differs = not agree or analysis.verdict != "exact"
    why = None
    if differs:
        label = label_of(names, snapshot.repo.forge if snapshot.repo else None)
        why = noassertion_explanation(analysis, label)
        if forge not in (None, NOASSERTION) and not agree:
            why = f"{label} reads {forge}, the file reads {ours or 'no known license'}: {why}"
        elif forge not in (None, NOASSERTION) and _carries_more(analysis):
            why = f"{label} reads {forge} and ignores the rest: {why}"
    return {
        "path": snapshot.license_file.path,
        "url": snapshot.license_file.url or None,
        "blob_sha": snapshot.license_file.blob_sha,
        "spdx_ids": list(analysis.spdx_ids),
        "expression": analysis.expression,
        "verdict": analysis.verdict,
        "coverage": round(analysis.coverage, 3),
        "copyright_holders": list(analysis.copyright_holders[:20]),
        "extra_text": [_span(span, False) for span in analysis.extra_text[:10]],
        "altered_text": [_span(span, True) for span in analysis.altered_text[:10]],
        "notes": list(analysis.notes[:10]),
        "differs_from_forge": differs,
        "restricts": any(s.restriction for s in (*analysis.extra_text, *analysis.altered_text)),
        "why": why,
    }


def _span(span: TextSpan, altered: bool) -> dict[str, Any]:
    """A span for the report: where, verbatim, and what it does in plain words."""
    return {
        "start_line": span.start_line,
        "end_line": span.end_line,
        "text": span.text,
        "effect": span.effect,
        "finding": finding_verb(span, altered),
    }


def license_label(snapshot: ProjectSnapshot | None, names: Names) -> str | None:
    """The catalog's license column: the forge's verdict, corrected by our reading."""
    if snapshot is None:
        return None
    forge = forge_spdx(snapshot)
    ours = detected_license(snapshot)
    extra = _carries_more(analysis_of(snapshot))
    if forge and forge != NOASSERTION:
        return f"{forge} (file has extra text)" if extra else forge
    if ours:
        suffix = " + extra text" if extra else ""
        label = label_of(names, snapshot.repo.forge if snapshot.repo else None)
        return f"NOASSERTION per {label}; text reads {ours}{suffix}"
    if forge == NOASSERTION:
        return NOASSERTION
    if snapshot.license_file is None and snapshot.forge_license is not None:
        return "none found"
    return None


def license_changes(
    name: str, before: ProjectSnapshot, after: ProjectSnapshot, names: Names
) -> list[Change]:
    changes = []
    evidence = (
        after.license_file.url if after.license_file else (after.repo.url if after.repo else None)
    )
    if before.forge_license is not None and after.forge_license is not None:
        old_ids = (forge_spdx(before), detected_license(before))
        new_ids = (forge_spdx(after), detected_license(after))
        if old_ids != new_ids:
            changes.append(
                Change(
                    project=name,
                    kind=ChangeKind.LICENSE_CHANGED,
                    summary=(
                        f"license {license_label(before, names)} → {license_label(after, names)}"
                    ),
                    before={"forge": old_ids[0], "detected": old_ids[1]},
                    after={"forge": new_ids[0], "detected": new_ids[1]},
                    evidence_url=evidence,
                )
            )
        elif (
            before.license_file is not None
            and after.license_file is not None
            and before.license_file.blob_sha != after.license_file.blob_sha
        ):
            diff = word_diff(before.license_file.text or "", after.license_file.text or "")
            changes.append(
                Change(
                    project=name,
                    kind=ChangeKind.LICENSE_TEXT_CHANGED,
                    summary=(
                        f"{after.license_file.path} text changed; license still "
                        f"{license_label(after, names)}"
                    ),
                    before=before.license_file.blob_sha,
                    after=after.license_file.blob_sha,
                    evidence_url=evidence,
                    details={"path": after.license_file.path, "word_diff": diff},
                )
            )
    changes += _inventory_changes(name, before, after)
    return changes


def _inventory_changes(name: str, before: ProjectSnapshot, after: ProjectSnapshot) -> list[Change]:
    if before.license_inventory is None or after.license_inventory is None:
        return []
    old = {e.path: e.blob_sha for e in before.license_inventory}
    new = {e.path: e.blob_sha for e in after.license_inventory}
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    root = after.license_file.path if after.license_file else None
    # the root file's own edits are license_text_changed / license_changed
    changed = sorted(p for p in set(old) & set(new) if old[p] != new[p] and p != root)
    if not (added or removed or changed):
        return []
    parts = [
        f"{label} {', '.join(paths)}"
        for label, paths in (("added", added), ("removed", removed), ("changed", changed))
        if paths
    ]
    return [
        Change(
            project=name,
            kind=ChangeKind.LICENSE_FILES_CHANGED,
            summary="license files " + "; ".join(parts),
            before=sorted(old),
            after=sorted(new),
            evidence_url=after.repo.url if after.repo else None,
            details={"added": added, "removed": removed, "changed": changed},
        )
    ]


def noassertion_flag(
    name: str, before: ProjectSnapshot | None, after: ProjectSnapshot, names: Names
) -> Flag | None:
    if forge_spdx(after) != NOASSERTION:
        return None
    analysis = analysis_of(after)
    label = label_of(names, after.repo.forge if after.repo else None)
    detail = f"{label} reports NOASSERTION"
    if analysis is not None:
        detail += f"; {noassertion_explanation(analysis, label)}"
    details: dict[str, Any] = {
        "forge": asdict(after.forge_license) if after.forge_license else None
    }
    if analysis is not None:
        details["analysis"] = {
            "spdx_ids": list(analysis.spdx_ids),
            "verdict": analysis.verdict,
            "extra_text": [s.__dict__ for s in analysis.extra_text],
        }
    return Flag(
        project=name,
        kind=FlagKind.LICENSE_NOASSERTION,
        detail=detail,
        new=forge_spdx(before) != NOASSERTION,
        evidence_url=after.license_file.url if after.license_file else None,
        details=details,
    )
