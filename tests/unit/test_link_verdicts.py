"""The link classifier (crawler.diff.links) and upstream dormancy (crawler.diff.health): pure,
answers and histories in, outcomes and changes out, over nights on a test clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from crawler.diff.health import dormancy, dormant_change, newest_release_date
from crawler.diff.links import (
    LinkHistory,
    LinkTarget,
    LinkVerdict,
    due_links,
    judge,
    link_changes,
)
from crawler.model import ChangeKind, Commit, LinkAnswer, ProjectSnapshot, Release, RepoInfo, Tag

NIGHT = datetime(2026, 11, 2, 3, 0, tzinfo=UTC)
DAY = timedelta(days=1)
GRACE = timedelta(days=3)
URL = "https://docs.vendor.example/support.html"
TARGET = LinkTarget(URL, "Kit", "sources.yaml line 4 (page 'support')")


def _nights(answers: list[LinkAnswer]) -> list[tuple[str, int]]:
    """Each night's (outcome, changes reported), the history carried from night to night."""
    history: LinkHistory | None = None
    seen = []
    for night, answer in enumerate(answers):
        before = {URL: history} if history is not None else {}
        history = judge(answer, history, NIGHT + night * DAY, GRACE)
        changes = link_changes([LinkVerdict(TARGET, history)], before)
        seen.append((history.outcome, len(changes)))
    return seen


OK = LinkAnswer(URL, 200)
GONE = LinkAnswer(URL, 404, failure="not_found", reason="HTTP 404")
NXDOMAIN = LinkAnswer(URL, None, failure="unresolved", reason="cannot resolve")
TIMEOUT = LinkAnswer(URL, None, failure="unreachable", reason="timed out after 30s")
LOOP = LinkAnswer(URL, None, failure="refused", reason="redirect loop: a → b → a")


def test_a_404_on_one_night_is_not_reported_and_on_two_nights_in_a_row_it_is() -> None:
    assert _nights([OK, GONE, OK]) == [("ok", 0), ("failing", 0), ("ok", 0)]
    assert _nights([OK, GONE, GONE, GONE]) == [
        ("ok", 0), ("failing", 0), ("broken", 1), ("broken", 0),
    ]  # fmt: skip
    assert _nights([NXDOMAIN, NXDOMAIN]) == [("failing", 0), ("broken", 1)]


def test_a_second_check_on_the_same_night_is_not_a_second_night() -> None:
    first = judge(GONE, None, NIGHT, GRACE)
    rerun = judge(GONE, first, NIGHT + timedelta(hours=2), GRACE)
    assert (first.outcome, rerun.outcome, rerun.gone_nights) == ("failing", "failing", 1)
    assert judge(GONE, rerun, NIGHT + DAY, GRACE).outcome == "broken"


def test_a_timeout_is_reported_only_once_it_has_lasted_the_grace_days() -> None:
    assert _nights([TIMEOUT] * 3) == [("failing", 0)] * 3  # days 0, 1, 2: under 3 days
    assert _nights([TIMEOUT] * 5) == [
        *[("failing", 0)] * 3, ("unreachable", 1), ("unreachable", 0),
    ]  # fmt: skip
    assert _nights([TIMEOUT, TIMEOUT, OK, TIMEOUT, TIMEOUT]) == [
        ("failing", 0), ("failing", 0), ("ok", 0), ("failing", 0), ("failing", 0),
    ]  # fmt: skip


def test_our_own_refusals_are_errors_never_findings() -> None:
    assert _nights([LOOP, LOOP, LOOP]) == [("error", 0)] * 3
    history = judge(LOOP, None, NIGHT, GRACE)
    assert history.reason == "redirect loop: a → b → a"


def test_a_permanent_move_is_reported_once_with_its_final_url() -> None:
    moved = LinkAnswer(URL, 200, moved_to="https://docs.vendor.example/v2/support.html")
    assert _nights([OK, moved, moved]) == [("ok", 0), ("moved", 1), ("moved", 0)]
    history = judge(moved, None, NIGHT, GRACE)
    (change,) = link_changes([LinkVerdict(TARGET, history)], {})
    assert (change.project, change.kind, change.before, change.after, change.evidence_url) == (
        "Kit", ChangeKind.LINK_MOVED, URL, "https://docs.vendor.example/v2/support.html", URL,
    )  # fmt: skip
    assert change.details["where"] == ["sources.yaml line 4 (page 'support')"]
    elsewhere = LinkAnswer(URL, 200, moved_to="https://docs.vendor.example/v3/")
    again = judge(elsewhere, history, NIGHT + DAY, GRACE)
    assert [c.after for c in link_changes([LinkVerdict(TARGET, again)], {URL: history})] == [
        "https://docs.vendor.example/v3/"
    ]


