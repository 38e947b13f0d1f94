from __future__ import annotations

import pytest

from crawler.model import Commit, ProjectSnapshot, Release, Tag, Tracking
from crawler.versions import (
    current_version,
    head_decides_dormancy,
    looks_like_prerelease,
    usable_releases,
)


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("v0.33.0rc3", True),
        ("1.0.0-beta.1", True),
        ("v2.0.0.dev4", True),
        ("v1.4.0-rc3", True),
        ("nightly-2026-11-01", True),
        ("v0.27.0.post1", False),
        ("v0.9.0", False),
        ("26.09", False),
        ("b7123", False),  # llama.cpp build tags are releases, not betas
    ],
)
def test_prerelease_detection(tag: str, expected: bool) -> None:
    assert looks_like_prerelease(tag) is expected


def _release(tag: str, date: str, *, pre: bool = False, draft: bool = False) -> Release:
    return Release(tag, tag, date, pre, draft, f"https://github.com/o/r/releases/tag/{tag}")


RELEASES = (
    _release("v0.32.1", "2026-10-20T00:00:00Z"),
    _release("v0.33.0rc3", "2026-11-02T00:00:00Z"),  # GitHub flag not set: the name says rc
    _release("v0.34.0", "2026-11-03T00:00:00Z", draft=True),
)


def test_release_candidate_is_its_own_fact_not_passed_off_as_the_release() -> None:
    snapshot = ProjectSnapshot(project="vLLM", releases=RELEASES)
    version = current_version("vLLM", snapshot, "Apache-2.0")
    assert (
        version.version, version.version_source, version.prerelease, version.newest_prerelease
    ) == ("v0.32.1", "release", False, "v0.33.0rc3")  # fmt: skip
    only_candidates = ProjectSnapshot(project="vLLM", releases=RELEASES[1:])
    candidate = current_version("vLLM", only_candidates, "Apache-2.0")
    assert (candidate.version, candidate.prerelease, candidate.newest_prerelease) == (
        "v0.33.0rc3",
        True,
        None,
    )
    stable_only = ProjectSnapshot("vLLM", Tracking(prereleases="exclude"), releases=RELEASES)
    stable = current_version("vLLM", stable_only, "Apache-2.0")
    assert (stable.version, stable.prerelease, stable.published_at, stable.newest_prerelease) == (
        "v0.32.1",
        False,
        "2026-10-20T00:00:00Z",
        None,
    )


def test_drafts_and_tag_pattern_are_filtered() -> None:
    tracking = Tracking(tag_pattern=r"^v0\.32")
    assert [r.tag for r in usable_releases(tracking, RELEASES)] == ["v0.32.1"]


def test_falls_back_to_tag_then_commit_never_inventing_a_version() -> None:
    spec = "TritonBench"
    tags = (
        Tag("v0.1.0", "a" * 40, "2025-01-01T00:00:00Z"),
        Tag("v0.2.0", "b" * 40, "2025-06-01T00:00:00Z"),
    )
    by_tag = current_version(spec, ProjectSnapshot(project="t", releases=(), tags=tags), None)
    assert (by_tag.version, by_tag.version_source) == ("v0.2.0", "tag")
    head = Commit("c" * 40, "2025-08-15T00:00:00Z", "https://github.com/o/r/commit/" + "c" * 40)
    by_commit = current_version(
        spec, ProjectSnapshot(project="t", releases=(), tags=(), head=head), None
    )
    assert (by_commit.version, by_commit.version_source, by_commit.published_at) == (
        "cccccccccccc",
        "commit",
        "2025-08-15T00:00:00Z",
    )
    nothing = current_version(spec, ProjectSnapshot(project="t", releases=(), tags=()), None)
    assert (nothing.version, nothing.version_source) == (None, None)


def test_rest_tags_without_dates_are_ordered_by_version_not_by_name() -> None:
    spec = "x"
    tags = tuple(Tag(n, "0" * 40) for n in ("v0.9.0", "v0.20.0", "v0.10.1", "weekly", "v0.20.0rc1"))
    snapshot = ProjectSnapshot(project="x", releases=(), tags=tags)
    version = current_version(spec, snapshot, None)
    assert (version.version, version.version_source, version.published_at) == (
        "v0.20.0",
        "tag",
        None,
    )


def test_the_forge_latest_mark_wins_then_version_order_never_publication_time() -> None:
    from dataclasses import replace

    final = _release("v2.0.0", "2026-10-01T00:00:00Z")
    backport = _release("v1.9.9", "2026-10-02T00:00:00Z")  # published after v2.0.0
    candidate = _release("v2.1.0rc1", "2026-10-01T00:00:35Z")  # 35 s after the final
    snapshot = ProjectSnapshot(project="p", releases=(final, backport, candidate))
    row = current_version("p", snapshot, None)
    assert (row.version, row.newest_prerelease) == ("v2.0.0", "v2.1.0rc1")
    marked = replace(backport, is_latest=True)  # the maintainers said so: the forge decides
    chosen = current_version("p", ProjectSnapshot("p", releases=(final, marked, candidate)), None)
    assert (chosen.version, chosen.newest_prerelease) == ("v1.9.9", "v2.1.0rc1")


def test_a_new_release_is_reported_from_the_release_shown_not_the_newer_pre_release() -> None:
    from crawler.diff.releases import version_changes

    night_one = (
        _release("v1.0.0", "2026-10-01T00:00:00Z"),
        _release("v1.1.0rc1", "2026-10-01T00:00:35Z"),
    )
    night_two = (*night_one, _release("v1.1.0", "2026-10-10T00:00:00Z"))
    changes = version_changes(
        "p", ProjectSnapshot("p", releases=night_one), ProjectSnapshot("p", releases=night_two)
    )
    assert [(c.kind.value, c.before, c.after) for c in changes] == [
        ("new_release", "v1.0.0", "v1.1.0")
    ]


def test_the_head_decides_dormancy_only_when_no_release_is_recent() -> None:
    """A source asks for the head's date (one request) only when its releases cannot say the
    project is lively: none, undated, or all older than the period."""
    now = "2026-12-01T00:00:00Z"

    def snap(*dates: str | None, head: Commit | None = None) -> ProjectSnapshot:
        releases = tuple(Release(f"v{i}", None, d, False, False, "") for i, d in enumerate(dates))
        return ProjectSnapshot("p", releases=releases, head=head)

    assert head_decides_dormancy(snap(), now, 365) is True  # nothing released
    assert head_decides_dormancy(snap(None), now, 365) is True  # undated
    assert head_decides_dormancy(snap("2025-11-30T00:00:00Z"), now, 365) is True  # 366 days
    assert head_decides_dormancy(snap("2024-01-01T00:00:00Z", "2026-06-01T00:00:00Z"), now,
                                 365) is False  # fmt: skip
    tagged = ProjectSnapshot("p", tags=(Tag("t1", "a" * 40, "2026-11-01T00:00:00Z"),))
    assert head_decides_dormancy(tagged, now, 365) is False
    dated = snap(head=Commit("b" * 40, "2024-01-01T00:00:00Z", ""))
    assert head_decides_dormancy(dated, now, 365) is False  # the head is in hand already
