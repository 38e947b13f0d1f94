"""Real recorded forge answers (../shared/replay) served through the loopback fakes, audited end
to end into a real database. The material is read at run time, never copied here; each test
asserts only what its recording shows."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.audit import AuditOutcome, run_audit
from crawler.config import parse_config
from crawler.report.json_report import validate_report
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, FakeRelease, FakeRepo, GitHubState
from crawler_fakes.replay import Recordings
from tests.conftest import SHARED

REPLAY = Path(os.environ.get("CRAWLER_REPLAY_DIR", SHARED / "replay"))
needs_replay = pytest.mark.skipif(not REPLAY.is_dir(), reason="../shared/replay not present")
pytestmark = needs_replay

TOKEN = "ghp_replay_token_value_0123456789"
ORIGIN = "https://api.github.com"


def recording(name: str) -> dict[str, Any]:
    return dict(json.loads((REPLAY / "github" / name).read_text(encoding="utf-8")))


def recorded_body(name: str, url_end: str) -> Any:
    """The body of the recording's first exchange whose URL ends with ``url_end``."""
    return next(e["body"] for e in recording(name)["exchanges"] if e["url"].endswith(url_end))


def _repo(full_name: str, repo_id: int, **fields: Any) -> FakeRepo:
    owner, name = full_name.split("/")
    fields.setdefault("head_sha", f"{repo_id:040x}")
    fields.setdefault("head_date", "2025-01-01T00:00:00Z")
    return FakeRepo(owner=owner, name=name, id=repo_id, license_text=None, **fields)


def _run(db_url: str, tmp: Path, config: str, env: dict[str, str]) -> AuditOutcome:
    """One audit of ``config`` against the servers ``env`` points at, its report validated."""
    store = Store(db_url)
    try:
        outcome = run_audit(
            parse_config(config), store, tmp / "reports", env=env, sleep=lambda _s: None
        )
    finally:
        store.close()
    validate_report(outcome.report.as_json())
    return outcome


def _audit(
    server: FakeGitHub, db_url: str, tmp: Path, config: str, token: str | None
) -> AuditOutcome:
    return _run(db_url, tmp, config, server.env(token))


def _rows(outcome: AuditOutcome) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in outcome.report.as_json()["projects"]}


# ---------------------------------------------------------------- GitHub: releases and "latest"

LAZY_RELEASES = "LazyRepository.testGetReleases@381a68adc.json"
LAZY_LATEST = "LazyRepository.testGetLatestRelease@381a68adc.json"
FORK = "gh-user/PyGithub"  # recorded as "gh_user", a placeholder no GitHub login can be
FORK_CONFIG = f"github: {{retry_base_delay: 0}}\nprojects:\n  - name: Fork\n    repo: {FORK}\n"


def _fork_state() -> GitHubState:
    """The repository of the recording, its releases as the recorded list shows them."""
    listed = recorded_body(LAZY_RELEASES, "/releases")
    releases = [
        FakeRelease(
            r["tag_name"],
            r["name"],
            r["published_at"],
            r["created_at"],
            r["prerelease"],
            r["draft"],
        )
        for r in listed
    ]
    return GitHubState(repos=[_repo(FORK, 498790722, releases=releases)])


@pytest.mark.parametrize("shown", ["highest_version", "newest_final"])
@pytest.mark.parametrize("mode", ["rest", "graphql"])
def test_the_release_published_last_is_not_the_row_by_version_order_nor_by_githubs_mark(
    db_url: str, tmp_path: Path, mode: str, shown: str
) -> None:
    """Recorded: v1.50 was published 54 s after v1.55, and /releases/latest answers v1.55.
    Version order (the default) and GitHub's mark (``release_shown: newest_final``) both show
    v1.55; only the second reading asks REST for the mark."""
    recorded = Recordings(ORIGIN)
    for name in (LAZY_RELEASES, LAZY_LATEST):
        for e in recording(name)["exchanges"]:
            url = e["url"].replace("/gh_user/", "/gh-user/")
            recorded.add(e["method"], url, e["status"], e["response_headers"], e["body"])
    config = f"settings: {{release_shown: {shown}}}\n{FORK_CONFIG}"
    with FakeGitHub(_fork_state(), token=TOKEN, unauth_limit=5000) as server:
        server.recorded = recorded if mode == "rest" else None
        outcome = _audit(server, db_url, tmp_path, config, TOKEN if mode == "graphql" else None)
        row = _rows(outcome)["Fork"]
        assert (row["version"], row["version_source"], row["published_at"], row["prerelease"]) == (
            "v1.55",
            "release",
            "2025-02-16T21:01:10Z",
            False,
        )
        if mode == "rest":
            paths = [r.path for r in server.requests]
            asked = f"/repos/{FORK}/releases/latest" in paths
            assert asked is (shown == "newest_final")


