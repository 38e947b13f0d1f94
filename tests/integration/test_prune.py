"""``crawler prune --keep-days N`` (issue 11 item 7): exact rows removed, every state still
referenced kept, and the next audit still reports nothing for unchanged projects."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import select, update

from crawler.audit import run_audit
from crawler.cli import cli
from crawler.config import parse_config
from crawler.model import Change, ChangeKind, FetchError, ProjectResult, ProjectSnapshot, Release
from crawler.store import Store
from crawler.store.links import link_findings, record_link_findings
from crawler.store.maintenance import prune, row_counts
from crawler.store.tables import AuditRow, HttpCacheRow, SnapshotRow
from crawler.upstream.http import CachedResponse
from crawler_fakes.github import FakeGitHub, FakeRepo, GitHubState, mit_repo, release_on

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _day(day: int) -> datetime:
    return datetime(2026, 11, day, 3, 0, tzinfo=UTC)


def _ok(project: str, tag: str) -> ProjectResult:
    release = Release(tag, tag, "2026-10-01T00:00:00Z", False, False, f"https://x/{project}/{tag}")
    snapshot = ProjectSnapshot(project=project, releases=(release,))
    return ProjectResult(project, "ok", snapshot=snapshot)


def _error(project: str) -> ProjectResult:
    failure = FetchError(project, "releases", f"https://x/{project}", "HTTP 500")
    return ProjectResult(project, "error", errors=(failure,))


def _audit(
    store: Store, day: int, results: list[ProjectResult], status: str, names: str = "abc"
) -> int:
    audit_id = store.begin_audit("sources.yaml", list(names), _day(day))
    if status != "running":  # a killed audit leaves only its row
        baseline = store.baseline_for(audit_id)
        finished = _day(day) + timedelta(minutes=5)
        store.finish_audit(
            audit_id, results, status, finished, baseline.id if baseline else None, {}
        )
    return audit_id


def _history(store: Store) -> None:
    """Nine audits; a flips v1 → v2 → v1 → v2 → v4, c goes v1 → v3 → v1."""
    _audit(store, 1, [_ok("a", "v1"), _ok("b", "v1"), _ok("c", "v1")], "complete")
    _audit(store, 2, [_ok("a", "v2"), _ok("b", "v1"), _ok("c", "v1")], "complete")
    _audit(store, 3, [_ok("a", "v1"), _error("b"), _ok("c", "v3")], "partial")
    _audit(store, 4, [], "running", names="abcd")  # killed
    _audit(store, 5, [_ok("a", "v2"), _ok("b", "v2"), _ok("c", "v1")], "complete")
    _audit(store, 6, [_error("a"), _error("b"), _error("c")], "failed")
    _audit(store, 25, [_ok("a", "v4"), _ok("b", "v2"), _ok("c", "v1")], "complete")
    deferred = ProjectResult("c", "deferred", note="rate budget spent")
    _audit(store, 26, [_ok("a", "v4"), _ok("b", "v2"), deferred], "complete")
    _audit(store, 29, [], "running")  # killed, recent
    for key, stored, used in (
        ("stale", NOW - timedelta(days=40), None),
        ("old but used", NOW - timedelta(days=40), NOW - timedelta(days=1)),
        ("fresh", NOW - timedelta(days=2), None),
    ):
        store.put_response(key, CachedResponse(f"https://x/{key}", '"e"', None, b"{}"))
        with store.engine.begin() as conn:  # as if stored (and used) that long ago
            row = update(HttpCacheRow).where(HttpCacheRow.key == key)
            conn.execute(row.values(stored_at=stored, used_at=used))


def _states(store: Store, audit_id: int) -> dict[str, str]:
    return {
        name: state.snapshot.releases[0].tag  # type: ignore[index]
        for name, state in store.states_as_of(audit_id).items()
    }


def _first_seen(store: Store) -> dict[str, int]:
    with store.engine.connect() as conn:
        rows = conn.execute(select(SnapshotRow.data, SnapshotRow.first_audit_id)).all()
    seen = {}
    for data, first in rows:
        snapshot = ProjectSnapshot.from_dict(json.loads(data))
        seen[f"{snapshot.project}@{snapshot.releases[0].tag}"] = first  # type: ignore[index]
    return seen


def test_prune_removes_exactly_what_nothing_references(db_url: str) -> None:
    store = Store(db_url)
    _history(store)
    kept_states = {audit_id: _states(store, audit_id) for audit_id in (5, 7, 8)}
    with store.engine.connect() as conn:
        assert row_counts(conn) == {
            "audits": 9,
            "observations": 15,
            "fetch_errors": 4,
            "snapshots": 7,
            # the listed projects (abc, and abcd for audit 4) and the sets each audit checked
            # (abc again, ac for audit 3, none for audit 6, ab for audit 8): stored once each
            "project_sets": 5,
            "http_cache": 3,
        }

    result = prune(store, 7, now=NOW)

    # in the window: 7, 8, 9; baseline of 7: 5; 5 also holds b's and c's state. 1-4 and 6 go
    # (1 is old and every project changed since; 4 and 6 never count as state)
    assert (result.kept_audits, result.removed_audits) == ((5, 7, 8, 9), (1, 2, 3, 4, 6))
    assert result.removed == {
        "audits": 5,
        "observations": 10,
        "fetch_errors": 4,
        "snapshots": 3,  # a@v1, b@v1, c@v3: no kept observation points at them
        "project_sets": 3,  # the killed audit's list with d, and the checked sets ac and none
        "http_cache": 1,  # unused for 40 days
    }
    assert [a.id for a in store.audits()] == [5, 7, 8, 9]
    assert {audit_id: _states(store, audit_id) for audit_id in (5, 7, 8)} == kept_states
    assert kept_states[8] == {"a": "v4", "b": "v2", "c": "v1"}
    assert store.baseline_for().id == 8  # type: ignore[union-attr]
    # snapshots first seen in a pruned audit now date from the oldest kept one that saw them
    assert _first_seen(store) == {"a@v2": 5, "b@v2": 5, "c@v1": 5, "a@v4": 7}
    with store.engine.connect() as conn:
        keys = sorted(conn.scalars(select(HttpCacheRow.key)))
    assert keys == ["fresh", "old but used"]
    store.close()


def test_prune_never_removes_the_last_complete_audit_or_its_state(db_url: str) -> None:
    store = Store(db_url)
    _history(store)
    result = prune(store, 0, now=NOW + timedelta(days=365))
    # nothing is in the window: the last complete audit (8), its baseline (7) and the audit
    # holding b's and c's state (5) stay; the killed audit 9 goes (prune holds the audit lock)
    assert result.kept_audits == (5, 7, 8)
    assert result.after == {
        "audits": 3,
        "observations": 5,
        "fetch_errors": 0,
        "snapshots": 4,
        "project_sets": 2,  # abc (listed and checked by 5 and 7) and ab (checked by 8)
        "http_cache": 0,
    }
    assert _states(store, 8) == {"a": "v4", "b": "v2", "c": "v1"}
    store.close()


def test_dry_run_counts_and_changes_nothing(db_url: str) -> None:
    store = Store(db_url)
    _history(store)
    result = prune(store, 7, now=NOW, dry_run=True)
    assert result.removed["audits"] == 5 and result.removed["observations"] == 10
    with store.engine.connect() as conn:
        assert row_counts(conn) == result.before
        assert len(conn.scalars(select(AuditRow.id)).all()) == 9
    store.close()


def test_prune_waits_for_no_audit(db_url: str) -> None:
    from crawler.store.lock import AuditLocked

    store = Store(db_url)
    _history(store)
    with store.audit_lock("crawler audit"), pytest.raises(AuditLocked):
        prune(store, 7, now=NOW)
    with store.engine.connect() as conn:
        assert row_counts(conn)["audits"] == 9
    runner = CliRunner()
    with store.audit_lock("crawler audit"):
        refused = runner.invoke(cli, ["prune", "--keep-days", "7", "--db", db_url])
    assert refused.exit_code == 3
    assert "not pruning (exit status 3)" in refused.output
    store.close()


def test_an_audit_after_pruning_reports_no_change_for_unchanged_projects(
    db_url: str, tmp_path: Path
) -> None:
    config = parse_config(
        "projects:\n  - name: Alpha\n    repo: org/alpha\n  - name: Beta\n    repo: org/beta\n"
    )
    store = Store(db_url)
    with FakeGitHub(_github("v1"), unauth_limit=5000) as server:
        env = server.env()
        for tags in ("v1", "v2", "v3", "v3"):  # Alpha moves twice, then nothing changes
            server.set_state(_github(tags))
            run_audit(config, store, tmp_path / "r", env=env, sleep=lambda _s: None)
        long_ago = datetime.now(UTC) - timedelta(days=30)
        with store.engine.begin() as conn:
            conn.execute(update(AuditRow).where(AuditRow.id < 4).values(started_at=long_ago))
            cache_rows = row_counts(conn)["http_cache"]
        pruned = CliRunner().invoke(cli, ["prune", "--keep-days", "7", "--db", db_url])
        assert pruned.exit_code == 0, pruned.output
        assert _without_cutoff(pruned.output, 7) == [
            "removed what is older than 7 days (before CUTOFF) and nothing still needs: 1 audit, "
            "1 observation, 0 fetch errors, 1 snapshot, 0 project lists, 0 HTTP cache entries",
            "kept 3 audits (recent or still needed): #1, #3, #4",
        ]
        with store.engine.connect() as conn:
            assert row_counts(conn)["http_cache"] == cache_rows
        after = run_audit(config, store, tmp_path / "r", env=env, sleep=lambda _s: None)
    assert (after.status, after.report.as_json()["changes"], after.exit_code) == ("complete", [], 0)
    assert after.report.as_json()["audit"]["baseline_audit_id"] == 4
    versions = {row["name"]: row["version"] for row in after.report.as_json()["projects"]}
    assert versions == {"Alpha": "v3", "Beta": "v1"}
    store.close()


def test_a_cache_entry_still_answering_304s_is_not_stale(db_url: str) -> None:
    """A 304 does not rewrite ``stored_at``: reading the entry marks it used, at most every
    12 hours, so prune keeps validators that still save requests."""
    store = Store(db_url)
    store.put_response("k", CachedResponse("https://x/k", '"e"', None, b"{}"))
    long_ago = datetime.now(UTC) - timedelta(days=40)
    with store.engine.begin() as conn:
        conn.execute(update(HttpCacheRow).values(stored_at=long_ago, used_at=long_ago))
    before_read = datetime.now(UTC).replace(microsecond=0)
    assert store.get_response("k") is not None

    def used_at() -> datetime:
        with store.engine.connect() as conn:
            value = conn.scalar(select(HttpCacheRow.used_at))
        assert value is not None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value

    marked = used_at()
    assert marked >= before_read
    assert store.get_response("k") is not None
    assert used_at() == marked  # read again within 12 hours: no write
    assert prune(store, 7).removed["http_cache"] == 0
    store.close()


def _github(alpha: str) -> GitHubState:
    def repo(name: str, repo_id: int, tag: str) -> FakeRepo:
        return mit_repo("org", name, repo_id, [release_on(tag, "2026-10-01T00:00:00Z")])

    return GitHubState(repos=[repo("alpha", 1, alpha), repo("beta", 2, "v1")])


def test_an_audits_link_findings_go_with_it(db_url: str) -> None:
    """What an audit's link step reported (kept for its report to re-render) is pruned with
    the audit, and kept with a kept one (before: a foreign key held the audit's row back)."""
    store = Store(db_url)
    _history(store)
    for audit_id in (2, 7):
        moved = Change("a", ChangeKind.LINK_MOVED, "https://x/old", "https://x/new",
                       "https://x/old", {"where": ["sources.yaml line 3 (homepage)"]})  # fmt: skip
        record_link_findings(store, audit_id, [moved], [])
    result = prune(store, 7, now=NOW)
    assert 2 in result.removed_audits and 7 in result.kept_audits
    assert link_findings(store, 2) == ([], [])
    assert [c.after for c in link_findings(store, 7)[0]] == ["https://x/new"]
    store.close()


def _without_cutoff(output: str, keep_days: int) -> list[str]:
    """The prune lines with the cutoff moment (checked: about ``keep_days`` ago) as CUTOFF."""
    import re

    [cutoff] = re.findall(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", output)
    ago = datetime.now(UTC) - datetime.fromisoformat(cutoff)
    assert timedelta(days=keep_days) <= ago < timedelta(days=keep_days, minutes=5)
    return output.replace(cutoff, "CUTOFF").splitlines()


def test_prune_keep_days_0_says_it_keeps_only_what_is_still_needed(
    db_url: str, tmp_path: Path
) -> None:
    """`--keep-days 0` read "removed (older than 2026-12-05)", today's date, for audits of
    that very day, and "1 audits", "0 http_cache": now it says older than now, and in words."""
    config = parse_config("projects:\n  - name: Alpha\n    repo: org/alpha\n")
    store = Store(db_url)
    with FakeGitHub(_github("v1"), unauth_limit=5000) as server:
        for tags in ("v1", "v2", "v2"):
            server.set_state(_github(tags))
            run_audit(config, store, tmp_path / "r", env=server.env(), sleep=lambda _s: None)
    store.close()
    for dry_run, verb in ((["--dry-run"], "would remove"), ([], "removed")):
        pruned = CliRunner().invoke(cli, ["prune", "--keep-days", "0", *dry_run, "--db", db_url])
        assert pruned.exit_code == 0, pruned.output
        lines = _without_cutoff(pruned.output, 0)
        assert lines[0].startswith(
            f"{verb} everything older than now (CUTOFF) that nothing still needs: 1 audit, "
        )
        assert lines[1] == "kept 2 audits (still needed): #2, #3"
