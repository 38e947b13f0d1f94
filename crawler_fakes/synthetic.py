"""Synthetic GitHub states of any size, for benchmarks: a plausible mix of repository shapes."""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime, timedelta

from crawler.analysis.license_templates import reference_text as picker_text
from crawler.analysis.license_texts import reference_text
from crawler_fakes.github_state import FakeRelease, FakeRepo, FakeTag, GitHubState

# ------------------------------------------------------------------------------ synthetic data

_EXTRA_CLAUSE = """
Additional terms: the model weights distributed with this software may only be used
for non-commercial research unless a separate agreement is signed with {holder}.
"""

# Holder names are spelled from the repository's number in these syllables: every repository
# has a holder of its own, as a real catalog's repositories do.
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "so", "ta", "vi", "xo", "ze", "bra", "dun",
              "fel", "gor", "hex", "quin")  # fmt: skip
_FIRST_NAMES = ("Alice", "Bo", "Chen", "Dmitri", "Eva", "Farid", "Grace", "Hiro", "Ines",
                "Jun", "Kofi", "Lena", "Mateo", "Nadia", "Omar", "Priya")  # fmt: skip


def _name(i: int) -> str:
    digits = []
    while True:
        i, d = divmod(i, len(_SYLLABLES))
        digits.append(_SYLLABLES[d])
        if not i and len(digits) >= 3:
            break
    return "".join(reversed(digits)).capitalize()


def _copyright(i: int, rng: random.Random) -> tuple[str, str]:
    """(years, holder) of repository ``i``: a holder of its own, a year or a range."""
    start = rng.randint(2014, 2025)
    years = rng.choice((str(start), f"{start}-{min(start + rng.randint(1, 6), 2026)}",
                        f"{start}-present"))  # fmt: skip
    name = _name(i)
    holder = (f"{name} Inc.", f"The {name} Authors", f"{_FIRST_NAMES[i % 16]} {name}",
              f"{name} Technologies Co., Ltd.", f"{name} Labs and contributors",
              f"{name} Corporation")[i // 7 % 6]  # fmt: skip
    return years, holder


def _license(i: int, shape: int, years: str, holder: str) -> tuple[str, str, str, str]:
    """(GitHub's key, SPDX id, name, LICENSE text) of repository ``i``: MIT, BSD-3-Clause or
    Apache-2.0 in the forms real repositories use (license texts come from the license-data
    package, ScanCode's and choosealicense's, never typed into this repository)."""
    if shape in (1, 4):
        body = reference_text("Apache-2.0")
        form = i // 5 % 8
        if form == 0:  # the appendix's boilerplate filled in (sglang's LICENSE)
            body = body.replace("Copyright [yyyy] [name of copyright owner]",
                                f"Copyright {years} {holder}")  # fmt: skip
        elif form % 2:  # the copyright line above the text (TensorFlow's LICENSE)
            body = f"Copyright {years} {holder.rstrip('.')}. All rights reserved.\n\n{body}"
        else:
            body = f"Copyright {years} {holder}\n\n{body}"
        return "apache-2.0", "Apache-2.0", "Apache License 2.0", body
    form = 0 if shape == 3 else i // 5 % 5  # the modified ones: one form, 37 extra clauses
    if form == 4:  # GitHub's BSD-3-Clause (tritonbench's LICENSE)
        body = picker_text("BSD-3-Clause", "choosealicense")
        body = body.replace("[year], [fullname]", f"{years}, {holder}\nAll rights reserved.")
        return ("bsd-3-clause", "BSD-3-Clause", 'BSD 3-Clause "New" or "Revised" License',
                body)  # fmt: skip
    if form == 3:  # GitHub's MIT, as its license picker writes it
        mit = picker_text("MIT", "choosealicense").replace("[year] [fullname]", f"{years} {holder}")
        return "mit", "MIT", "MIT License", mit
    mit = reference_text("MIT", f"{years} {holder}")  # "MIT License", the copyright line, terms
    if form == 1:  # the copyright line first, no title (aiter's LICENSE)
        mit = mit.replace("MIT License\n\n", "", 1).replace("(c)", "©", 1)
    elif form == 2:
        mit = mit.replace("MIT License", "The MIT License (MIT)", 1)
    return "mit", "MIT", "MIT License", mit


# The catalog's dates end this many days before the day it is built for: its repositories'
# head commits fall 470 to 5 days before (none after it), so about an eighth are dormant (a
# year without a commit or a release) besides the archived fifth. With fixed dates the whole
# catalog aged into dormancy (2024-2025 dates, judged in 2026): every repository's README was
# read every night, which a real catalog does not cost.
SPAN_DAYS = 470


def synthetic_state(n: int, seed: int = 0, today: str | None = None) -> GitHubState:
    """``n`` plausible repositories for benchmarks, in five rotating shapes.

    0: releases with an -rc prerelease (MIT or BSD-3-Clause); 1: tags only (Apache-2.0); 2: no
    tags, commits only (MIT or BSD-3-Clause); 3: NOASSERTION license (MIT text plus an extra
    clause: an organisation's own terms, 37 of them, its name on the copyright line with the
    repository's years); 4: archived with releases (Apache-2.0). Every seventh repository has
    no license file; every other one carries a copyright line of its own (holder and years),
    in the forms real LICENSE files take (a title or none, the line above the text or in
    Apache's appendix). Its dates end ``SPAN_DAYS`` before ``today`` (an ISO date; the UTC
    day it is built when None): pass the same day to every process that builds it.
    """
    rng = random.Random(seed)
    holders = random.Random(f"copyright-{seed}")  # apart: the releases are drawn as before
    day_of = datetime.fromisoformat(today) if today else datetime.now(UTC)
    base = datetime(day_of.year, day_of.month, day_of.day, tzinfo=UTC) - timedelta(SPAN_DAYS)

    def stamp(days: float) -> str:
        return (base + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def sha(*key: object) -> str:
        return hashlib.sha1(repr((seed, *key)).encode()).hexdigest()

    repos = []
    for i in range(n):
        shape = i % 5
        repo = FakeRepo(owner=f"org{i % 37}", name=f"project-{i:04d}", id=100_000 + i)
        repo.description = f"Synthetic project {i}"
        years, holder = _copyright(i, holders)
        if shape == 3:  # an organisation's own terms: its name on the copyright line too
            holder = f"Org {i % 37} Inc."
        key, spdx, name, text = _license(i, shape, years, holder)
        if shape == 3:
            repo.license_key, repo.spdx_id, repo.license_name = "other", "NOASSERTION", "Other"
            repo.license_text = text + _EXTRA_CLAUSE.format(holder=holder)
        else:
            repo.license_key, repo.spdx_id, repo.license_name = key, spdx, name
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