RECORDED_TAGS = "Workflow.testCreateDispatchWithTag.json"  # PyGithub's tags, newest first


def _v140_releases(upto: str) -> list[FakeRelease]:
    """The recorded tags from v1.39 to ``upto`` (v1.39, v1.40a1…v1.40a4, v1.40), as GitHub
    releases published a day apart in their recorded order (the recording has no dates): the
    alphas flagged pre-releases, v1.40 published after v1.40a4."""
    names = [t["name"] for t in recorded_body(RECORDED_TAGS, "/tags")]
    window = names[names.index(upto) : names.index("v1.39") + 1][::-1]
    stamps = [f"2020-0{1 + i // 28}-{1 + i % 28:02d}T10:00:00Z" for i in range(len(window))]
    return [
        FakeRelease(name, name, stamp, stamp, prerelease="a" in name.removeprefix("v1.40")[:1])
        for name, stamp in zip(window, stamps, strict=True)
    ]


@pytest.mark.parametrize("mode", ["rest", "graphql"])
def test_v1_40_published_after_v1_40a4_is_the_row_by_version_order(
    db_url: str, tmp_path: Path, mode: str
) -> None:
    """PyGithub's recorded tags v1.40a1…v1.40a4 then v1.40: on the night of the fourth alpha the
    row is that alpha, labelled a pre-release; the next night the final v1.40 wins by version
    order and is reported as the new release from the alpha the row showed (issue 32, defect 1:
    the highest release in version order, a final after a pre-release of its version)."""
    project = "wrecker/PyGithub"
    config = (
        f"github: {{retry_base_delay: 0}}\nprojects:\n  - name: PyGithub\n    repo: {project}\n"
    )
    token = TOKEN if mode == "graphql" else None

    def state(upto: str) -> GitHubState:
        return GitHubState(repos=[_repo(project, 282377842, releases=_v140_releases(upto))])

    with FakeGitHub(state("v1.40a4"), token=TOKEN, unauth_limit=5000) as server:
        first = _audit(server, db_url, tmp_path, config, token)
        server.set_state(state("v1.40"))
        second = _audit(server, db_url, tmp_path, config, token)
    before, after = _rows(first)["PyGithub"], _rows(second)["PyGithub"]
    assert (before["version"], before["prerelease"], before["published_at"]) == (
        "v1.40a4",
        True,
        "2020-01-05T10:00:00Z",
    )
    assert (after["version"], after["prerelease"], after["published_at"]) == (
        "v1.40",
        False,
        "2020-01-06T10:00:00Z",
    )
    changes = [(c["kind"], c["before"], c["after"]) for c in second.report.as_json()["changes"]]
    assert changes == [("new_release", "v1.40a4", "v1.40")]
    markdown = (tmp_path / "reports" / "latest" / "report.md").read_text()
    assert (
        f"| PyGithub | [v1.40](<https://github.com/{project}/releases/tag/v1.40>) | "
        "GitHub release | 2020-01-06 | none found |"
    ) in markdown


# --------------------------------------------------- GitHub: renames, license verdicts, errors

RENAMES = """
github: {retry_base_delay: 0, max_retries: 3}
projects:
  - name: Proton
    repo: protoncoin/protoncoin
  - name: Phishing
    repo: ReDASers/Phishing-Detection
  - name: PyGithub
    repo: PyGithub/PyGithub
"""