def test_a_304_keeps_the_validators_and_a_failure_drops_them() -> None:
    first = judge(LinkAnswer(URL, 200, etag='"v1"', last_modified="Mon"), None, NIGHT, GRACE)
    same = judge(LinkAnswer(URL, 304), first, NIGHT + DAY, GRACE)
    assert (same.outcome, same.etag, same.last_modified, same.last_ok) == (
        "ok", '"v1"', "Mon", NIGHT + DAY,
    )  # fmt: skip
    gone = judge(GONE, same, NIGHT + 2 * DAY, GRACE)
    assert (gone.etag, gone.last_ok, gone.failing_since) == (None, NIGHT + DAY, NIGHT + 2 * DAY)


def test_a_night_checks_the_least_recently_checked_links_first() -> None:
    targets = [LinkTarget(f"https://x.example/{n}", "P", "w") for n in range(5)]
    history = {
        "https://x.example/0": LinkHistory("https://x.example/0", last_checked=NIGHT),
        "https://x.example/1": LinkHistory("https://x.example/1", last_checked=NIGHT - DAY),
    }
    due = due_links([*targets, targets[2]], history, 4)
    assert [t.url[-1] for t in due] == ["2", "3", "4", "1"]


def _repo_snapshot(commit: str | None, releases: tuple[str, ...] = (), tags: tuple[str, ...] = ()
                   ) -> ProjectSnapshot:  # fmt: skip
    url = "https://github.com/pytorch/glow"
    return ProjectSnapshot(
        "Glow",
        repo=RepoInfo(1, "pytorch/glow", "master", False, url),
        releases=tuple(
            Release(f"v{i}", None, day, False, False, f"{url}/releases/v{i}")
            for i, day in enumerate(releases)
        ),
        tags=tuple(Tag(f"t{i}", "a" * 40, day) for i, day in enumerate(tags)),
        head=Commit("b" * 40, commit, f"{url}/commit/bbb") if commit is not None else None,
    )


def test_dormant_when_neither_a_commit_nor_a_release_within_the_year() -> None:
    year = timedelta(days=365)
    old = _repo_snapshot("2024-05-11T00:00:00Z", tags=("2023-01-01T00:00:00Z",))
    found = dormancy(old, NIGHT, year)
    assert found is not None
    assert (found.last_commit, found.last_release, found.days) == (
        "2024-05-11T00:00:00Z", "2023-01-01T00:00:00Z", 905,
    )  # fmt: skip
    assert dormancy(_repo_snapshot("2026-10-01T00:00:00Z"), NIGHT, year) is None
    fresh_release = _repo_snapshot("2024-05-11T00:00:00Z", releases=("2026-06-01T00:00:00Z",))
    assert dormancy(fresh_release, NIGHT, year) is None
    assert newest_release_date(fresh_release) == "2026-06-01T00:00:00Z"
    assert dormancy(_repo_snapshot(None, releases=("2020-01-01T00:00:00Z",)), NIGHT, year) is None


def test_dormancy_is_a_change_the_night_it_begins_and_not_after() -> None:
    year = timedelta(days=365)
    snapshot = _repo_snapshot("2025-11-02T12:00:00Z")
    # at the previous audit the last commit was 364 days old: lively; tonight 366: dormant
    change = dormant_change("Glow", snapshot, snapshot, NIGHT + DAY, NIGHT - DAY, year)
    assert change is not None
    assert (change.kind, change.after, change.evidence_url) == (
        ChangeKind.UPSTREAM_DORMANT, "2025-11-02T12:00:00Z", "https://github.com/pytorch/glow",
    )  # fmt: skip
    assert change.details == {
        "last_commit": "2025-11-02T12:00:00Z", "last_release": None, "days": 365,
        "repo": "pytorch/glow",
    }  # fmt: skip
    assert dormant_change("Glow", snapshot, snapshot, NIGHT + 2 * DAY, NIGHT + DAY, year) is None
    assert dormant_change("Glow", None, snapshot, NIGHT + DAY, None, year) is not None
