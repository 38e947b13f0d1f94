"""A repository whose description names no successor but whose README's top does (GitHub over
GraphQL on loopback, a real database): the README is read only for an archived or dormant
repository, conditionally (an unchanged night is a 304), and a README that could not be read
keeps the successor it named: a failure never closes the finding.

Guards the gap "a repository whose README says it moved" (docs/links.md): before, only the
description was read, and none of these repositories was reported."""

from __future__ import annotations

from pathlib import Path

from crawler.config import parse_config
from crawler.store.pending import open_pending
from crawler_fakes.faults import FaultPlan, FaultRule
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.github_state import FakeRelease, FakeRepo
from tests.support.audits import Audits, changes

TOKEN = "ghp_" + "r" * 36
# modelled on HabanaAI's vLLM fork, superseded by vllm-project/vllm-gaudi (not its exact words)
FORK_README = (
    "> [!WARNING]\n"
    "> This fork is no longer maintained: it is superseded by\n"
    "> [vllm-gaudi](https://github.com/vllm-project/vllm-gaudi), the vLLM plugin for Gaudi.\n"
    "\n"
    '<p align="center"><img src="docs/logo.png" alt="vLLM"></p>\n'
    "\n"
    "# vLLM\n"
    "\n"
    "Easy, fast, and cheap LLM serving. Built on PyTorch; replaced by nothing.\n"
    "\n"
    "## Installation\n"
    "\n"
    "Our docs moved to https://docs.vllm.ai (a move of the docs, not of the project).\n"
)
DORMANT_README = (
    "# torch_x\n"
    "\n"
    "**Development continues at [accel/torch_y](https://github.com/accel/torch_y).**\n"
    "\n"
    "## Build\n"
    "\n"
    "```sh\n"
    "pip install torch  # replaced by torch_y in new code\n"
    "```\n"
)
LIVELY_README = "# lively\n\n> This project moved to org/elsewhere.\n"
DESCRIPTION = "A high-throughput and memory-efficient inference and serving engine for LLMs"
LONG_AGO = "2024-05-11T00:00:00Z"  # Glow's last commit: dormant
README_PATHS = {
    "/repos/HabanaAI/vllm-fork/contents/README.md",
    "/repos/accel/torch_x/contents/README.md",
}


def _repo(
    owner: str,
    name: str,
    repo_id: int,
    readme: str,
    *,
    archived: bool = False,
    head_date: str = "2026-11-20T08:00:00Z",
    released: str | None = "2026-11-01T00:00:00Z",
) -> FakeRepo:
    return FakeRepo(
        owner=owner, name=name, id=repo_id, license_path=None, archived=archived,
        description=DESCRIPTION if repo_id == 1 else None,
        head_sha=f"{repo_id:x}" * 40, head_date=head_date, files={"README.md": readme},
        releases=[FakeRelease("v1.0", "v1.0", released, released)] if released else [],
    )  # fmt: skip


CONFIG = parse_config(
    "projects:\n"
    "  - name: vLLM fork\n    repo: HabanaAI/vllm-fork\n"
    "  - name: torch_x\n    repo: accel/torch_x\n"
    "  - name: Lively\n    repo: org/lively\n"
)


def _readme_requests(github: FakeGitHub) -> list[tuple[str, int, bool]]:
    return sorted(
        (r.path, r.status, r.conditional) for r in github.requests if r.path.endswith("README.md")
    )


def test_a_readme_names_the_successor_of_an_archived_or_dormant_repository(
    db_url: str, tmp_path: Path
) -> None:
    state = GitHubState(
        repos=[
            _repo("HabanaAI", "vllm-fork", 1, FORK_README, archived=True),
            _repo("accel", "torch_x", 2, DORMANT_README, head_date=LONG_AGO, released=None),
            _repo("org", "lively", 3, LIVELY_README),  # lively: its README is never read
        ]
    )
    with FakeGitHub(state) as github:
        audits = Audits(github, db_url, tmp_path, github.env(TOKEN))
        first = audits.audit(CONFIG)
        # one README request each for the archived and the dormant repository, none for the other
        assert _readme_requests(github) == [(path, 200, False) for path in sorted(README_PATHS)]
        found = [c for c in changes(first.report, "evidence_url", "details")
                 if c[1] == "upstream_superseded"]  # fmt: skip
        assert found == [
            ("vLLM fork", "upstream_superseded", "HabanaAI/vllm-fork",
             "https://github.com/vllm-project/vllm-gaudi",
             "https://github.com/HabanaAI/vllm-fork/blob/main/README.md",
             {"repo": "HabanaAI/vllm-fork", "phrase": "superseded by",
              "successor": "https://github.com/vllm-project/vllm-gaudi",
              "successor_url": "https://github.com/vllm-project/vllm-gaudi", "stopped": True,
              "description": DESCRIPTION, "said_in": "readme",
              "readme_url": "https://github.com/HabanaAI/vllm-fork/blob/main/README.md",
              "readme": "[!WARNING] This fork is no longer maintained: it is superseded by "
                        "[vllm-gaudi](https://github.com/vllm-project/vllm-gaudi), the vLLM "
                        "plugin for Gaudi."}),
            ("torch_x", "upstream_superseded", "accel/torch_x",
             "https://github.com/accel/torch_y",
             "https://github.com/accel/torch_x/blob/main/README.md",
             {"repo": "accel/torch_x", "phrase": "development continues at",
              "successor": "https://github.com/accel/torch_y",
              "successor_url": "https://github.com/accel/torch_y", "stopped": False,
              "description": "", "said_in": "readme",
              "readme_url": "https://github.com/accel/torch_x/blob/main/README.md",
              "readme": "Development continues at [accel/torch_y]"
                        "(https://github.com/accel/torch_y)."}),
        ]  # fmt: skip
        assert first.report_dir is not None
        markdown = (first.report_dir / "report.md").read_text(encoding="utf-8")
        assert (
            "- **vLLM fork** upstream superseded: HabanaAI/vllm-fork: its README says: "
            "superseded by `https://github.com/vllm-project/vllm-gaudi` — suggested maturity "
            "'superseded'"
        ) in markdown

        # an unchanged night: the same two README requests, conditional, answered 304
        github.reset_log()
        second = audits.audit(CONFIG)
        assert _readme_requests(github) == [(path, 304, True) for path in sorted(README_PATHS)]
        assert [c for c in changes(second.report) if c[1] == "upstream_superseded"] == []

        # the README cannot be read tonight: the finding stays pending (errors are not findings)
        github.faults = FaultPlan(rules=[FaultRule("status_500", path="README", times=100)])
        github.reset_log()
        audits.audit(CONFIG)
        github.faults = None
        assert {(r.path, r.fault) for r in github.requests if r.path.endswith("README.md")} == {
            (path, "status_500") for path in README_PATHS
        }
        pending = {(i.project, i.kind) for i in open_pending(audits.store)}
        assert {("vLLM fork", "upstream_superseded"), ("torch_x", "upstream_superseded")} <= (
            pending
        )

        # the README no longer says so: the finding closes as fixed
        state.repos[1].files = {"README.md": "# torch_x\n\nA small library.\n"}
        github.set_state(state)
        audits.audit(CONFIG)
        pending = {(i.project, i.kind) for i in open_pending(audits.store)}
        assert ("torch_x", "upstream_superseded") not in pending
        assert ("vLLM fork", "upstream_superseded") in pending
        audits.close()