@pytest.fixture
def renamed_server() -> Iterator[FakeGitHub]:
    recorded = Recordings(ORIGIN)
    recorded.add_github(recording("Repository.testGetRepositoryWith301Redirect.json"))
    recorded.add_github(recording("PullRequest2408.setUp.json"))
    recorded.add_github(recording("Repository.setUp.json"))
    state = GitHubState(
        repos=[
            _repo("padima2/protoncoin", 112116543, default_branch="master"),
            _repo("ReDASers/PhishBench", 146139403, default_branch="master"),
            _repo("PyGithub/PyGithub", 3544490),
        ]
    )
    with FakeGitHub(state, token=TOKEN, unauth_limit=5000) as server:
        server.recorded = recorded
        yield server


def test_renamed_repositories_follow_the_recorded_301_and_keep_github_license_keys(
    renamed_server: FakeGitHub, db_url: str, tmp_path: Path
) -> None:
    outcome = _audit(renamed_server, db_url, tmp_path, RENAMES, None)
    rows = _rows(outcome)
    assert {n: (r["status"], r["repo"], r["forge_license"]) for n, r in rows.items()} == {
        "Proton": ("ok", "padima2/protoncoin", "MIT"),
        "Phishing": ("ok", "ReDASers/PhishBench", "NOASSERTION"),
        "PyGithub": ("ok", "PyGithub/PyGithub", "LGPL-3.0"),
    }
    paths = [r.path for r in renamed_server.requests]
    assert "/repositories/112116543" in paths and "/repositories/146139403" in paths
    flags = {(f["project"], f["kind"]) for f in outcome.report.as_json()["flags"]}
    assert ("Phishing", "license_noassertion") in flags
    assert ("Proton", "license_noassertion") not in flags


SERVER_ERRORS = """
github: {retry_base_delay: 0, max_retries: 3}
projects:
  - name: PyGithub
    repo: PyGithub/PyGithub
"""


@pytest.mark.parametrize(
    ("name", "status", "repo"),
    [
        ("Retry.testReturnsRepoAfter3Retries.json", "ok", "PyGithub/PyGithub"),
        ("Retry.testRaisesRetryErrorAfterMaxRetries.json", "error", None),
    ],
)
def test_recorded_502s_are_retried_and_an_outage_is_an_error_not_a_finding(
    db_url: str, tmp_path: Path, name: str, status: str, repo: str | None
) -> None:
    state = GitHubState(repos=[_repo("PyGithub/PyGithub", 3544490)])
    with FakeGitHub(state, token=TOKEN, unauth_limit=5000) as server:
        recorded = Recordings(ORIGIN)
        recorded.add_github(recording(name))
        server.recorded = recorded
        outcome = _audit(server, db_url, tmp_path, SERVER_ERRORS, None)
        row = _rows(outcome)["PyGithub"]
        assert (row["status"], row["repo"]) == (status, repo)
        tries = [r.status for r in server.requests if r.path == "/repos/PyGithub/PyGithub"]
        assert tries == ([502, 502, 502, 200] if status == "ok" else [502, 502, 502, 502])
    kinds = {c["kind"] for c in outcome.report.as_json()["changes"]}
    # never "removed", never a license change (the repository's dates are years old: its
    # first read says it is dormant, a finding of its own)
    assert kinds <= {"project_added", "upstream_dormant"}


