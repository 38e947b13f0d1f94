"""Reading a repository's description for a successor (crawler.analysis.successor): the
phrases that say a project moved or was superseded, what counts as the successor after them,
and hostile descriptions (markup, bidi controls, huge text) that must not make one up."""

from __future__ import annotations

import pytest

from crawler.analysis.successor import MAX_TARGET, Successor, successor_in

FORK = ("https://github.com/acme-labs/vllm-fork", "acme-labs/vllm-fork", "github")
KERNELS = ("https://github.com/gpu-org/kernels", "gpu-org/kernels", "github")


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        # a fork superseded by a project under another organisation
        (
            "Deprecated: this fork is superseded by vllm-project/vllm-accel, use that instead.",
            Successor("superseded", "superseded by", "vllm-project/vllm-accel",
                      "https://github.com/vllm-project/vllm-accel"),
        ),
        # moved into a monorepo, by link and by path (the page is the monorepo's)
        (
            "This repository moved to "
            "https://github.com/gpu-org/gpu-libraries/tree/develop/projects/kernels.",
            Successor("moved", "moved to",
                      "https://github.com/gpu-org/gpu-libraries/tree/develop/projects/kernels",
                      "https://github.com/gpu-org/gpu-libraries/tree/develop/projects/kernels"),
        ),
        (
            "[ARCHIVED] Development has moved to gpu-org/gpu-libraries/projects/kernels",
            Successor("moved", "moved to", "gpu-org/gpu-libraries/projects/kernels",
                      "https://github.com/gpu-org/gpu-libraries"),
        ),
        (
            "Deprecated in favour of [vllm-accel](https://github.com/vllm-project/vllm-accel)",
            Successor("superseded", "deprecated in favour of",
                      "https://github.com/vllm-project/vllm-accel",
                      "https://github.com/vllm-project/vllm-accel"),
        ),
        (
            "Now lives at github.com/new-org/kernels",
            Successor("moved", "now lives at", "github.com/new-org/kernels",
                      "https://github.com/new-org/kernels"),
        ),
        (
            "Kernels for accelerators. Migrated to the new repository: new-org/kernels",
            Successor("moved", "migrated to", "new-org/kernels",
                      "https://github.com/new-org/kernels"),
        ),
        (
            "Replaced by `new-org/kernels-v2`.",
            Successor("superseded", "replaced by", "new-org/kernels-v2",
                      "https://github.com/new-org/kernels-v2"),
        ),
    ],
)  # fmt: skip
def test_the_phrases_name_their_successor(description: str, expected: Successor) -> None:
    assert successor_in(description, *KERNELS) == expected


@pytest.mark.parametrize(
    "description",
    [
        None,
        "",
        "Fast kernels for accelerators, moved by the community.",
        "We moved to and/or from other tools.",  # words with a slash are no repository
        "This repository moved to gpu-org/kernels",  # itself: written before a rename
        "Moved to https://github.com/gpu-org/kernels/",  # itself, as a link
        "superseded by <script>alert(1)</script>",  # markup is no successor
        "superseded by [click](javascript:alert(1))",  # nor a script link
        "moved to " + "x" * 5000,  # nor an endless word
    ],
)
def test_no_successor_is_made_up(description: str | None) -> None:
    assert successor_in(description, *KERNELS) is None


def test_a_successor_is_stopped_only_when_superseded() -> None:
    """Superseded: this upstream stopped (a maturity to suggest); moved: it goes on elsewhere
    (the catalog should point there)."""
    superseded = successor_in("superseded by a/b", *FORK)
    moved = successor_in("moved to a/b", *FORK)
    assert superseded is not None and superseded.stopped is True
    assert moved is not None and moved.stopped is False


def test_bidi_controls_and_huge_descriptions_are_read_safely() -> None:
    """A bidi control is read as a space: before the successor it is dropped, inside it the
    name ends there (no repository); a huge description is read in its first part only, and
    what is kept is capped."""
    found = successor_in("migrated to \u202eevil-org/repo\u202c.", *FORK)
    assert found is not None and found.target == "evil-org/repo"
    assert successor_in("migrated to evil-org/\u2066repo", *FORK) is None
    huge = successor_in("superseded by org/" + "n" * 10_000, *FORK)
    assert huge is None  # a name past GitHub's 100 characters is no repository
    long_link = successor_in("moved to https://example.org/" + "p" * 3000, *FORK)
    assert long_link is not None and len(long_link.target) <= MAX_TARGET
    assert long_link.url is None  # past the URL cap: no link is made of it


def test_on_gitlab_a_bare_path_is_the_whole_group_path() -> None:
    found = successor_in(
        "moved to platform/compilers/kernels",
        "https://gitlab.com/acme/kernels", "acme/kernels", "gitlab",
    )  # fmt: skip
    assert found is not None
    assert found.url == "https://gitlab.com/platform/compilers/kernels"
