"""The snapshot model's own behaviour: what other tests take for granted."""

from __future__ import annotations

from dataclasses import replace

from crawler.model import (
    Commit,
    ProjectSnapshot,
    Provenance,
    ReadmeTop,
    Release,
    RepoInfo,
    Tag,
)


def _snapshot(*, tag: str = "v1.0", head: str = "a" * 40, when: str = "2026-11-01T00:00:00Z"):
    return ProjectSnapshot(
        project="p",
        repo=RepoInfo(7, "o/p", "main", False, "https://forge.example/o/p"),
        releases=(Release(tag, tag, "2026-10-01T00:00:00Z", False, False, f"https://r/{tag}"),),
        tags=(Tag("v0.9", "b" * 40),),
        head=Commit(head, "2026-10-02T00:00:00Z", f"https://c/{head}"),
        provenance=(("repo", Provenance("https://api.example/graphql", when)),),
    )


def test_sharing_keeps_one_copy_of_what_did_not_change() -> None:
    stored = _snapshot()
    fetched = _snapshot(head="c" * 40, when="2026-11-02T00:00:00Z")

    shared = fetched.sharing(stored)

    assert shared == fetched  # the same value
    assert shared.to_json() == fetched.to_json()
    assert shared.content_hash() == fetched.content_hash()
    # equal facts are the stored objects; changed facts and the provenance are the new ones
    assert shared.repo is stored.repo
    assert shared.releases is stored.releases
    assert shared.tags is stored.tags
    assert shared.head is fetched.head and shared.head != stored.head
    assert shared.provenance is fetched.provenance


def test_sharing_with_nothing_or_nothing_in_common_returns_the_snapshot_itself() -> None:
    fetched = _snapshot()
    assert fetched.sharing(None) is fetched
    other = replace(
        _snapshot(tag="v2.0", head="d" * 40),
        repo=RepoInfo(8, "o/q", "dev", True, "https://forge.example/o/q"),
        tags=(),
    )
    assert fetched.sharing(other) is fetched


def test_a_snapshot_without_a_readme_hashes_as_before_the_readme_was_read() -> None:
    """The README's top joined the snapshot (``readme``); a snapshot without one keeps the
    content hash it had before, so an upgrade writes no new row for an unchanged project (the
    hash below is the one the previous model computed), while one with a README differs."""
    commit = Commit("a" * 40, "2024-05-11T00:00:00Z", "https://github.com/org/x/commit/" + "a" * 40)
    repo = RepoInfo(7, "org/x", "main", True, "https://github.com/org/x", description="Kernels.")
    snapshot = ProjectSnapshot("x", repo=repo, head=commit)
    assert snapshot.content_hash() == (
        "c483c8c67069686308c54728a0fa6eaa4b095a1c73702e817d8a5e620a03eeaf"
    )
    read = replace(snapshot, readme=ReadmeTop("Moved to org/y.", "https://github.com/org/x"))
    assert read.content_hash() != snapshot.content_hash()
    assert ProjectSnapshot.from_json(read.to_json()) == read