@pytest.mark.parametrize(
    ("name", "url_end", "expected"),
    [
        # the recorded non-JSON 503 page: described, never copied
        ("Exceptions.testNonJsonDataReturnedByGithub.json", "/users/jacquev6", "HTTP 503"),
        ("Exceptions.testUnknownObject.json", "/repos/jacquev6/Xxx", "not found"),
        ("Exceptions.testBadAuthentication.json", "/user", "HTTP 401"),
        ("Authentication.testAuthorizationHeaderWithToken.json", "/user", "HTTP 403"),
    ],
)
def test_recorded_error_answers_become_errors_with_a_summary_not_the_upstream_body(
    db_url: str, tmp_path: Path, name: str, url_end: str, expected: str
) -> None:
    """Each recorded error answer (status, headers, body as GitHub sent them) served for the
    repository the audit asks for."""
    exchange = next(e for e in recording(name)["exchanges"] if e["url"].endswith(url_end))
    recorded = Recordings(ORIGIN)
    recorded.add("GET", "/repos/PyGithub/PyGithub", exchange["status"],
                 exchange["response_headers"], exchange["body"])  # fmt: skip
    state = GitHubState(repos=[_repo("PyGithub/PyGithub", 3544490)])
    with FakeGitHub(state, token=TOKEN, unauth_limit=5000) as server:
        server.recorded = recorded
        outcome = _audit(server, db_url, tmp_path, SERVER_ERRORS, None)
    row = _rows(outcome)["PyGithub"]
    assert row["status"] == "error"
    errors = [e["error"] for e in outcome.report.as_json()["errors"]]
    assert len(errors) == 1 and expected in errors[0]
    assert "<html" not in errors[0] and "Service Unavailable" not in errors[0]
    assert {c["kind"] for c in outcome.report.as_json()["changes"]} <= {"project_added"}


# ------------------------------------------------------- issue 18, item 11: report details

TAGS_ONLY = "Workflow.testCreateDispatchWithTag.json"


@pytest.mark.parametrize(
    ("track", "detail"),
    [
        ("auto", "no GitHub release; tracked by tag v2.0.0-alpha.4"),
        ("tags", "tracked by tag v2.0.0-alpha.4 (track: tags; releases not checked)"),
    ],
)
def test_an_undated_rest_tag_reads_without_none_and_unasked_releases_are_not_called_absent(
    db_url: str, tmp_path: Path, track: str, detail: str
) -> None:
    """The recorded tag list (REST: names and commits, no dates; three pages by Link): the
    commit date of the newest tag cannot be looked up here, so the tag stays undated."""
    recorded = Recordings(ORIGIN)
    recorded.add_github(recording(TAGS_ONLY), only="/tags")
    recorded.add_github(recording(TAGS_ONLY), only="/repos/wrecker/PyGithub")
    state = GitHubState(repos=[_repo("wrecker/PyGithub", 282377842)])
    config = f"projects:\n  - name: Fork\n    repo: wrecker/PyGithub\n    track: {track}\n"
    with FakeGitHub(state, token=TOKEN, unauth_limit=5000) as server:
        server.recorded = recorded
        outcome = _audit(server, db_url, tmp_path, config, None)
        paths = [r.path for r in server.requests]
    row = _rows(outcome)["Fork"]
    assert (row["version"], row["version_source"], row["published_at"]) == (
        "v2.0.0-alpha.4",
        "tag",
        None,
    )
    report = outcome.report.as_json()
    flags = [f["detail"] for f in report["flags"] if f["kind"] == "no_tagged_release"]
    assert flags == [detail]
    assert not any("page=2" in p for p in paths)  # one page of tags, as documented
    markdown = (tmp_path / "reports" / "latest" / "report.md").read_text()
    assert "(None)" not in markdown


def test_a_first_audit_calls_nothing_new_since_a_baseline_it_does_not_have(
    renamed_server: FakeGitHub, db_url: str, tmp_path: Path
) -> None:
    """The recorded NOASSERTION verdict (ReDASers/PhishBench) on the very first audit."""
    outcome = _audit(renamed_server, db_url, tmp_path, RENAMES, None)
    assert outcome.report.as_json()["audit"]["baseline_audit_id"] is None
    markdown = (tmp_path / "reports" / "latest" / "report.md").read_text()
    assert "### Phishing — NOASSERTION per GitHub\n" in markdown
    assert "new since the baseline" not in markdown


