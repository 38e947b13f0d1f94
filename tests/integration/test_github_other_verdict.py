"""GitHub's "other" verdict in its older shape, ``license: {key: "other", name: "Other",
spdx_id: null}`` (REST) and ``licenseInfo {key: "other", spdxId: null}`` (GraphQL; the schema's
``License.spdxId`` is nullable), means what NOASSERTION means: GitHub found a license file it
could not name. It is recorded as GitHub's verdict and raises ``license_noassertion``, on both
paths, as the GitLab reader maps licensee's "other".

Guards issue 32, defect 5: before, the null ``spdx_id`` read as no verdict at all (no forge
license recorded, no flag)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from tests.support.audits import Audits

TOKEN = "ghp_other_verdict_token_0123456789"
CONFIG = "github: {retry_base_delay: 0}\nprojects:\n  - name: Odd\n    repo: org/odd\n"
# a license GitHub's licensee cannot name: MIT's text with a clause of its own
ODD_TEXT = reference_text("MIT") + "\nThe Software may not be used to train surveillance models.\n"


def _state() -> GitHubState:
    stamp = "2026-10-01T10:00:00Z"
    return GitHubState(
        repos=[
            FakeRepo(
                owner="org",
                name="odd",
                id=7,
                license_key="other",
                license_name="Other",
                spdx_id=None,
                other_spdx_id=None,  # GitHub's older shape: no SPDX id at all
                license_text=ODD_TEXT,
                head_sha="e" * 40,
                head_date=stamp,
                releases=[FakeRelease("v1.0.0", "v1.0.0", stamp, stamp)],
            )
        ]
    )


Harness = Audits[FakeGitHub]


@pytest.fixture(params=["rest", "graphql"])
def harness(request: pytest.FixtureRequest, db_url: str, tmp_path: Path) -> Iterator[Harness]:
    token = TOKEN if request.param == "graphql" else None
    with FakeGitHub(_state(), token=TOKEN, unauth_limit=5000) as server:
        h = Harness(server, db_url, tmp_path, server.env(token))
        yield h
        h.close()


def _get(server: FakeGitHub, path: str, body: bytes | None = None) -> Any:
    request = urllib.request.Request(
        server.base_url + path, data=body, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def test_the_fake_answers_githubs_older_other_shape_on_both_paths() -> None:
    with FakeGitHub(_state(), token=TOKEN) as server:
        rest = _get(server, "/repos/org/odd")["license"]
        query = b'{"query": "{ repository(owner: \\"org\\", name: \\"odd\\") { licenseInfo { key name spdxId } } }"}'  # noqa: E501
        graphql = _get(server, "/graphql", query)["data"]["repository"]["licenseInfo"]
    assert (rest["key"], rest["name"], rest["spdx_id"]) == ("other", "Other", None)
    assert graphql == {"key": "other", "name": "Other", "spdxId": None}


def test_githubs_other_verdict_without_an_spdx_id_is_noassertion(harness: Harness) -> None:
    report = harness.audit(CONFIG).report.as_json()
    row = next(p for p in report["projects"] if p["name"] == "Odd")
    assert (row["status"], row["forge_license"], row["detected_license"]) == (
        "ok",
        "NOASSERTION",
        "MIT",
    )
    flags = [(f["project"], f["kind"], f["new"]) for f in report["flags"]]
    assert flags == [("Odd", "license_noassertion", True)]
    flag = next(f for f in report["flags"] if f["kind"] == "license_noassertion")
    assert flag["detail"].startswith("NOASSERTION per GitHub; ")
    # the verdict is recorded as GitHub said it, with the SPDX id it means
    store = Store(harness.db_url)
    try:
        audit = store.latest_audit()
        assert audit is not None
        stored = store.states_as_of(audit.id, include_own=True)["Odd"].snapshot
    finally:
        store.close()
    assert stored is not None and stored.forge_license is not None
    assert (stored.forge_license.key, stored.forge_license.spdx_id, stored.forge_license.name) == (
        "other",
        "NOASSERTION",
        "Other",
    )
    # the next night: GitHub still says it, the flag is no longer new
    again = harness.audit(CONFIG).report.as_json()
    assert [(f["project"], f["kind"], f["new"]) for f in again["flags"]] == [
        ("Odd", "license_noassertion", False)
    ]
