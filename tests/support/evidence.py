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
from crawler.config import ProjectSpec
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


# The evidence files the catalog folder's README lists as already elsewhere in ../shared (its
# "Already elsewhere" table), by (repository, path): a file, or a page history whose newest
# revision is the one (history.json lists the revisions oldest first).
ELSEWHERE = {
    ("tile-ai/tilelang", "README.md"): "corpus/tile-ai__tilelang/README.md",
    ("vllm-project/vllm-ascend", "README.md"): "corpus/vllm-project__vllm-ascend/README.md",
    # of the two stored revisions, the later (corpus meta.json): the list without the table
    ("vllm-project/vllm", "docs/getting_started/installation/README.md"):
        "corpus/vllm-project__vllm/docs__getting_started__installation__README.at-010f1fc.md",
    ("flashinfer-ai/flashinfer", "README.md"): "replay/pages/flashinfer-ai__flashinfer/README.md",
    ("ROCm/aiter", "README.md"): "replay/pages/ROCm__aiter/README.md",
    ("flagos-ai/FlagGems", "docs/content/en/overview/platforms.md"):
        "replay/pages/flagos-ai__FlagGems/docs__content__en__overview__platforms.md",
    ("mlc-ai/mlc-llm", "README.md"): "replay/pages/mlc-ai__mlc-llm/README.md",
    ("Deep-Spark/DeepSparkInference", "README.md"):
        "replay/pages/Deep-Spark__DeepSparkInference/README.md",
}  # fmt: skip
# No copy of torch-gcu's README is attributed to EnflameTechnology/torch-gcu; the only one in
# ../shared is a personal repository's (corpus/sunnygui-L__torch-gcu, whose meta.json calls
# it a stand-in and whose README points at Enflame's repository). Served in its place, said so.
STAND_INS = {
    ("EnflameTechnology/torch-gcu", "README.md"): "corpus/sunnygui-L__torch-gcu/README.md",
}


def evidence_text(repository: str, path: str) -> str | None:
    """The text of an evidence file as ../shared holds it (the catalog folder, else the files
    elsewhere, else a stand-in), or None when ../shared has none."""
    found = [e for e in _index() if (e["repository"], e["path"]) == (repository, path)]
    if found:
        return (CATALOG / found[0]["file"]).read_text(encoding="utf-8")
    where = ELSEWHERE.get((repository, path)) or STAND_INS.get((repository, path))
    if where is None:
        return None
    place = SHARED / where
    if place.is_dir():  # a page history: its newest revision
        history = json.loads((place / "history.json").read_text(encoding="utf-8"))
        place = place / history["revisions"][-1]["file"]
    return place.read_text(encoding="utf-8")


@dataclass(frozen=True)
class ServedPages:
    """What a catalog's GitHub pages are served as: (repository, path) → text on the default
    branch, (repository, ref, path) → text on a ref, and the pages ../shared has no file for."""

    files: dict[tuple[str, str], str]
    ref_files: dict[tuple[str, str, str], str]
    unserved: list[str]


def served_pages(projects: Iterable[ProjectSpec]) -> ServedPages:
    """Every page on GitHub the items watch, with the text ../shared holds for it."""
    files: dict[tuple[str, str], str] = {}
    ref_files: dict[tuple[str, str, str], str] = {}
    unserved: list[str] = []
    for spec in projects:
        for page in spec.pages:
            where = page.location or spec.forge
            if page.path is None or where is None or where.source != "github":
                continue
            text = evidence_text(where.path, page.path)
            if text is None:
                unserved.append(f"{spec.name}: {where.path}:{page.path}")
            elif page.ref is not None:
                ref_files[(where.path, page.ref, page.path)] = text
            else:
                files[(where.path, page.path)] = text
    return ServedPages(files, ref_files, unserved)


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