def test_a_rate_limit_answer_is_summarised_without_the_runner_address(
    db_url: str, tmp_path: Path
) -> None:
    """GitHub's primary rate-limit answer names the caller's IP address; the report says when
    the limit resets instead. (No such answer is recorded: this body follows GitHub's docs.)"""
    recorded = Recordings(ORIGIN)
    body = {
        "message": "API rate limit exceeded for 203.0.113.7. (But here's the good news: "
        "Authenticated requests get a higher rate limit.)",
        "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
    }
    headers = [["x-ratelimit-limit", "60"], ["x-ratelimit-remaining", "0"],
               ["x-ratelimit-reset", "1798761600"]]  # fmt: skip
    recorded.add("GET", "/repos/PyGithub/PyGithub", 403, headers, body)
    state = GitHubState(repos=[_repo("PyGithub/PyGithub", 3544490)])
    with FakeGitHub(state, token=TOKEN, unauth_limit=5000) as server:
        server.recorded = recorded
        outcome = _audit(server, db_url, tmp_path, SERVER_ERRORS, None)
    text = json.dumps(outcome.report.as_json())
    text += (tmp_path / "reports" / "latest" / "report.md").read_text()
    assert "203.0.113.7" not in text and "good news" not in text
    assert "primary rate limit reached (HTTP 403); resets at 2027-01-01T00:00:00Z" in text


def test_test_data_in_the_tree_is_not_a_license_file() -> None:
    """The real paths of PyGithub's test data (the recordings' own provenance) in a tree."""
    from crawler.upstream.sources.github.parse import inventory_from_tree

    index = json.loads((REPLAY / "github" / "index.json").read_text(encoding="utf-8"))
    paths = sorted({f["source"].split(":", 1)[1] for f in index["files"]})
    assert "tests/ReplayData/License.setUp.txt" in paths
    tree = [{"path": p, "type": "blob", "sha": f"{i:040x}"} for i, p in enumerate(paths)]
    tree.append({"path": "COPYING.LESSER", "type": "blob", "sha": "f" * 40})
    inventory = inventory_from_tree({"tree": tree})
    assert [e.path for e in inventory] == ["COPYING.LESSER"]


# ----------------------------------------------------------------------------- PyPI documents


def pypi_document(name: str) -> bytes:
    return (REPLAY / "pypi" / name).read_bytes()


PYPI_CONFIG = """
pypi: {retry_base_delay: 0, max_retries: 1, versions_per_package: 500}
projects:
  - name: Luigi
    repo: org/luigi
    pypi: luigi
  - name: Monitor
    repo: org/monitor
    pypi: azure-cli-monitor
  - name: Black
    repo: org/black
    pypi: black
  - name: Requests
    repo: org/requests
    pypi: requests
"""


def _pypi_nights(
    db_url: str, tmp: Path, nights: list[dict[str, str]]
) -> tuple[list[AuditOutcome], Store]:
    """Audit once per night, each night's packages answered by the named real documents."""
    from crawler_fakes.pypi import FakePyPI, PyPIState

    stamp = "2020-01-01T00:00:00Z"
    repos = [
        _repo(f"org/{n}", i, releases=[FakeRelease("v1", "v1", stamp, stamp)])
        for i, n in enumerate(("luigi", "monitor", "black", "requests"), start=1)
    ]
    outcomes = []
    with (
        FakeGitHub(GitHubState(repos=repos), token=TOKEN, unauth_limit=5000) as github,
        FakePyPI(PyPIState(packages=[])) as pypi,
    ):
        for night in nights:
            recorded = Recordings("https://pypi.org")
            for package, document in night.items():
                headers = [["Content-Type", "application/json"]]
                recorded.add("GET", f"/pypi/{package}/json", 200, headers, pypi_document(document))
            pypi.recorded = recorded
            outcomes.append(_run(db_url, tmp, PYPI_CONFIG, {**github.env(None), **pypi.env()}))
    return outcomes, Store(db_url)


FIRST_NIGHT = {
    "luigi": "luigi__dependabot__pypi_response.json",
    "azure-cli-monitor": "azure-cli-monitor__renovatebot__azure-cli-monitor.json",
    "black": "black__python-poetry__black.json",
    "requests": "requests__python-poetry__requests.json",
}
SECOND_NIGHT = {
    **FIRST_NIGHT,
    "luigi": "luigi__dependabot__pypi_response_luigi.json",
    "azure-cli-monitor": "azure-cli-monitor__renovatebot__azure-cli-monitor-updated.json",
}


