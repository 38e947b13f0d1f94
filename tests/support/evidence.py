"""The catalog's real evidence files (``../shared/replay/catalog``), looked up through its
``index.json`` and served from the GitHub-shaped fake as the files of their repositories.

The material is read at run time and never copied here; tests skip when it is absent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler_fakes.github import FakeRelease, FakeRepo, GitHubState
from tests.support import SHARED

CATALOG = Path(os.environ.get("CRAWLER_CATALOG_DIR", SHARED / "replay" / "catalog"))
needs_catalog = pytest.mark.skipif(
    not (CATALOG / "index.json").is_file(), reason="../shared/replay/catalog not present"
)


@dataclass(frozen=True)
class Evidence:
    """One evidence file: where it lives upstream, its form, and its text."""

    repository: str
    path: str
    form: str
    file: str

    def text(self) -> str:
        return (CATALOG / self.file).read_text(encoding="utf-8")


@cache
def _index() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads((CATALOG / "index.json").read_text(encoding="utf-8")))


def evidence(repository: str, path: str) -> Evidence:
    found = [e for e in _index() if (e["repository"], e["path"]) == (repository, path)]
    assert len(found) == 1, f"{repository} {path}: {len(found)} entries in index.json"
    e = found[0]
    return Evidence(e["repository"], e["path"], e["form"], e["file"])


def files_of_forms(forms: Iterable[str]) -> list[tuple[str, str]]:
    """(repository, path) of every file whose ``form`` is one of ``forms``."""
    wanted = set(forms)
    return sorted((e["repository"], e["path"]) for e in _index() if e["form"] in wanted)


def github_state(
    files: Mapping[tuple[str, str], str],
    ref_files: Mapping[tuple[str, str, str], str] | None = None,
) -> GitHubState:
    """One fake repository per repository named in ``files`` ((repository, path) → text) and
    ``ref_files`` ((repository, ref, path) → text: a file on another branch or tag)."""
    stamp = "2026-08-01T00:00:00Z"
    repos: dict[str, FakeRepo] = {}
    names = {r for r, _ in files} | {r for r, _, _ in (ref_files or {})}
    for n, repository in enumerate(sorted(names), 1):
        owner, name = repository.split("/")
        repos[repository] = FakeRepo(
            owner=owner,
            name=name,
            id=n,
            license_key="mit",
            spdx_id="MIT",
            license_name="MIT License",
            license_text=reference_text("MIT"),
            head_sha=f"{n:040x}",
            head_date=stamp,
            releases=[FakeRelease("v1", "v1", stamp, stamp)],
        )
    for (repository, path), text in files.items():
        repos[repository].files[path] = text
    for (repository, ref, path), text in (ref_files or {}).items():
        repos[repository].ref_files.setdefault(ref, {})[path] = text
    return GitHubState(repos=list(repos.values()))
