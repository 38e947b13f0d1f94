"""Real git repositories for the git source's tests, made with the git binary: a working copy
whose commits carry fixed dates, pushed to a bare repository that ``GitHttpServer`` serves."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from crawler_fakes.git_http import git_binary


def require_git() -> str:
    binary = git_binary()
    if binary is None:
        pytest.skip("the git binary is not installed")
    return binary


class GitRepo:
    """``root/<path>`` (bare, served) fed from a working copy beside it."""

    def __init__(self, root: Path, path: str) -> None:
        self.git = require_git()
        self.bare = root / path
        self.work = root.parent / "work" / path
        self.work.mkdir(parents=True)
        self.run("init", "-q", "-b", "main", cwd=self.work)
        self.run("init", "-q", "--bare", "-b", "main", str(self.bare), cwd=root)

    def run(self, *args: str, cwd: Path | None = None, when: str | None = None) -> str:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.work),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Dev",
            "GIT_AUTHOR_EMAIL": "dev@example.org",
            "GIT_COMMITTER_NAME": "Dev",
            "GIT_COMMITTER_EMAIL": "dev@example.org",
        }
        if when is not None:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
        done = subprocess.run(
            [self.git, *args], cwd=cwd or self.work, env=env, capture_output=True, text=True,
            check=True, timeout=60,
        )  # fmt: skip
        return done.stdout.strip()

    def commit(
        self, when: str, files: dict[str, str] | None = None, *, branch: str = "main"
    ) -> str:
        """A commit on ``branch`` dated ``when`` (ISO 8601), writing ``files``; its id."""
        current = self.run("symbolic-ref", "--short", "HEAD")
        if current != branch:
            exists = self.run("branch", "--list", branch) != ""
            self.run("checkout", "-q", *([] if exists else ["-b"]), branch)
        for name, text in (files or {}).items():
            target = self.work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            self.run("add", name)
        self.run("commit", "-q", "--allow-empty", "-m", f"change of {when}", when=when)
        return self.run("rev-parse", "HEAD")

    def tag(self, name: str, *, message: str | None = None, when: str | None = None) -> str:
        """A lightweight tag, or an annotated one with ``message``; the tag object's id."""
        annotated = ["-a", "-m", message] if message is not None else []
        self.run("tag", *annotated, name, when=when)
        return self.run("rev-parse", f"refs/tags/{name}")

    def push(self) -> None:
        """Every branch and tag to the served repository (tags removed here removed there)."""
        self.run("push", "-q", "--mirror", str(self.bare))

    def point_head_at(self, branch: str) -> None:
        """The served repository's default branch (what HEAD names), as a forge's setting."""
        self.run("symbolic-ref", "HEAD", f"refs/heads/{branch}", cwd=self.bare)