def test_real_pypi_documents_read_yanked_files_and_legacy_upload_times(
    db_url: str, tmp_path: Path
) -> None:
    (night,), store = _pypi_nights(db_url, tmp_path, [FIRST_NIGHT])
    try:
        audit = store.latest_audit()
        assert audit is not None
        states = store.states_as_of(audit.id, include_own=True)
    finally:
        store.close()
    packages = {name: state.snapshot.packages[0] for name, state in states.items()}
    assert {p["name"]: p["status"] for p in night.report.as_json()["projects"]} == dict.fromkeys(
        ("Luigi", "Monitor", "Black", "Requests"), "ok"
    )
    black = {v.version: v for v in packages["Black"].versions}
    # 21.11b0: every file yanked; 19.10b0 read from upload_time_iso_8601
    assert (black["21.11b0"].yanked, black["21.11b0"].prerelease) == (True, True)
    assert black["19.10b0"].uploaded_at == "2019-10-28T23:53:54Z"
    monitor = {v.version: v for v in packages["Monitor"].versions}
    assert monitor["0.1.6"].yanked is False  # one of its two files yanked: still installable
    assert monitor["0.1.7"].uploaded_at == "2018-05-22T17:25:23Z"  # legacy upload_time, UTC
    requests = {v.version: v for v in packages["Requests"].versions}
    assert requests["2.9.2"].uploaded_at == "2016-04-29T21:57:10Z"  # its earlier file
    assert "0.0.1" not in requests  # listed without files: nothing to install
    assert packages["Luigi"].versions[0].version == "2.6.0"
    rows = {p["name"]: p["packages"][0] for p in night.report.as_json()["projects"]}
    assert (rows["Black"]["version"], rows["Monitor"]["version"]) == ("19.10b0", "0.1.7")


def test_two_real_captures_of_one_package_diff_as_two_nights(db_url: str, tmp_path: Path) -> None:
    (_, second), store = _pypi_nights(db_url, tmp_path, [FIRST_NIGHT, SECOND_NIGHT])
    store.close()
    new = [
        (c["project"], c["after"])
        for c in second.report.as_json()["changes"]
        if c["kind"] == "new_package_version"
    ]
    # 17 versions appeared between the captures (0.1.8 to 0.2.15); the ten newest are named
    assert {v for p, v in new if p == "Monitor"} == {f"0.2.{i}" for i in range(6, 16)}
    assert {v for p, v in new if p == "Luigi"} == {
        "3.6.0", "3.5.2", "3.5.1", "3.5.0", "3.4.0", "3.3.0", "3.2.1", "3.2.0", "3.1.1", "3.1.0"
    }  # fmt: skip
    assert {p for p, _ in new} == {"Luigi", "Monitor"}  # black and requests did not move
    assert {c["kind"] for c in second.report.as_json()["changes"]} == {"new_package_version"}


# ------------------------------------------------------------------------ GitLab and Gitee


def gitlab_body(name: str) -> bytes:
    return (REPLAY / "gitlab" / name).read_bytes()


GITLAB_CONFIG = """
gitlab: {retry_base_delay: 0, max_retries: 1}
projects:
  - name: Bump
    gitlab: gocardless/bump
  - name: Gone
    gitlab: gocardless/gone
"""


def _gitlab_recordings() -> Recordings:
    """Each real body at the endpoint its source test serves it for (no headers were kept)."""
    recorded = Recordings("https://gitlab.example")
    json_type = [["Content-Type", "application/json"]]
    for path, name, status in (
        ("/api/v4/projects/gocardless%2Fbump", "dependabot-core/bump_repo.json", 200),
        ("/api/v4/projects/gocardless%2Fgone", "dependabot-core/not_found.json", 404),
        ("/api/v4/projects/3/releases",
         "go-gitlab/fixtures__exampleReleaseListResponse__L210.json", 200),
        ("/api/v4/projects/3/repository/tags", "dependabot-core/business_tags.json", 200),
        ("/api/v4/projects/3/repository/commits", "dependabot-core/commits.json", 200),
        ("/api/v4/projects/3/repository/tree", "dependabot-core/business_files.json", 200),
    ):  # fmt: skip
        recorded.add("GET", path, status, json_type, gitlab_body(name))
    return recorded


