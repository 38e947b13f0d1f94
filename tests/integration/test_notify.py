"""Delivering the report: a JSON webhook on loopback (Apprise), the catalog issue on the fake
GitHub (PyGithub), failures recorded and never fatal, the token never sent or written."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from crawler.cli import cli
from crawler.config import GitHubIssueSettings
from crawler.notify.github_issue import publish_issue
from crawler.notify.message import ISSUE_BODY_LIMIT, ISSUE_MARKER, issue_body
from crawler.report.markdown import escape
from crawler_fakes.github import FakeGitHub
from tests.support.ops import PROJECTS, TOKEN, WebhookReceiver, closed_port, upstream

HOOK_SECRET = "hooksecret_5f1e2d3c4b5a"


@pytest.fixture
def workdir(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRAWLER_DB_URL", db_url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("CRAWLER_NOTIFY", raising=False)
    monkeypatch.delenv("CRAWLER_REPORT_URL", raising=False)
    monkeypatch.delenv("CRAWLER_ISSUE_REPO", raising=False)
    return tmp_path


def _config(workdir: Path, notify: str) -> None:
    (workdir / "sources.yaml").write_text(notify + PROJECTS)


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _files_text(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_webhook_and_catalog_issue_created_then_updated(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with WebhookReceiver() as hook, FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        monkeypatch.setenv("CRAWLER_NOTIFY", f"json://127.0.0.1:{hook.port}/hook/{HOOK_SECRET}")
        _config(
            workdir,
            "notify:\n  when: changes\n"
            "  report_url: https://ci.example/reports/{report_dir}/report.md\n"
            "  github_issue: {repo: org/catalog, labels: [catalog-audit]}\n",
        )
        first = _run("audit")
        github.set_state(upstream("v1.0", "v1.1"))
        second = _run("audit")
        issues = github.issues.issues("org/catalog")

    assert first.exit_code == 0, first.output
    assert second.exit_code == 0, second.output
    first_dir = sorted(workdir.glob("reports/*-audit1"))[0]
    second_dir = sorted(workdir.glob("reports/*-audit2"))[0]
    hook_label = f"json://127.0.0.1:{hook.port}"  # a channel is its scheme and host
    assert f"notification {hook_label}: sent with report.md attached" in first.output
    assert "notification github-issue org/catalog: created #1, comment added" in first.output
    assert "notification github-issue org/catalog: updated #1, comment added" in second.output

    # the webhook: one JSON message per audit, title, summary, link, report.md attached
    bodies = hook.json_bodies()
    assert [p["path"] for p in hook.posts] == [f"/hook/{HOOK_SECRET}"] * 2
    [pending] = json.loads((second_dir / "report.json").read_text())["pending"]
    since = pending["first_seen"]  # issue 20: the new release stays pending until taken
    assert [b["title"] for b in bodies] == [
        "crawler audit #1 complete: 2 changes, 0 flags, 0 errors, 0 deferred",
        "crawler audit #2 complete: 1 change, 0 flags, 0 errors, 0 deferred; "
        f"1 new tonight, 1 pending since {since}",
    ]
    [change] = json.loads((second_dir / "report.json").read_text())["changes"]
    assert (change["project"], change["kind"], "v1.1" in change["summary"]) == (
        "Alpha",
        "new_release",
        True,
    )
    # escaped as the Markdown report escapes (crawler.report.markdown owns that)
    assert bodies[1]["message"] == (
        f"- **Alpha** new release: {escape(change['summary'], 160)}\n\n"
        f"**Pending until the catalog takes them** (1 new tonight, 1 pending since {since}), "
        "oldest first:\n"
        f"- **Alpha** new release: v1.0 → v1.1 (first seen {since})\n\n"
        f"[full report](<https://ci.example/reports/{second_dir.name}/report.md>)"
    )
    assert [a["filename"] for a in bodies[1]["attachments"]] == ["report.md"]
    attached = base64.b64decode(bodies[1]["attachments"][0]["base64"]).decode()
    assert attached == (second_dir / "report.md").read_text()

    # the catalog issue: one, created then updated, body = latest report, a comment per audit
    assert len(issues) == 1
    issue = issues[0]
    assert (issue.number, issue.title, issue.labels, issue.state) == (
        1,
        "Upstream release and license audit",
        ["catalog-audit"],
        "open",
    )
    assert issue.body == ISSUE_MARKER + "\n" + (second_dir / "report.md").read_text()
    assert [c.body.splitlines()[0] for c in issue.comments] == [
        "**crawler audit #1 complete: 2 changes, 0 flags, 0 errors, 0 deferred**",
        "**crawler audit #2 complete: 1 change, 0 flags, 0 errors, 0 deferred; "
        f"1 new tonight, 1 pending since {since}**",
    ]

    # what was delivered is recorded beside the report
    record = json.loads((second_dir / "delivery.json").read_text())
    assert record["sent"] is True and record["reason"] == "1 change"
    assert [(c["channel"], c["ok"], c["detail"]) for c in record["channels"]] == [
        (hook_label, True, "sent with report.md attached"),
        ("github-issue org/catalog", True, "updated #1, comment added"),
    ]
    assert record["channels"][1]["url"] == "https://github.com/org/catalog/issues/1"

    # neither the token nor the webhook's secret path went anywhere they could be read
    written = _files_text(workdir / "reports")
    sent = json.dumps(hook.posts) + json.dumps([issue.body, *(c.body for c in issue.comments)])
    for secret in (TOKEN, HOOK_SECRET):
        assert secret not in first.output + second.output
        assert secret not in written
        assert secret not in sent.replace(f"/hook/{HOOK_SECRET}", "")  # only the URL path itself
    assert first_dir.is_dir()


def test_receiver_down_the_audit_completes_and_says_the_notification_failed(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = closed_port()
    with FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        _config(workdir, f'notify:\n  when: always\n  urls: ["json://127.0.0.1:{port}/hook"]\n')
        result = _run("audit")
    assert result.exit_code == 0, result.output
    assert "audit #1 complete: 2 changes, 0 flags, 0 errors, 0 deferred" in result.output
    report_dir = sorted(workdir.glob("reports/*-audit1"))[0]
    assert (report_dir / "report.md").is_file() and (report_dir / "report.json").is_file()
    record = json.loads((report_dir / "delivery.json").read_text())
    assert record["sent"] is True and record["reason"] == "notify.when is 'always'"
    [channel] = record["channels"]
    assert channel["channel"] == f"json://127.0.0.1:{port}"
    assert channel["ok"] is False
    refused = "A Connection error occurred sending JSON notification to 127.0.0.1."  # Apprise's
    assert channel["detail"] == refused
    assert f"error: notification json://127.0.0.1:{port}: " in result.output
    assert TOKEN not in result.output and TOKEN not in _files_text(report_dir)


def test_when_errors_sends_nothing_for_a_clean_audit(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with WebhookReceiver() as hook, FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        _config(workdir, f'notify:\n  when: errors\n  urls: ["json://127.0.0.1:{hook.port}/"]\n')
        result = _run("audit")
    assert result.exit_code == 0, result.output
    assert hook.posts == []
    report_dir = sorted(workdir.glob("reports/*-audit1"))[0]
    assert json.loads((report_dir / "delivery.json").read_text()) == {
        "audit": 1,
        "sent": False,
        "reason": "no errors (notify.when is 'errors')",
        "channels": [],
    }


def _long_report(sections: int, size: int) -> str:
    parts = ["# Upstream audit #7\n\n**complete**\n"]
    for n in range(sections):
        parts.append(f"\n## Section {n}\n\n" + ("x" * 99 + "\n") * (size // 100))
    return "".join(parts)


def test_issue_body_is_cut_at_a_section_boundary_with_a_link() -> None:
    report = _long_report(sections=10, size=10_000)  # about 100,000 characters
    body = issue_body(report, "https://ci.example/r/7/report.md", "reports/x/report.md")
    assert len(body) <= ISSUE_BODY_LIMIT
    kept, notice = body.split("\n\n---\n")
    assert kept == ISSUE_MARKER + "\n" + report[: report.index("\n## Section 6")].rstrip()
    assert notice == (
        "_This report is longer than GitHub allows in an issue (65,536 characters): the "
        "sections below were left out; read [the full report](<https://ci.example/r/7/report.md>)._\n"
    )
    short = _long_report(sections=1, size=1000)
    assert issue_body(short, None, "reports/x/report.md") == ISSUE_MARKER + "\n" + short


def test_oversized_report_is_accepted_by_github_once_cut() -> None:
    report = _long_report(sections=12, size=8_000)
    settings = GitHubIssueSettings(repo="org/catalog")
    with FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        whole = publish_issue(
            settings,
            api_url=github.base_url,
            token=TOKEN,
            body=ISSUE_MARKER + "\n" + report,
            comment="c",
            seconds_between_writes=None,
        )
        cut = publish_issue(
            settings,
            api_url=github.base_url,
            token=TOKEN,
            body=issue_body(report, None, "reports/x/report.md"),
            comment="c",
            seconds_between_writes=None,
        )
        issues = github.issues.issues("org/catalog")
    assert (whole.ok, whole.detail) == (
        False,
        "GitHub answered 422: Validation Failed; body is too long (maximum is 65536 characters)",
    )
    assert (cut.ok, cut.detail) == (True, "created #1, comment added")
    assert len(issues) == 1 and issues[0].body is not None
    assert issues[0].body.endswith("read `reports/x/report.md`._\n")


def test_catalog_issue_needs_a_token_and_a_wrong_one_is_reported_without_it() -> None:
    settings = GitHubIssueSettings(repo="org/catalog")
    kwargs: dict[str, Any] = {"body": "b", "comment": "c", "seconds_between_writes": None}
    with FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        anonymous = publish_issue(settings, api_url=github.base_url, token=None, **kwargs)
        wrong = publish_issue(
            settings, api_url=github.base_url, token="ghp_wrong_token_abcdef123", **kwargs
        )
    assert (anonymous.ok, anonymous.detail) == (
        False,
        "needs GITHUB_TOKEN or GH_TOKEN with issues: write",
    )
    assert (wrong.ok, wrong.detail) == (False, "GitHub answered 401: Bad credentials")


def test_catalog_issue_repository_from_the_environment(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the Actions workflow does: CRAWLER_ISSUE_REPO=${{ github.repository }}."""
    with FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        monkeypatch.setenv("CRAWLER_ISSUE_REPO", "org/catalog")
        _config(workdir, "")
        result = _run("audit")
        issues = github.issues.issues("org/catalog")
    assert result.exit_code == 0, result.output
    assert "notification github-issue org/catalog: created #1, comment added" in result.output
    assert [(i.number, i.title, i.labels) for i in issues] == [
        (1, "Upstream release and license audit", ["crawler-audit"])
    ]


