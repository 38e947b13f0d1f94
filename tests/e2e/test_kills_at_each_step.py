"""`crawler audit` killed with SIGKILL at each step of a night (issue 38 items 2 and 3), then run
again: no finding and no notification is lost, on SQLite and on PostgreSQL (the killed run's
lock is taken over at once). The kill is real: the child process reaches a named point
(``CRAWLER_FAILPOINT``, crawler.failpoints) and sends itself SIGKILL there.

Real processes, the fake GitHub and a JSON webhook on loopback, a real database."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawler.store import Store
from crawler_fakes.github import FakeGitHub, GitHubState, mit_repo, release_on
from tests.support.ops import WebhookReceiver

NAMES = ["p0", "p1", "p2", "p3", "p4", "p5"]


def _config(hook: WebhookReceiver) -> str:
    projects = "".join(f"  - name: {n}\n    repo: org/{n}\n" for n in NAMES)
    return (
        f'notify:\n  when: changes\n  urls: ["json://127.0.0.1:{hook.port}/hook"]\n'
        f"projects:\n{projects}"
    )


def _state(newest: str) -> GitHubState:
    releases = [release_on("v1", "2026-10-01T00:00:00Z")]
    if newest == "v2":
        releases.append(release_on("v2", "2026-11-01T00:00:00Z"))
    repos = [
        mit_repo("org", n, i + 1, list(releases), head_sha=f"{i:040d}") for i, n in enumerate(NAMES)
    ]
    return GitHubState(repos=repos)


def _audit(workdir: Path, db_url: str, api_url: str, failpoint: str | None = None) -> int:
    env = {**os.environ, "CRAWLER_DB_URL": db_url, "GITHUB_API_URL": api_url}
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "CRAWLER_NOTIFY", "CRAWLER_FAILPOINT"):
        env.pop(name, None)
    if failpoint is not None:
        env["CRAWLER_FAILPOINT"] = failpoint
    with (workdir / "stderr").open("a") as stderr:
        return subprocess.run(
            [sys.executable, "-m", "crawler", "audit", "--config", "sources.yaml"],
            cwd=workdir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            timeout=300,
        ).returncode


def _night(point: str, db_url: str, workdir: Path) -> tuple[list[dict[str, Any]], Store]:
    """Night 1 delivered; night 2 (a new release everywhere) killed at ``point``; night 3.
    The webhook's messages from nights 2 and 3."""
    with FakeGitHub(_state("v1"), unauth_limit=5000) as github, WebhookReceiver() as hook:
        (workdir / "sources.yaml").write_text(_config(hook))
        assert _audit(workdir, db_url, github.base_url) == 0
        hook.posts.clear()
        github.set_state(_state("v2"))
        assert _audit(workdir, db_url, github.base_url, point) == -signal.SIGKILL
        assert _audit(workdir, db_url, github.base_url) == 0, (workdir / "stderr").read_text()
        return hook.json_bodies(), Store(db_url)


def _latest(workdir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((workdir / "reports/latest/report.json").read_text())
    return data


@pytest.mark.parametrize("point", ["batch-recorded", "report-written"])
def test_a_night_killed_before_it_finished_is_reported_whole_the_next_night(
    point: str, db_url: str, tmp_path: Path
) -> None:
    """Item 2: killed before the audit finished (its batches recorded, or even its report
    written), the night is never a baseline and opened nothing pending: the next audit
    reports the same six releases as new tonight, and sends them."""
    messages, store = _night(point, db_url, tmp_path)
    assert [(a.id, a.status) for a in store.audits()] == [
        (1, "complete"), (2, "running"), (3, "complete")
    ]  # fmt: skip
    assert store.undelivered_audits() == []
    store.close()
    report = _latest(tmp_path)
    assert report["audit"]["id"] == 3 and report["audit"]["baseline_audit_id"] == 1
    assert [(c["project"], c["kind"], c["after"]) for c in report["changes"]] == [
        (n, "new_release", "v2") for n in NAMES
    ]
    assert {(p["first_audit"], p["new"]) for p in report["pending"]} == {(3, True)}
    assert len(report["pending"]) == 6
    [message] = messages
    assert message["title"].startswith("crawler audit #3 complete: 6 changes, 0 flags, ")
    assert message["title"].endswith("6 new tonight, 6 pending since " + _day(report))
    assert _releases_named(message)


def test_a_night_killed_after_it_finished_is_delivered_late_once_by_the_next(
    db_url: str, tmp_path: Path
) -> None:
    """Item 3 (the issue's "done when"): killed after the changes were recorded and before
    they were delivered, the night is delivered by the next run: the webhook receives those
    changes once, named, marked late with the night they belong to; the next night itself
    has nothing new, so it sends nothing."""
    messages, store = _night("audit-finished", db_url, tmp_path)
    assert [(a.id, a.status) for a in store.audits()] == [
        (1, "complete"), (2, "complete"), (3, "complete")
    ]  # fmt: skip
    assert store.undelivered_audits() == []
    night = store.audits()[1].started_at.date().isoformat()
    store.close()
    [message] = messages
    assert message["title"].startswith(
        f"crawler [late: night of {night}] audit #2 complete: 6 changes, 0 flags, "
    )
    assert message["message"].splitlines()[0] == (
        f"_sent late: audit #2 of the night of {night} finished, but its run stopped before "
        "sending this_"
    )
    assert _releases_named(message)
    report = _latest(tmp_path)  # night 3: nothing new, the releases pending since night 2
    assert (report["audit"]["id"], report["changes"]) == (3, [])
    assert {(p["first_audit"], p["new"]) for p in report["pending"]} == {(2, False)}


def test_a_night_killed_after_sending_is_sent_again_at_least_once(
    db_url: str, tmp_path: Path
) -> None:
    """Killed after sending and before its delivered mark: the next run cannot know the
    message left, and sends it again, marked late (at least once, never none)."""
    messages, store = _night("delivered", db_url, tmp_path)
    assert store.undelivered_audits() == []
    store.close()
    titles = [m["title"].split(" complete:")[0] for m in messages]
    assert titles[0] == "crawler audit #2" and titles[1].endswith("audit #2")
    assert titles[1].startswith("crawler [late: night of ") and len(titles) == 2
    assert all(_releases_named(m) for m in messages)


def _day(report: dict[str, Any]) -> str:
    return str(report["audit"]["started_at"][:10])


def _releases_named(message: dict[str, Any]) -> bool:
    """Every project's new release is in the message's changes, by name and version (the
    pending list after them names them again, as pending)."""
    changes = message["message"].split("**Pending until the catalog takes them**")[0]
    lines = [line for line in changes.splitlines() if "new release" in line]
    return [line.split(":")[0] for line in lines] == [
        f"- **{n}** new release" for n in NAMES
    ] and all("v2" in line for line in lines)
