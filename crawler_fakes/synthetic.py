"""Synthetic GitHub states of any size, for benchmarks: a plausible mix of repository shapes."""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime, timedelta

from crawler.analysis.license_texts import reference_text
from crawler_fakes.github_state import FakeRelease, FakeRepo, FakeTag, GitHubState

# ------------------------------------------------------------------------------ synthetic data

_EXTRA_CLAUSE = """
Additional terms: the model weights distributed with this software may only be used
for non-commercial research unless a separate agreement is signed with {holder}.
"""


def synthetic_state(n: int, seed: int = 0) -> GitHubState:
    """``n`` plausible repositories for benchmarks, in five rotating shapes.

    0: releases with an -rc prerelease (MIT); 1: tags only (Apache-2.0); 2: no tags, commits
    only (MIT); 3: NOASSERTION license (MIT text plus an extra clause); 4: archived with
    releases (Apache-2.0). Every seventh repository has no license file.
    """
    rng = random.Random(seed)
    base = datetime(2024, 1, 1, tzinfo=UTC)

    def stamp(days: float) -> str:
        return (base + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def sha(*key: object) -> str:
        return hashlib.sha1(repr((seed, *key)).encode()).hexdigest()

    repos = []
    for i in range(n):
        shape, holder = i % 5, f"Org {i % 37} Authors"
        repo = FakeRepo(owner=f"org{i % 37}", name=f"project-{i:04d}", id=100_000 + i)
        repo.description = f"Synthetic project {i}"
        # License texts come from the license-data package, never typed into this repository.
        text = reference_text("Apache-2.0" if shape in (1, 4) else "MIT", f"2024 {holder}")
        if shape == 3:
            repo.license_key, repo.spdx_id, repo.license_name = "other", "NOASSERTION", "Other"
            repo.license_text = text + _EXTRA_CLAUSE.format(holder=holder)
        elif shape in (1, 4):
            repo.license_key, repo.spdx_id = "apache-2.0", "Apache-2.0"
            repo.license_name, repo.license_text = "Apache License 2.0", text
        else:
            repo.license_key, repo.spdx_id, repo.license_name = "mit", "MIT", "MIT License"
            repo.license_text = text
        if i % 7 == 6:
            repo.license_key = repo.spdx_id = repo.license_name = repo.license_text = None
            repo.license_path = None
        day = rng.uniform(0, 300)
        count = rng.randint(1, 6)
        for k in range(count if shape != 2 else 0):
            day += rng.uniform(5, 40)
            version = f"v1.{k}.0"
            repo.tags.append(FakeTag(version, sha(i, version), stamp(day)))
            if shape in (0, 3, 4):
                when = stamp(day + 0.01)
                repo.releases.append(FakeRelease(version, f"Release {version}", when, when))
        if shape == 0:
            day += rng.uniform(1, 10)
            rc = f"v1.{count}.0-rc1"
            repo.tags.append(FakeTag(rc, sha(i, rc), stamp(day)))
            when = stamp(day + 0.01)
            repo.releases.append(FakeRelease(rc, rc, when, when, prerelease=True))
        day += rng.uniform(0, 20)
        repo.head_sha, repo.head_date = sha(i, "head"), stamp(day)
        repo.archived = shape == 4
        repo.files = {"README.md": f"# project-{i:04d}\n\nSynthetic project for benchmarks.\n"}
        repo.tree = [("src/main.py", sha(i, "main.py")), ("docs/index.md", sha(i, "docs"))]
        repos.append(repo)
    return GitHubState(repos)
