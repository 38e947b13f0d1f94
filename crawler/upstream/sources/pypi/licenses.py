"""The license a PyPI package declares, as an SPDX expression, and where it was declared.

In order of trust (PEP 639):

1. ``info.license_expression`` (the ``License-Expression`` core metadata field);
2. the ``License ::`` trove classifiers, mapped to SPDX ids with ScanCode's own rules for them
   (the ``pypi_*.RULE`` files of the installed ``licensedcode-data`` package, each the text of
   one classifier and its ScanCode license key; the key's ``.LICENSE`` file gives the SPDX id).
   No table is typed here. Following PEP 639's appendix "Mapping License Classifiers to SPDX
   Identifiers", nothing is inferred from a classifier that names no version or variant, from
   a generic one (proprietary, public domain: no SPDX license id), or from several license
   classifiers at once, whose relation (AND or OR) is unknown;
3. ``info.license`` (free text): an SPDX expression, or a license name the license data lists
   ("Apache License, Version 2.0", "New BSD"); any other text is kept, quoted and capped, as
   an unrecognised declaration (source ``license_text``). Free text never raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from crawler.analysis.license_names import one_line, read_declared, spdx_expression
from crawler.analysis.license_templates import data_dir

LICENSE_PREFIX = "License ::"
MAX_EXPRESSION = 200

# PEP 639, appendix "Mapping License Classifiers to SPDX Identifiers": tools MUST NOT infer a
# License-Expression from these, which name a license without its version or variant.
AMBIGUOUS_CLASSIFIERS = frozenset(
    {
        "License :: OSI Approved :: Academic Free License (AFL)",
        "License :: OSI Approved :: Apache Software License",
        "License :: OSI Approved :: Apple Public Source License",
        "License :: OSI Approved :: Artistic License",
        "License :: OSI Approved :: BSD License",
        "License :: OSI Approved :: GNU Affero General Public License v3",
        "License :: OSI Approved :: GNU Free Documentation License (FDL)",
        "License :: OSI Approved :: GNU General Public License (GPL)",
        "License :: OSI Approved :: GNU General Public License v2 (GPLv2)",
        "License :: OSI Approved :: GNU General Public License v3 (GPLv3)",
        "License :: OSI Approved :: GNU Lesser General Public License v2 (LGPLv2)",
        "License :: OSI Approved :: GNU Lesser General Public License v2 or later (LGPLv2+)",
        "License :: OSI Approved :: GNU Lesser General Public License v3 (LGPLv3)",
        "License :: OSI Approved :: GNU Library or Lesser General Public License (LGPL)",
    }
)

_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9.+_-]*$")


def _frontmatter(text: str) -> tuple[dict[str, str], str]:
    """ScanCode's ``---``-delimited YAML-ish header (flat keys only) and the body after it."""
    if not text.startswith("---"):
        return {}, text
    _, header, body = text.split("---", 2)
    meta: dict[str, str] = {}
    for line in header.splitlines():
        if line[:1].isalpha() and ":" in line:
            key, _, value = line.partition(":")
            meta[key.strip()] = value.strip()
    return meta, body


@cache
def _spdx_of_key(key: str) -> str | None:
    path = data_dir() / f"{key}.LICENSE"
    try:
        meta, _ = _frontmatter(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    spdx = meta.get("spdx_license_key") or ""
    return spdx if spdx and not spdx.startswith("LicenseRef-") else None


@cache
def classifier_map() -> dict[str, str]:
    """Classifier text → SPDX id, from ScanCode's PyPI classifier rules."""
    rules: Path = data_dir().parent / "rules"
    mapping: dict[str, str] = {}
    for path in sorted(rules.glob("pypi_*.RULE")):
        meta, body = _frontmatter(path.read_text(encoding="utf-8"))
        classifier = body.strip().removeprefix("Classifier:").strip()
        key = meta.get("license_expression", "")
        if (
            meta.get("is_license_tag") != "yes"
            or not classifier.startswith(LICENSE_PREFIX)
            or "\n" in classifier
            or not _KEY_RE.match(key)
        ):
            continue
        spdx = _spdx_of_key(key)
        if spdx is not None:
            mapping.setdefault(classifier, spdx)
    return mapping


def _parents_dropped(classifiers: list[str]) -> list[str]:
    """PEP 639: a classifier whose components all lead another one is its parent; ignore it."""
    parts = [tuple(p.strip() for p in c.split("::")) for c in classifiers]
    kept = []
    for index, mine in enumerate(parts):
        if not any(len(o) > len(mine) and o[: len(mine)] == mine for o in parts if o != mine):
            kept.append(classifiers[index])
    return kept


def from_classifiers(classifiers: Iterable[Any]) -> str | None:
    found = sorted({c.strip() for c in classifiers if isinstance(c, str)})
    licenses = _parents_dropped([c for c in found if c.startswith(LICENSE_PREFIX)])
    if len(licenses) != 1 or licenses[0] in AMBIGUOUS_CLASSIFIERS:
        return None
    return classifier_map().get(licenses[0])


def normalized(expression: str) -> str | None:
    """The expression in SPDX's own spelling, or None when it is not a valid SPDX expression.
    Never raises."""
    return spdx_expression(expression)


def _clean(text: str) -> str:
    """An invalid expression kept as declared: one line, capped."""
    return one_line(text, MAX_EXPRESSION)


def declared_license(info: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(license, where it was declared) from the JSON API's ``info`` object."""
    expression = info.get("license_expression")
    if isinstance(expression, str) and expression.strip():
        # PyPI validates it on upload; an expression it let through is still reported as is
        return normalized(expression) or _clean(expression), "license_expression"
    classifiers = info.get("classifiers")
    spdx = from_classifiers(classifiers if isinstance(classifiers, list) else ())
    if spdx is not None:
        return spdx, "classifiers"
    declared = read_declared(info.get("license"))
    if declared.spdx is not None:
        return declared.spdx, "license"
    if declared.text is not None:  # kept, quoted, as an unrecognised declaration
        return declared.label, "license_text"
    return None, None
