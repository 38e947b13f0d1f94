"""A repository whose own description says it moved or was superseded (GitHub over GraphQL on
loopback, a real database): `upstream_superseded` with the successor, in report.md's "Links and
upstream health" section, pending until the catalog's maturity settles it, closed when the
description no longer says so, and suggested as the maturity where the upstream stopped. A
hostile description is capped where it is kept and escaped where it is shown."""

from __future__ import annotations

import json
from pathlib import Path

from crawler.audit import rebuild_report
from crawler.config import parse_config
from crawler.export.from_store import export_audit
from crawler.findings import source_names
from crawler.store.pending import open_pending
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.github_state import FakeRelease, FakeRepo
from tests.support.audits import Audits, changes

TOKEN = "ghp_" + "s" * 36
FORK = "Deprecated: this fork is superseded by vllm-project/vllm-accel, use that instead."
MONOREPO = (
    "This repository moved to "
    "https://github.com/gpu-org/gpu-libraries/tree/develop/projects/kernels"
)


def _repo(owner: str, name: str, repo_id: int, description: str | None) -> FakeRepo:
    return FakeRepo(
        owner=owner, name=name, id=repo_id, license_path=None, description=description,
        head_sha=f"{repo_id:x}" * 40, head_date="2026-11-20T08:00:00Z",
        releases=[FakeRelease("v1.0", "v1.0", "2026-11-01T00:00:00Z", "2026-11-01T00:00:00Z")],
    )  # fmt: skip


def _config() -> str:
    return (
        "projects:\n"
        "  - name: vLLM fork\n    repo: acme-labs/vllm-fork\n"
        "  - name: Kernels\n    repo: gpu-org/kernels\n"
        "  - name: Plain\n    repo: org/plain\n"
    )


def test_a_successor_is_reported_pending_and_suggested(db_url: str, tmp_path: Path) -> None:
    state = GitHubState(
        repos=[
            _repo("acme-labs", "vllm-fork", 1, FORK),
            _repo("gpu-org", "kernels", 2, MONOREPO),
            _repo("org", "plain", 3, "Fast kernels; moved by the community to and/or beyond."),
        ]
    )
    config = parse_config(_config())
    with FakeGitHub(state) as github:
        audits = Audits(github, db_url, tmp_path, github.env(TOKEN))
        first = audits.audit(config)
        found = [c for c in changes(first.report, "evidence_url", "details")
                 if c[1] == "upstream_superseded"]  # fmt: skip
        assert found == [
            ("vLLM fork", "upstream_superseded", "acme-labs/vllm-fork", "vllm-project/vllm-accel",
             "https://github.com/acme-labs/vllm-fork",
             {"repo": "acme-labs/vllm-fork", "phrase": "superseded by",
              "successor": "vllm-project/vllm-accel",
              "successor_url": "https://github.com/vllm-project/vllm-accel", "stopped": True,
              "description": FORK}),
            ("Kernels", "upstream_superseded", "gpu-org/kernels",
             "https://github.com/gpu-org/gpu-libraries/tree/develop/projects/kernels",
             "https://github.com/gpu-org/kernels",
             {"repo": "gpu-org/kernels", "phrase": "moved to",
              "successor": "https://github.com/gpu-org/gpu-libraries/tree/develop/projects/kernels",
              "successor_url":
                  "https://github.com/gpu-org/gpu-libraries/tree/develop/projects/kernels",
              "stopped": False, "description": MONOREPO}),
        ]  # fmt: skip
        # crawler report N shows them as the audit's own report did
        again = rebuild_report(audits.store, config, first.audit_id).as_json()["changes"]
        assert [c for c in again if c["kind"] == "upstream_superseded"] == [
            c for c in first.report.as_json()["changes"] if c["kind"] == "upstream_superseded"
        ]
        assert first.report_dir is not None
        markdown = (first.report_dir / "report.md").read_text(encoding="utf-8")
        section = markdown.split("## Links and upstream health", 1)[1].split("\n## ", 1)[0]
        assert section.strip().splitlines()[:2] == [  # URLs in code spans: never links of their own
            "- **vLLM fork** upstream superseded: acme-labs/vllm-fork: its description says: "
            "superseded by vllm-project/vllm-accel — page "
            "`https://github.com/vllm-project/vllm-accel` — suggested maturity 'superseded'",
            "- **Kernels** upstream superseded: gpu-org/kernels: its description says: moved to "
            "`https://github.com/gpu-org/gpu-libraries/tree/develop/projects/kernels` — point "
            "the catalog at its new home",
        ]

        again = audits.audit(config)  # reported once, then pending
        assert [c for c in changes(again.report) if c[1] == "upstream_superseded"] == []
        pending = {(p["project"], p["kind"], p["value"])
                   for p in again.report.as_json()["pending"]}  # fmt: skip
        assert {
            ("vLLM fork", "upstream_superseded", "vllm-project/vllm-accel"),
            ("Kernels", "upstream_superseded",
             "https://github.com/gpu-org/gpu-libraries/tree/develop/projects/kernels"),
        } <= pending  # fmt: skip

        labels = {n: s.label for n, s in source_names().items()}
        export_audit(audits.store, config, None, tmp_path / "export", labels=labels)
        exported = json.loads((tmp_path / "export" / "catalog.json").read_text("utf-8"))
        suggested = {p["name"]: p.get("maturity_suggestion") for p in exported["projects"]}
        # only where the upstream stopped; a move asks for a new link, not a maturity
        assert suggested == {"vLLM fork": "superseded", "Kernels": None, "Plain": None}

        # the upstream takes the words back: the finding closes as fixed
        state.repos[1].description = "GPU kernels."
        github.set_state(state)
        audits.audit(config)
        still = {(i.project, i.kind) for i in open_pending(audits.store)}
        assert ("Kernels", "upstream_superseded") not in still
        assert ("vLLM fork", "upstream_superseded") in still
        audits.close()


def test_a_hostile_description_is_capped_where_kept_and_escaped_where_shown(
    db_url: str, tmp_path: Path
) -> None:
    hostile = (
        "\u202eSuperseded by evil-org/next_gen* <img src=x onerror=alert(1)> "
        "[click](javascript:alert(1)) | --- |" + " A" * 100_000
    )
    state = GitHubState(repos=[_repo("org", "plain", 3, hostile)])
    config = parse_config("projects:\n  - name: Plain\n    repo: org/plain\n")
    with FakeGitHub(state) as github:
        audits = Audits(github, db_url, tmp_path, github.env(TOKEN))
        outcome = audits.audit(config)
        stored = audits.store.states_as_of(outcome.audit_id, include_own=True)["Plain"]
        audits.close()
    repo = stored.snapshot.repo
    assert repo is not None and repo.description is not None
    assert len(repo.description) == 1000 and repo.description.endswith("…")  # capped
    found = outcome.report.as_json()["changes"]
    [change] = [c for c in found if c["kind"] == "upstream_superseded"]
    assert change["after"] == "evil-org/next_gen"
    quoted = change["details"]["description"]
    assert len(quoted) == 300 and "\u202e" not in quoted  # a bidi control is no text
    assert outcome.report_dir is not None
    markdown = (outcome.report_dir / "report.md").read_text(encoding="utf-8")
    assert "\u202e" not in markdown and "<img" not in markdown and "javascript:" not in markdown
    assert (
        "- **Plain** upstream superseded: org/plain: its description says: superseded by "
        "evil-org/next_gen — page `https://github.com/evil-org/next_gen` — suggested maturity "
        "'superseded'"
    ) in markdown
