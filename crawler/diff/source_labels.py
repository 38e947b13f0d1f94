"""How the prose of changes and flags names a source: "GitHub", and the sources.yaml key that
points at it (``repo``). Handed in by the caller, so the diff stays pure and forge-neutral."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceNames:
    label: str  # "GitHub"
    project_key: str  # "repo"


Names = Mapping[str, SourceNames]  # registry name → names


def label_of(names: Names, source: str | None) -> str:
    if source is None:
        return "its forge"
    known = names.get(source)
    return known.label if known else source


def key_of(names: Names, source: str | None) -> str:
    known = names.get(source) if source else None
    return known.project_key if known else "its location"
