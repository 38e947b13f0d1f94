from __future__ import annotations

from dataclasses import replace

import pytest

from crawler.model import Commit, ProjectSnapshot, Release, Tag, Tracking
from crawler.versions import (
    current_version,
    head_decides_dormancy,
    is_release_candidate,
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


@pytest.mark.parametrize(
    ("tag", "candidate"),
    [("v0.33.0rc3", True), ("1.4.0-rc3", True), ("2.0.0.RC1", True), ("v1.40a4", False),
     ("v2.0.0.dev4", False), ("1.0.0-beta.1", False), ("source-2", False)],
)  # fmt: skip
def test_a_release_candidate_is_told_from_other_pre_releases(tag: str, candidate: bool) -> None:
    assert is_release_candidate(tag) is candidate


def _release(tag: str, date: str, *, pre: bool = False, draft: bool = False) -> Release:
    return Release(tag, tag, date, pre, draft, f"https://github.com/o/r/releases/tag/{tag}")


RELEASES = (
    _release("v0.32.1", "2026-10-20T00:00:00Z"),
    _release("v0.33.0rc3", "2026-11-02T00:00:00Z"),  # GitHub flag not set: the name says rc
    _release("v0.34.0", "2026-11-03T00:00:00Z", draft=True),
)


def test_the_row_shows_the_highest_release_a_release_candidate_included_by_default() -> None:
    """The catalog page's convention: "v0.33.0rc3 (release candidate)", the newest release in
    version order, not the newest final one (issue 32, defect 1: the row had followed the
    forge's "latest" mark and showed the final release below the candidate)."""
    snapshot = ProjectSnapshot(project="vLLM", releases=RELEASES)
    version = current_version("vLLM", snapshot, "Apache-2.0")
    assert (
        version.version, version.version_source, version.prerelease, version.published_at,
        version.newest_prerelease,
    ) == ("v0.33.0rc3", "release", True, "2026-11-02T00:00:00Z", None)  # fmt: skip
    stable_only = ProjectSnapshot("vLLM", Tracking(prereleases="exclude"), releases=RELEASES)
    stable = current_version("vLLM", stable_only, "Apache-2.0")
    assert (stable.version, stable.prerelease, stable.published_at, stable.newest_prerelease) == (
        "v0.32.1",
        False,
        "2026-10-20T00:00:00Z",
        None,
    )


SEED_VLLM = (  # the seed's vLLM: GitHub marks the newest final release "latest"
    _release("v0.32.0", "2026-09-20T00:00:00Z"),
    _release("v0.32.1", "2026-10-05T00:00:00Z"),
    replace(_release("v0.32.2", "2026-10-28T00:00:00Z"), is_latest=True),
    _release("v0.33.0rc1", "2026-10-15T00:00:00Z", pre=True),
    _release("v0.33.0rc2", "2026-10-24T00:00:00Z", pre=True),
    _release("v0.33.0rc3", "2026-11-02T00:00:00Z", pre=True),
)


def test_the_forge_latest_mark_does_not_hide_a_higher_release_candidate() -> None:
    """Issue 32, defect 1: GitHub's "latest" (v0.32.2) is not the row; the candidate above it is."""
    row = current_version("vLLM", ProjectSnapshot("vLLM", releases=SEED_VLLM), None)
    assert (row.version, row.prerelease, row.published_at, row.newest_prerelease) == (
        "v0.33.0rc3", True, "2026-11-02T00:00:00Z", None,
    )  # fmt: skip
    newest_final = Tracking(release_shown="newest_final")
    other = current_version("vLLM", ProjectSnapshot("vLLM", newest_final, releases=SEED_VLLM), None)
    assert (other.version, other.prerelease, other.published_at, other.newest_prerelease) == (
        "v0.32.2", False, "2026-10-28T00:00:00Z", "v0.33.0rc3",
    )  # fmt: skip


def test_a_final_published_after_a_pre_release_of_its_version_wins_by_version_order() -> None:
    """v1.40 after v1.40a4: the final is the higher version; a backport published after both
    (v1.39.1) does not hide it, and before v1.40 the alpha is the row, labelled a pre-release."""
    alphas = tuple(_release(f"v1.40a{i}", f"2026-0{i}-01T00:00:00Z") for i in range(1, 5))
    older = (_release("v1.39", "2025-12-01T00:00:00Z"), *alphas)
    before = current_version("p", ProjectSnapshot("p", releases=older), None)
    assert (before.version, before.prerelease) == ("v1.40a4", True)
    final = _release("v1.40", "2026-05-01T00:00:00Z")
    backport = _release("v1.39.1", "2026-05-02T00:00:00Z")
    for shown in ("highest_version", "newest_final"):
        tracking = Tracking(release_shown=shown)  # type: ignore[arg-type]
        after = ProjectSnapshot("p", tracking, releases=(*older, final, backport))
        row = current_version("p", after, None)
        assert (row.version, row.prerelease, row.newest_prerelease) == ("v1.40", False, None)


def test_an_upcoming_release_dated_after_the_fetch_is_not_the_row_yet() -> None:
    """GitLab's ``upcoming_release`` (dated in the future) is announced, not out: the row stays
    on the release that is out, and the announced one is the newer pre-release."""
    from crawler.model import Provenance

    out = _release("v2.2.0", "2026-11-10T00:00:00Z")
    upcoming = _release("v3.0.0-rc1", "2030-01-15T09:00:00Z", pre=True)
    fetched = (("releases", Provenance("https://gitlab.example/r", "2026-11-15T00:00:00Z")),)
    snapshot = ProjectSnapshot("p", releases=(out, upcoming), provenance=fetched)
    row = current_version("p", snapshot, None)
    assert (row.version, row.prerelease, row.newest_prerelease) == ("v2.2.0", False, "v3.0.0-rc1")
    later = (("releases", Provenance("https://gitlab.example/r", "2030-01-16T00:00:00Z")),)
    released = current_version("p", replace(snapshot, provenance=later), None)
    assert (released.version, released.prerelease) == ("v3.0.0-rc1", True)


def test_newest_final_shows_the_final_release_and_keeps_the_candidate_as_its_own_fact() -> None:
    """``release_shown: newest_final``: the reading a catalog may choose instead."""
    tracking = Tracking(release_shown="newest_final")
    snapshot = ProjectSnapshot(project="vLLM", tracking=tracking, releases=RELEASES)
    version = current_version("vLLM", snapshot, "Apache-2.0")
    assert (
        version.version, version.version_source, version.prerelease, version.newest_prerelease
    ) == ("v0.32.1", "release", False, "v0.33.0rc3")  # fmt: skip
    only_candidates = ProjectSnapshot(project="vLLM", tracking=tracking, releases=RELEASES[1:])
    candidate = current_version("vLLM", only_candidates, "Apache-2.0")
    assert (candidate.version, candidate.prerelease, candidate.newest_prerelease) == (
        "v0.33.0rc3",
        True,
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


def test_version_order_never_publication_time_and_the_forge_mark_only_for_newest_final() -> None:
    final = _release("v2.0.0", "2026-10-01T00:00:00Z")
    backport = _release("v1.9.9", "2026-10-02T00:00:00Z")  # published after v2.0.0
    candidate = _release("v2.1.0rc1", "2026-10-01T00:00:35Z")  # 35 s after the final
    marked = replace(backport, is_latest=True)  # the maintainers said so
    by_default = current_version("p", ProjectSnapshot("p", releases=(final, marked)), None)
    assert (by_default.version, by_default.newest_prerelease) == ("v2.0.0", None)
    highest = current_version("p", ProjectSnapshot("p", releases=(final, marked, candidate)), None)
    assert (highest.version, highest.prerelease) == ("v2.1.0rc1", True)
    newest_final = Tracking(release_shown="newest_final")
    snapshot = ProjectSnapshot(
        project="p", tracking=newest_final, releases=(final, backport, candidate)
    )
    row = current_version("p", snapshot, None)
    assert (row.version, row.newest_prerelease) == ("v2.0.0", "v2.1.0rc1")
    chosen = current_version(
        "p", ProjectSnapshot("p", newest_final, releases=(final, marked, candidate)), None
    )  # newest_final: the forge decides
    assert (chosen.version, chosen.newest_prerelease) == ("v1.9.9", "v2.1.0rc1")


@pytest.mark.parametrize(
    ("shown", "before"), [("highest_version", "v1.1.0rc1"), ("newest_final", "v1.0.0")]
)
def test_a_new_release_is_reported_from_the_release_the_row_showed(shown: str, before: str) -> None:
    from crawler.diff.releases import version_changes

    tracking = Tracking(release_shown=shown)  # type: ignore[arg-type]
    night_one = (
        _release("v1.0.0", "2026-10-01T00:00:00Z"),
        _release("v1.1.0rc1", "2026-10-01T00:00:35Z"),
    )
    night_two = (*night_one, _release("v1.1.0", "2026-10-10T00:00:00Z"))
    changes = version_changes(
        "p",
        ProjectSnapshot("p", tracking, releases=night_one),
        ProjectSnapshot("p", tracking, releases=night_two),
    )
    assert [(c.kind.value, c.before, c.after) for c in changes] == [
        ("new_release", before, "v1.1.0")
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



def test_among_equal_versions_the_newest_published_is_the_row() -> None:
    """The row's release is found without sorting every release (CPU, issue 32): among tags of
    one version ("v1.0" and "1.0") and among tags that are no version, the first of the usable
    releases (newest published, then by tag) still wins, as it did when the row was the first
    of a stable sort."""
    same = (_release("v1.0", "2026-01-01T00:00:00Z"), _release("1.0", "2026-02-01T00:00:00Z"))
    for listed in (same, same[::-1]):
        assert current_version("p", ProjectSnapshot("p", releases=listed), None).version == "1.0"
    one_day = (_release("1.0", "2026-01-01T00:00:00Z"), _release("v1.0", "2026-01-01T00:00:00Z"))
    assert current_version("p", ProjectSnapshot("p", releases=one_day), None).version == "v1.0"
    names = (_release("latest", "2026-01-01T00:00:00Z"), _release("stable", "2026-01-01T00:00:00Z"))
    assert current_version("p", ProjectSnapshot("p", releases=names), None).version == "stable"
