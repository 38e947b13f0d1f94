"""Page forms inside the nightly audit: a file read at a branch or tag through every forge, a
list whose label goes away, forms chosen by the content type of ``url:`` pages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from crawler.config import parse_config
from crawler.model import PageSnapshot
from crawler.store import Store
from crawler_fakes.gitea import FakeGitea, GiteaRepo, GiteaState
from crawler_fakes.gitee import FakeGitee
from crawler_fakes.gitee_state import GiteeRepo, GiteeState
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.github_state import mit_repo, release_on
from crawler_fakes.gitlab import FakeGitLab
from crawler_fakes.gitlab_state import GitLabProject, GitLabState
from crawler_fakes.pages import FakePageServer
from tests.support.audits import Audits

BRANCH = "vllm/last-good-commit"
ON_BRANCH = "14617c2b6c1257ac0d6c7b5e05b195ca30013827\n"
ON_DEFAULT = "ffffffffffffffffffffffffffffffffffffffff\n"
STAMP = "2026-10-01T00:00:00Z"
TOKEN = "ghp_" + "t" * 36


@contextmanager
def _audits(server: Any, db_url: str, tmp: Path, token: str | None) -> Iterator[Audits[Any]]:
    env = server.env(token) if hasattr(server, "env") else {}
    audits = Audits(server, db_url, tmp, env)
    try:
        yield audits
    finally:
        audits.close()


def _pages(store: Store, audit_id: int, project: str) -> dict[str, PageSnapshot]:
    snapshot = store.states_as_of(audit_id, include_own=True)[project].snapshot
    return {page.name: page for page in snapshot.pages}


def _files(on_branch: str) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    path = "VLLM_STABLE_COMMIT"
    return {path: ON_DEFAULT}, {BRANCH: {path: on_branch}}


def _github(on_branch: str) -> GitHubState:
    files, ref_files = _files(on_branch)
    repo = mit_repo("org", "plugin", 1, [release_on("v1", STAMP)], files=files,
                    ref_files=ref_files)  # fmt: skip
    return GitHubState(repos=[repo])


def _gitee(on_branch: str) -> GiteeState:
    files, ref_files = _files(on_branch)
    return GiteeState(repos=[GiteeRepo("org", "plugin", 1, head_sha="a" * 40, head_date=STAMP,
                                       files=files, ref_files=ref_files)])  # fmt: skip


def _gitlab(on_branch: str) -> GitLabState:
    files, ref_files = _files(on_branch)
    return GitLabState(projects=[GitLabProject("org/plugin", 1, head_sha="b" * 40,
                                               head_date=STAMP, files=files,
                                               ref_files=ref_files)])  # fmt: skip


def _gitea(on_branch: str) -> GiteaState:
    files, ref_files = _files(on_branch)
    return GiteaState(repos=[GiteaRepo("org", "plugin", 1, head_sha="c" * 40, head_date=STAMP,
                                       files=files, ref_files=ref_files)])  # fmt: skip


Forge = tuple[str, Callable[[str], Any], Callable[[Any], AbstractContextManager[Any]], str | None]
FORGES: dict[str, Forge] = {
    "github rest": ("repo", _github, lambda s: FakeGitHub(s, unauth_limit=5000), None),
    "github graphql": ("repo", _github, lambda s: FakeGitHub(s, token=TOKEN), TOKEN),
    "gitee": ("gitee", _gitee, lambda s: FakeGitee(s), None),
    "gitlab": ("gitlab", _gitlab, lambda s: FakeGitLab(s), None),
    "gitea": ("gitea", _gitea, lambda s: FakeGitea(s), None),
}
# where each forge's answer puts a file of a branch (the evidence link)
BLOB = {
    "github rest": f"/org/plugin/blob/{BRANCH}/VLLM_STABLE_COMMIT",
    "github graphql": f"/org/plugin/blob/{BRANCH}/VLLM_STABLE_COMMIT",
    "gitee": f"/org/plugin/blob/{BRANCH}/VLLM_STABLE_COMMIT",
    "gitlab": f"/org/plugin/-/blob/{BRANCH}/VLLM_STABLE_COMMIT",
    "gitea": f"/org/plugin/src/branch/{BRANCH}/VLLM_STABLE_COMMIT",
}


@pytest.mark.parametrize("forge", sorted(FORGES))
def test_a_path_page_is_read_at_its_ref_through_every_forge(
    forge: str, db_url: str, tmp_path: Path
) -> None:
    """A path: page was read from the default branch only: a pin kept on a branch of its own
    (vLLM Gaudi's last good vLLM commit) could not be watched."""
    key, state, serve, token = FORGES[forge]
    page = {"name": "stable", "path": "VLLM_STABLE_COMMIT", "ref": BRANCH,
            "pins": {"commit": r"\b([0-9a-f]{40})\b"}}  # fmt: skip
    project = {"name": "Plugin", key: "org/plugin", "pages": [page]}
    config = parse_config(yaml.safe_dump({"projects": [project]}))
    with serve(state(ON_BRANCH)) as server, _audits(server, db_url, tmp_path, token) as audits:
        first = audits.audit(config)
        (read,) = _pages(audits.store, first.audit_id, "Plugin").values()
        assert read.pins == (("commit", ON_BRANCH.strip()),)
        assert read.url.endswith(BLOB[forge])
        server.set_state(state("0123456789abcdef0123456789abcdef01234567\n"))
        second = audits.audit(config)
    changes = [c for c in second.report.as_json()["changes"] if c["kind"] == "pin_changed"]
    assert [(c["before"], c["after"], c["evidence_url"]) for c in changes] == [
        (ON_BRANCH.strip(), "0123456789abcdef0123456789abcdef01234567", read.url)
    ]


LISTS = """# Plugin

## Compatibility

Supported Platforms:

- Linux

{hardware}:

- NVIDIA GPUs (Compute Capability 8.0+)
- AMD GPUs (ROCm 6.2+)
"""

LIST_CONFIG = """
settings: {{allow_private_addresses: true}}
projects:
  - name: Vendor
    homepage: https://vendor.example
    pages:
      - name: compatibility
        url: {site}/README.md
        tables:
          - name: hardware
            heading: Compatibility
            items: list
            labels: [Supported Hardware]
"""


def test_a_label_no_longer_there_is_an_error_never_every_item_removed(
    db_url: str, tmp_path: Path
) -> None:
    with FakePageServer() as site, _audits(site, db_url, tmp_path, None) as audits:
        config = parse_config(LIST_CONFIG.format(site=site.base_url))
        outcomes = []
        for label in ("Supported Hardware", "Hardware supported", "Supported Hardware"):
            site.set_page("/README.md", LISTS.format(hardware=label).encode(), "text/markdown")
            outcomes.append(audits.audit(config))
        kept = _pages(audits.store, outcomes[1].audit_id, "Vendor")["compatibility"]
    second, third = (o.report.as_json() for o in outcomes[1:])
    assert [e["error"] for e in second["errors"]] == [
        "table 'hardware': page layout changed: label 'Supported Hardware' not found; the "
        "labels present: 'Supported Platforms', 'Hardware supported'"
    ]
    assert [c["kind"] for c in second["changes"]] == []
    assert [row[0] for row in kept.tables[0].rows] == [
        "AMD GPUs (ROCm 6.2+)", "NVIDIA GPUs (Compute Capability 8.0+)"
    ]  # fmt: skip
    assert (third["errors"], [c["kind"] for c in third["changes"]]) == ([], [])


URL_CONFIG = """
settings: {{allow_private_addresses: true}}
projects:
  - name: Vendor
    homepage: https://vendor.example
    pages:
      - name: matrix
        url: {site}/support/matrix
        tables: [{{name: matrix, key: [Model]}}]
      - name: notes
        url: {site}/release/notes
        tables: [{{name: versions, heading: Supported versions, key: [Package]}}]
      - name: pins
        url: {site}/ci/versions
        form: keyvalue
        pins: [CNTOOLKIT_VERSION]
"""

NOTES = """Notes
=====

Supported versions
------------------

=========  =======
Package    Version
=========  =======
vllm       0.16.0
protobuf   >= 3.20
=========  =======
"""


def test_url_pages_are_read_as_the_form_their_content_type_or_option_says(
    db_url: str, tmp_path: Path
) -> None:
    with FakePageServer() as site, _audits(site, db_url, tmp_path, None) as audits:
        site.set_page("/support/matrix", b"Model,UnitTest\nQwen/Qwen3-4B,\xe2\x9c\x85 Passing\n",
                      "text/csv", charset="utf-8")  # fmt: skip
        site.set_page("/release/notes", NOTES.encode(), "text/x-rst")
        site.set_page("/ci/versions", b"# MLU\nCNTOOLKIT_VERSION=4.7.6-1\n", "text/plain")
        config = parse_config(URL_CONFIG.format(site=site.base_url))
        outcome = audits.audit(config)
        pages = _pages(audits.store, outcome.audit_id, "Vendor")
    assert outcome.report.as_json()["errors"] == []
    assert pages["matrix"].tables[0].rows == (("Qwen/Qwen3-4B", "yes Passing"),)
    assert pages["notes"].tables[0].rows == (("protobuf", ">= 3.20"), ("vllm", "0.16.0"))
    assert pages["pins"].pins == (("CNTOOLKIT_VERSION", "4.7.6-1"),)


ALL_ITEMS = LIST_CONFIG.replace("            labels: [Supported Hardware]\n", "")


def test_a_list_change_reads_as_items_in_the_report(db_url: str, tmp_path: Path) -> None:
    before = LISTS.format(hardware="Supported Hardware") + "- CPUs\n"
    after = (
        before.replace("ROCm 6.2+", "ROCm 7.0+")
        .replace("- CPUs\n", "")
        .replace("- Linux\n", "- Linux\n- Windows\n")
    )
    with FakePageServer() as site, _audits(site, db_url, tmp_path, None) as audits:
        config = parse_config(ALL_ITEMS.format(site=site.base_url))
        for body in (before, after):
            site.set_page("/README.md", body.encode(), "text/markdown")
            outcome = audits.audit(config)
    assert outcome.report_dir is not None
    text = (outcome.report_dir / "report.md").read_text(encoding="utf-8")
    start = text.index("- **Vendor** support table changed")
    assert text[start:].split("\n\n")[0].splitlines()[1:] == [
        "  - items added: Windows (under Supported Platforms)",
        "  - items removed: CPUs (under Supported Hardware)",
        "  - items reworded: AMD GPUs (ROCm 6.2+) → AMD GPUs (ROCm 7.0+)",
    ]
    assert (
        text[start:]
        .splitlines()[0]
        .startswith(
            "- **Vendor** support table changed: compatibility: list 'hardware': 1 item added "
            "('Windows' under 'Supported Platforms'); 1 item removed ('CPUs' under 'Supported "
            "Hardware'); 1 item reworded ('AMD GPUs (ROCm 6.2+)' → 'AMD GPUs (ROCm 7.0+)')"
        )
    )
