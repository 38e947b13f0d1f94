"""A project's license cautions, as the snapshot's caution paragraph words them. Pure.

From the catalog's license record: the forge's NOASSERTION (or another verdict) where a root
license file reads otherwise, extra or altered text in that file (its first line quoted), and
separately licensed files bundled in the tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crawler.export.site.text import Part, text, url
from crawler.report import words


def _files(lic: Mapping[str, Any], role: str) -> list[Mapping[str, Any]]:
    files = lic.get("files")
    if not isinstance(files, list):
        return []
    return [f for f in files if isinstance(f, Mapping) and f.get("role") == role]


def cautions(lic: Mapping[str, Any] | None, forge: str) -> tuple[tuple[Part, ...], ...]:
    """The license cautions of one project, as the snapshot's caution paragraph words them."""
    if not lic:
        return ()
    found: list[tuple[Part, ...]] = []
    roots = _files(lic, "root")
    root = roots[0] if roots else None
    root_part = Part(text(root.get("path")), url(root.get("url"))) if root else None
    detected = [text(s) for s in lic.get("detected_spdx_ids") or [] if text(s)]
    forge_says = text(lic.get("forge_verdict"))
    reads_as = Part(" reads as " + " and ".join(detected) + ".")
    if root_part is not None and forge_says == "NOASSERTION":
        verdict = words.forge_verdict(forge, forge_says)
        if detected:
            lead = f"{verdict}, although a root license file exists; "
            found.append((Part(lead), root_part, reads_as))
        else:
            lead = f"{verdict}, and the text of "
            found.append((Part(lead), root_part, Part(" is not recognised.")))
    elif root_part is not None and forge_says and detected and forge_says not in detected:
        verdict = words.forge_verdict(forge, forge_says)
        found.append((Part(f"{verdict}; "), root_part, reads_as))
    extra = lic.get("extra_text")
    if isinstance(extra, Mapping) and extra.get("text"):
        base = " and ".join(detected) or "license"
        where = Part(text(extra.get("path")), root_part.href if root_part else None)
        verb = " alters the " if extra.get("altered") else " carries text beyond the "
        found.append(
            (
                where,
                Part(f"{verb}{base} terms, from line {text(extra.get('line'))}: "),
                Part("“" + text(extra.get("text"), 300) + "”"),
            )
        )
    bundled = _files(lic, "bundled")
    if bundled:
        parts: list[Part] = [Part("Bundles separately licensed files: ")]
        for i, item in enumerate(bundled):
            if i:
                parts.append(Part(", "))
            parts.append(Part(text(item.get("path")), url(item.get("url"))))
            ids = [text(s) for s in item.get("spdx_ids") or [] if text(s)]
            if ids:
                parts.append(Part(" (" + ", ".join(ids) + ")"))
        parts.append(Part("."))
        found.append(tuple(parts))
    return tuple(found)
