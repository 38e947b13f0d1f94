"""Replaying real page histories (``../shared/replay/pages``) night by night through the
loopback fakes into a real database, and reading back what each night's report says.

The material is read at run time and never copied here; tests skip when it is absent.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.config import Config
from crawler.fakes.github import FakeRelease, FakeRepo, GitHubState
from crawler.store import Store

REPLAY = Path(
    os.environ.get(
        "CRAWLER_REPLAY_DIR", Path(__file__).resolve().parents[1] / ".." / "shared" / "replay"
    )
)
PAGES = REPLAY / "pages"
needs_replay = pytest.mark.skipif(not PAGES.is_dir(), reason="../shared/replay not present")
PAGE_KINDS = ("table_changed", "pin_changed", "page_changed")


@dataclass(frozen=True)
class Revision:
    night: int  # 1-based
    path: Path
    commit: str
    date: str

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")


def revisions(history: str) -> list[Revision]:
    """The revisions of one history (``owner__repo/file``), oldest first."""
    folder = PAGES / history
    meta = json.loads((folder / "history.json").read_text(encoding="utf-8"))
    return [
        Revision(n, folder / r["file"], r["commit"], r["date"])
        for n, r in enumerate(meta["revisions"], 1)
    ]


def _row_key(row: dict[str, str], key_columns: list[str]) -> str:
    return " / ".join(row[c] for c in key_columns)


def observe(report: dict[str, Any], project: str) -> dict[str, Any]:
    """One night of one project, as a person would list it: the page error (up to its first
    ';'), and per table the keys of rows added and removed, the (key, column) of each changed
    cell and the columns added and removed; per pin (before, after); the watched text as it
    now reads. Empty when nothing changed."""
    seen: dict[str, Any] = {}
    errors = [e["error"] for e in report["errors"] if e["project"] == project]
    if errors:
        seen["error"] = "; ".join(e.split(";")[0] for e in errors)
    for change in report["changes"]:
        if change["project"] != project or change["kind"] not in PAGE_KINDS:
            continue
        details = change["details"]
        if change["kind"] == "table_changed":
            keys = details["key_columns"]
            table: dict[str, Any] = {}
            for part in ("rows_added", "rows_removed"):
                if details[part]:
                    table[part] = sorted(_row_key(r, keys) for r in details[part])
            if details["cells_changed"]:
                table["cells"] = sorted(
                    (" / ".join(c["key"].values()), c["column"]) for c in details["cells_changed"]
                )
            for part in ("columns_added", "columns_removed"):
                if details[part]:
                    table[part] = sorted(details[part])
            seen[details["table"]] = table
        elif change["kind"] == "pin_changed":
            seen[f"pin {details['pin']}"] = (change["before"], change["after"])
        else:
            seen["text"] = change["after"]
    return seen


def other_kinds(report: dict[str, Any], project: str) -> list[str]:
    """Change kinds of the project that are not about its pages."""
    return [
        c["kind"]
        for c in report["changes"]
        if c["project"] == project and c["kind"] not in PAGE_KINDS
    ]


@dataclass
class Nights:
    """One audit per night, against one store (the page is put in place before each)."""

    store: Store
    reports: Path

    def audit(self, config: Config, env: dict[str, str]) -> dict[str, Any]:
        outcome = run_audit(config, self.store, self.reports, env=env, sleep=lambda _s: None)
        return outcome.report


def github_repo(owner: str, name: str, revision: Revision, path: str) -> GitHubState:
    """A repository whose file ``path`` holds tonight's revision (and whose head is its
    commit); everything else stays the same night after night."""
    stamp = "2025-01-01T00:00:00Z"
    return GitHubState(
        repos=[
            FakeRepo(
                owner=owner,
                name=name,
                id=1,
                license_key="mit",
                spdx_id="MIT",
                license_name="MIT License",
                license_text=reference_text("MIT"),
                head_sha=revision.commit,
                head_date=stamp,
                files={path: revision.text()},
                releases=[FakeRelease("v1", "v1", stamp, stamp)],
            )
        ]
    )
