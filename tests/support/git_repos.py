"""Real git repositories for the git source's tests, made with the git binary: a working copy
whose commits carry fixed dates, pushed to a bare repository that ``GitHttpServer`` serves."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler_fakes.git_http import GitWorkRepo, git_binary


def require_git() -> str:
    binary = git_binary()
    if binary is None:
        pytest.skip("the git binary is not installed")
    return binary


class GitRepo(GitWorkRepo):
    """``root/<path>`` (bare, served) fed from a working copy beside it; the test is skipped
    where git is not installed."""

    def __init__(self, root: Path, path: str) -> None:
        require_git()
        super().__init__(root, path)