def _gitlab_audit(db_url: str, tmp: Path, config: str) -> tuple[AuditOutcome, list[str]]:
    from crawler_fakes.gitlab import FakeGitLab, GitLabState

    with FakeGitLab(GitLabState()) as gitlab:
        gitlab.recorded = _gitlab_recordings()
        outcome = _run(db_url, tmp, config, gitlab.env())
        return outcome, [r.path for r in gitlab.requests]


def test_real_gitlab_bodies_audit_into_releases_and_a_not_found_error(
    db_url: str, tmp_path: Path
) -> None:
    """go-gitlab's release list (GitLab's documented example: no ``released_at``, no
    ``upcoming_release``), dependabot's project answer, and GitLab's 404 body."""
    outcome, paths = _gitlab_audit(db_url, tmp_path, GITLAB_CONFIG)
    rows = _rows(outcome)
    bump = rows["Bump"]
    assert (bump["status"], bump["repo"], bump["repo_url"]) == (
        "ok", "gocardless/bump", "http://example.com/gocardless/bump",
    )  # fmt: skip
    # two releases; created_at stands in for the missing released_at, in UTC
    assert (bump["version"], bump["published_at"], bump["prerelease"]) == (
        "v0.2", "2019-01-03T01:56:19Z", False,
    )  # fmt: skip
    assert bump["forge_license"] is None  # "license": null in the real answer
    assert (rows["Gone"]["status"], rows["Gone"]["version"]) == ("error", None)
    errors = [(e["project"], e["error"]) for e in outcome.report.as_json()["errors"]]
    assert len(errors) == 1 and errors[0][0] == "Gone" and "not found" in errors[0][1]
    assert "/api/v4/projects/3/releases?order_by=released_at&per_page=10&sort=desc" in paths
    assert {c["kind"] for c in outcome.report.as_json()["changes"]} == {"project_added"}


def test_real_gitlab_tags_with_offset_dates_read_in_utc(db_url: str, tmp_path: Path) -> None:
    """dependabot's tag list: committed dates with a -06:00 offset."""
    config = "projects:\n  - name: Bump\n    gitlab: gocardless/bump\n    track: tags\n"
    outcome, paths = _gitlab_audit(db_url, tmp_path, config)
    bump = _rows(outcome)["Bump"]
    assert (bump["version"], bump["version_source"], bump["published_at"]) == (
        "v1.5.0", "tag", "2016-02-03T08:32:19Z",
    )  # fmt: skip
    assert not any("/releases" in p for p in paths)
    report = outcome.report.as_json()
    flags = [f["detail"] for f in report["flags"] if f["kind"] == "no_tagged_release"]
    assert flags == [
        "tracked by tag v1.5.0 (2016-02-03T08:32:19Z) (track: tags; releases not checked)"
    ]


