"""License facets: the forge's verdict beside our reading of the root license file, what
changed in it, and the NOASSERTION flag. Pure."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from crawler.diff.source_labels import Names
from crawler.model import Change, ChangeKind, Flag, FlagKind, LicenseAnalysis, ProjectSnapshot

# crawler.analysis.license_names (license-expression's SPDX tables) and crawler.analysis.licenses
# (the license engine, its patterns) are imported where a license is compared or its text
# changed: an unchanged night needs neither (some 25 ms of every start otherwise).

NOASSERTION = "NOASSERTION"


def analysis_of(snapshot: ProjectSnapshot | None) -> LicenseAnalysis | None:
    if snapshot is None or snapshot.license_file is None:
        return None
    return snapshot.license_file.analysis


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
    if forge == ours:
        return True
    from crawler.analysis.license_names import same_license

    return same_license(forge, ours) is True


def _label_facts(snapshot: ProjectSnapshot) -> dict[str, Any]:
    facts = license_label_facts(snapshot)
    return asdict(facts) if facts else {}


def _carries_more(analysis: LicenseAnalysis | None) -> bool:
    return analysis is not None and analysis.verdict in ("match_with_extra_text", "modified")


@dataclass(frozen=True)
class LicenseLabelFacts:
    """What the catalog's license column says of a project, as facts (worded by
    ``crawler.report.words.license_label``)."""

    forge: str | None  # the forge's SPDX id, NOASSERTION, or None when it gave none
    detected: str | None  # our reading of the root license file
    extra_text: bool  # the file carries more than the license
    license_file: bool  # a root license file was found
    forge_name: str | None  # the source serving the repository (a registry name)
    forge_answered: bool  # the forge was asked and answered (even with no license)


def license_label_facts(snapshot: ProjectSnapshot | None) -> LicenseLabelFacts | None:
    if snapshot is None:
        return None
    return LicenseLabelFacts(
        forge=forge_spdx(snapshot),
        detected=detected_license(snapshot),
        extra_text=_carries_more(analysis_of(snapshot)),
        license_file=snapshot.license_file is not None,
        forge_name=snapshot.repo.forge if snapshot.repo else None,
        forge_answered=snapshot.forge_license is not None,
    )


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
                    before={"forge": old_ids[0], "detected": old_ids[1]},
                    after={"forge": new_ids[0], "detected": new_ids[1]},
                    evidence_url=evidence,
                    details={
                        "label_before": _label_facts(before),
                        "label_after": _label_facts(after),
                    },
                )
            )
        elif (
            before.license_file is not None
            and after.license_file is not None
            and before.license_file.blob_sha != after.license_file.blob_sha
        ):
            from crawler.analysis.licenses import word_diff

            diff = word_diff(before.license_file.text or "", after.license_file.text or "")
            changes.append(
                Change(
                    project=name,
                    kind=ChangeKind.LICENSE_TEXT_CHANGED,
                    before=before.license_file.blob_sha,
                    after=after.license_file.blob_sha,
                    evidence_url=evidence,
                    details={
                        "path": after.license_file.path,
                        "word_diff": diff,
                        "label_after": _label_facts(after),
                    },
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
    return [
        Change(
            project=name,
            kind=ChangeKind.LICENSE_FILES_CHANGED,
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
    details: dict[str, Any] = {
        "forge": asdict(after.forge_license) if after.forge_license else None,
        "source": after.repo.forge if after.repo else None,
    }
    if analysis is not None:
        details["analysis"] = {
            "spdx_ids": list(analysis.spdx_ids),
            "verdict": analysis.verdict,
            "extra_text": [asdict(s) for s in analysis.extra_text],
        }
    return Flag(
        project=name,
        kind=FlagKind.LICENSE_NOASSERTION,
        new=forge_spdx(before) != NOASSERTION,
        evidence_url=after.license_file.url if after.license_file else None,
        details=details,
    )
