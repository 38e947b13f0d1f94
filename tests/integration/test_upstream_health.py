"""Upstream health from the forge fakes' own dates (GitHub over GraphQL on loopback, a real
database): a repository with no commit and no release or tag for a year is `upstream_dormant`,
an archived one `repo_archived`; the export suggests the catalog's maturity (`dormant`,
`archived`) beside the curated value and never over it."""

from __future__ import annotations

import json
from pathlib import Path

from crawler.config import parse_config
from crawler.export.from_store import export_audit
from crawler.findings import source_names
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.github_state import FakeRelease, FakeRepo
from tests.support.audits import Audits, changes

TOKEN = "ghp_" + "h" * 36


def _repo(name: str, repo_id: int, head: str, release: str | None = None,
          archived: bool = False) -> FakeRepo:  # fmt: skip
    return FakeRepo(
        owner="org", name=name, id=repo_id, archived=archived, license_path=None,
        head_sha=f"{repo_id:x}" * 40, head_date=head,
        releases=[FakeRelease("v1.0", "v1.0", release, release)] if release else [],
    )  # fmt: skip


def test_dormant_and_archived_upstreams_flagged_and_suggested_not_imposed(
    db_url: str, tmp_path: Path
) -> None:
    state = GitHubState(
        repos=[
            _repo("glow", 1, "2024-05-11T08:00:00Z"),  # no tag, no commit since May 2024
            _repo("mlu", 2, "2024-09-18T08:00:00Z", release="2024-01-05T00:00:00Z"),
            _repo("legacy", 3, "2099-01-01T00:00:00Z", archived=True),
            _repo("lively", 4, "2020-01-01T00:00:00Z", release="2099-01-01T00:00:00Z"),
        ]
    )
    names = ("glow", "mlu", "legacy", "lively")
    config = parse_config(
        "projects:\n" + "".join(f"  - name: {n}\n    repo: org/{n}\n" for n in names)
    )
    with FakeGitHub(state) as github:
        audits = Audits(github, db_url, tmp_path, github.env(TOKEN))
        first = audits.audit(config)
        again = audits.audit(config)
        store = audits.store
        health = [
            c for c in changes(first.report, "evidence_url", "details")
            if c[1] in ("upstream_dormant", "repo_archived")
        ]  # fmt: skip
        assert health == [
            ("glow", "upstream_dormant", None, "2024-05-11T08:00:00Z",
             "https://github.com/org/glow",
             {"last_commit": "2024-05-11T08:00:00Z", "last_release": None,
              "days": health[0][5]["days"], "repo": "org/glow"}),
            ("mlu", "upstream_dormant", None, "2024-09-18T08:00:00Z",
             "https://github.com/org/mlu",
             {"last_commit": "2024-09-18T08:00:00Z", "last_release": "2024-01-05T00:00:00Z",
              "days": health[1][5]["days"], "repo": "org/mlu"}),
            ("legacy", "repo_archived", False, True, "https://github.com/org/legacy",
             {"repo": "org/legacy"}),
        ]  # fmt: skip
        assert health[0][5]["days"] >= 365 and health[1][5]["days"] >= 365
        # reported the night it began, then pending: not a change again
        assert [c for c in changes(again.report) if c[1] == "upstream_dormant"] == []
        pending = {(p["project"], p["kind"]) for p in again.report.as_json()["pending"]}
        assert {("glow", "upstream_dormant"), ("mlu", "upstream_dormant")} <= pending

        curated_path = tmp_path / "catalog.json"
        curated = {
            "schema_version": 1, "audit": {"id": 1, "date": "2026-01-01"},
            "projects": [{"id": "glow", "name": "glow", "maturity": "production"}],
            "platforms": [], "integrations": [],
        }  # fmt: skip
        curated_path.write_text(json.dumps(curated), encoding="utf-8")
        labels = {n: s.label for n, s in source_names().items()}
        outcome = export_audit(
            store, config, None, tmp_path / "export", into=curated_path, labels=labels
        )
        audits.close()
    exported = json.loads((tmp_path / "export" / "catalog.json").read_text(encoding="utf-8"))
    suggested = {p["name"]: p.get("maturity_suggestion") for p in exported["projects"]}
    assert suggested == {"glow": "dormant", "mlu": "dormant", "legacy": "archived", "lively": None}
    merged = json.loads(curated_path.read_text(encoding="utf-8"))
    records = {p["name"]: p for p in merged["projects"]}
    assert records["glow"]["maturity"] == "production"  # curated: kept
    assert records["glow"]["maturity_suggestion"] == "dormant"
    assert "maturity" not in records["legacy"]  # a suggestion never becomes the value
    assert outcome.merge_report is not None
    assert outcome.merge_report["suggestions"] == [
        {"path": "$.projects[0].maturity", "id": "glow", "curated": "production",
         "suggested": "dormant"},
        {"path": "$.projects[1].maturity", "id": "mlu", "curated": None,
         "suggested": "dormant"},
        {"path": "$.projects[2].maturity", "id": "legacy", "curated": None,
         "suggested": "archived"},
    ]  # fmt: skip