def test_when_changes_sends_a_new_flag_once_not_every_night(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flag raised night after night (GitHub's NOASSERTION on a repository that did not
    change) is not news: `when: changes` sends it the night it appears, then stays quiet."""
    from crawler_fakes.github import GitHubState, mit_repo, release_on

    state = GitHubState(
        [
            mit_repo("org", "alpha", 1, [release_on("v1.0", "2026-10-01T00:00:00Z")]),
            mit_repo("org", "beta", 2, [release_on("v2.0", "2026-10-01T00:00:00Z")],
                     license_key="other", spdx_id="NOASSERTION", license_name="Other"),
        ]
    )  # fmt: skip
    with WebhookReceiver() as hook, FakeGitHub(state, token=TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        _config(workdir, f'notify:\n  when: changes\n  urls: ["json://127.0.0.1:{hook.port}/"]\n')
        first = _run("audit")
        second = _run("audit")
    assert (first.exit_code, second.exit_code) == (0, 0), first.output + second.output
    assert [b["title"] for b in hook.json_bodies()] == [
        "crawler audit #1 complete: 2 changes, 1 flag, 0 errors, 0 deferred"
    ]
    records = [
        json.loads((sorted(workdir.glob(f"reports/*-audit{n}"))[0] / "delivery.json").read_text())
        for n in (1, 2)
    ]
    assert [(r["sent"], r["reason"]) for r in records] == [
        (True, "2 changes, 1 new flag"),
        (
            False,
            "no changes, new flags or errors (notify.when is 'changes'; 1 flag raised before)",
        ),
    ]
    report = json.loads((sorted(workdir.glob("reports/*-audit2"))[0] / "report.json").read_text())
    assert [(f["project"], f["kind"], f["new"]) for f in report["flags"]] == [
        ("Beta", "license_noassertion", False)
    ]


WEBHOOK_TOKEN = "whk_0d1c2b3a4f5e6d7c8b9a"


def test_a_token_in_a_notify_url_path_is_shown_nowhere(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38 item 8: a token in a notify.urls path (in sources.yaml) was printed at default
    verbosity and stored in delivery.json; with -vv the libraries' debug lines carried it too.
    A channel is shown as its scheme and host; every line goes through our redaction."""
    dead = closed_port()
    with WebhookReceiver() as hook, FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        _config(workdir, "notify:\n  when: always\n  urls:\n"
                         f'    - "json://127.0.0.1:{hook.port}/hook/{WEBHOOK_TOKEN}"\n'
                         f'    - "json://127.0.0.1:{dead}/hook/{WEBHOOK_TOKEN}"\n')  # fmt: skip
        default = _run("audit")
        loud = _run("-vv", "audit")
    assert [p["path"] for p in hook.posts] == [f"/hook/{WEBHOOK_TOKEN}"] * 2  # it was used
    assert f"notification json://127.0.0.1:{hook.port}: sent with report.md attached" in (
        default.output
    )
    assert f"error: notification json://127.0.0.1:{dead}: " in default.output
    record = json.loads(sorted(workdir.glob("reports/*-audit2"))[0].joinpath(
        "delivery.json").read_text())  # fmt: skip
    assert [c["channel"] for c in record["channels"]] == [
        f"json://127.0.0.1:{hook.port}", f"json://127.0.0.1:{dead}"
    ]  # fmt: skip
    assert "DEBUG" in loud.output  # the libraries' debug lines were written…
    for shown in (default.output, loud.output, _files_text(workdir / "reports")):
        assert WEBHOOK_TOKEN not in shown  # …and none carries the token


def test_a_night_that_checked_nothing_is_notified_even_when_nothing_changed(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38 item 5: every project deferred (GitHub's budget spent) was a quiet night to
    `notify.when: changes`, as to cron, until `stale` three days later."""
    monkeypatch.delenv("GITHUB_TOKEN")
    with WebhookReceiver() as hook, FakeGitHub(upstream("v1.0"), unauth_limit=0) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        _config(workdir, f'notify:\n  when: changes\n  urls: ["json://127.0.0.1:{hook.port}/"]\n')
        result = _run("audit")
    assert result.exit_code == 1, result.output
    [body] = hook.json_bodies()
    assert body["title"] == (
        "crawler audit #1 partial: 0 changes, 0 flags, 0 errors, 2 deferred; reached nothing: "
        "none of the 2 projects could be read (every one deferred: a rate limit spent, or a "
        "source that asked to wait)"
    )
    record = json.loads(sorted(workdir.glob("reports/*-audit1"))[0].joinpath(
        "delivery.json").read_text())  # fmt: skip
    assert record["reason"] == (
        'checked only 0 of 2 projects (fewer than 10%): see "Not checked"'
    )


def test_delivery_json_is_in_reports_latest_also_without_channels(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no channel configured, no delivery.json was written: reports/latest/ lacked the
    file it holds after every other audit. It says nothing was sent, and why."""
    with FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        _config(workdir, "")
        result = _run("audit")
    assert result.exit_code == 0, result.output
    latest = workdir / "reports" / "latest"
    assert sorted(p.name for p in latest.iterdir()) == ["delivery.json", "report.json", "report.md"]
    assert json.loads((latest / "delivery.json").read_text()) == {
        "audit": 1,
        "sent": False,
        "reason": "no notify channels configured",
        "channels": [],
    }