def test_real_gitee_repository_objects_read_their_web_page_without_git_suffix(
    db_url: str, tmp_path: Path
) -> None:
    """x-cmd's stored Gitee list answer: each item served as its repository's own answer (the
    same object shape); one has a default branch, one is empty (``default_branch: null``)."""
    from crawler_fakes.gitee import FakeGitee
    from crawler_fakes.gitee_state import GiteeRepo, GiteeState

    items = json.loads((REPLAY / "gitee" / "x-cmd__x-bash-org-repos.json").read_bytes())
    by_name = {item["full_name"]: item for item in items}
    cloud, empty = by_name["x-bash/cloud"], by_name["x-bash/github"]
    assert (cloud["html_url"], cloud["license"], empty["default_branch"]) == (
        "https://gitee.com/x-bash/cloud.git", None, None,
    )  # fmt: skip
    recorded = Recordings("https://gitee.com")
    for item in (cloud, empty):
        recorded.add("GET", item["url"], 200, [["Content-Type", "application/json"]], item)
    state = GiteeState(
        repos=[
            GiteeRepo("x-bash", "cloud", cloud["id"], head_sha="c" * 40,
                      head_date="2020-06-17T13:10:55Z"),
            GiteeRepo("x-bash", "github", empty["id"]),
        ]
    )  # fmt: skip
    config = (
        "projects:\n  - name: Cloud\n    gitee: x-bash/cloud\n"
        "  - name: Empty\n    gitee: x-bash/github\n"
    )
    with FakeGitee(state) as gitee:
        gitee.recorded = recorded
        outcome = _run(db_url, tmp_path, config, gitee.env())
    rows = _rows(outcome)
    assert {n: (r["status"], r["repo"], r["repo_url"], r["forge_license"])
            for n, r in rows.items()} == {
        "Cloud": ("ok", "x-bash/cloud", "https://gitee.com/x-bash/cloud", None),
        "Empty": ("ok", "x-bash/github", "https://gitee.com/x-bash/github", None),
    }  # fmt: skip
    assert (rows["Cloud"]["version_source"], rows["Empty"]["version_source"]) == ("commit", None)
    assert outcome.report.as_json()["errors"] == []


def test_a_recorded_304_replays_the_stored_answer_on_the_second_night(
    db_url: str, tmp_path: Path
) -> None:
    """Night one: the fake answers the repository with an ETag. Night two: GitHub's recorded
    304 Not Modified for it: the stored answer is read again, and nothing changed."""
    config = "projects:\n  - name: Fork\n    repo: akfish/PyGithub\n"
    state = GitHubState(repos=[_repo("akfish/PyGithub", 1)])
    with FakeGitHub(state, token=TOKEN, unauth_limit=5000) as server:
        first = _audit(server, db_url, tmp_path, config, None)
        recorded = Recordings(ORIGIN)
        recorded.add_github(recording("ConditionalRequestUpdate.testDidNotUpdate.json"))
        server.recorded = recorded
        server.reset_log()
        second = _audit(server, db_url, tmp_path, config, None)
        repo_answers = [r.status for r in server.requests if r.path == "/repos/akfish/PyGithub"]
    assert repo_answers == [304]
    assert _rows(second)["Fork"] == _rows(first)["Fork"]
    assert second.report.as_json()["changes"] == [] and second.report.as_json()["errors"] == []


def test_the_fake_answers_carry_every_field_the_real_ones_have() -> None:
    """Where the fake and a recorded GitHub answer disagree on shape, the fake is wrong."""
    import urllib.request

    from crawler_fakes.github import FakeTag, mit_repo

    real_release = recorded_body(LAZY_RELEASES, "/releases")[0]
    real_repo = recorded_body("Repository.setUp.json", "/repos/PyGithub/PyGithub")
    real_tag = recorded_body(TAGS_ONLY, "/repos/wrecker/PyGithub/tags")[0]
    real_tree = recorded_body("Repository.testGetGitTreeWithRecursive.json", "recursive=1")
    stamp = "2020-01-01T00:00:00Z"
    repo = mit_repo("o", "r", 1, [FakeRelease("v1", "v1", stamp, stamp)],
                    tags=[FakeTag("v1", "a" * 40, stamp)])  # fmt: skip
    with FakeGitHub(GitHubState(repos=[repo])) as server:

        def get(path: str) -> Any:
            with urllib.request.urlopen(server.base_url + path) as answer:
                return json.load(answer)

        release, fake_repo = get("/repos/o/r/releases")[0], get("/repos/o/r")
        tag, tree = get("/repos/o/r/tags")[0], get("/repos/o/r/git/trees/main?recursive=1")
    assert set(real_release) - set(release) == set()
    assert set(real_tag) - set(tag) == set() and set(real_tag["commit"]) <= set(tag["commit"])
    assert set(real_tree) <= set(tree) and set(real_tree["tree"][0]) <= set(tree["tree"][0])
    assert set(real_repo["license"]) <= set(fake_repo["license"])
    read = {"id", "full_name", "default_branch", "archived", "html_url", "license"}
    assert read <= set(real_repo) and read <= set(fake_repo)
