"""Which paths in a repository's tree are license files, which of them is the root license, and
which hold test data rather than the project's own files: read from the names alone, without the
license engine (crawler.analysis.licenses re-exports them), so that listing a tree's license
files does not import it. Pure.

Test data, the rule documented in the README: a file below a directory named as test or
fixture data -- ``test``, ``tests``, ``testing``, ``testdata``, ``test_data``, ``test-data``,
``__tests__``, ``fixture(s)``, ``__fixtures__``, ``ReplayData``, or any name ending in
``fixtures`` or ``testdata`` -- is data a test reads (PyGithub's
``tests/ReplayData/License.setUp.txt``, a license scanner's sample texts), not a license of the
project, whatever its name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_TEST_DATA_DIR = re.compile(
    r"(?:tests?|testing|__tests__|test[-_]?data|__fixtures__|replay[-_]?data|.*fixtures?|.*testdata)",
    re.IGNORECASE,
)


def is_test_data(path: str) -> bool:
    """True when a directory on ``path`` (not the file's own name) is a test or fixture one."""
    parts = path.replace("\\", "/").strip("/").split("/")[:-1]
    return any(_TEST_DATA_DIR.fullmatch(part) for part in parts)


_LICENSE_NAME_RE = re.compile(
    r"^(?:licen[cs]e|copying|notice|copyright|patents|third[_-]party|third-party-notices)",
    re.IGNORECASE,
)


# Names that match the patterns but are code or templates, not license texts (license.py,
# copyright.html, notice_test.go): kept out of the inventory.
_CODE_SUFFIX_RE = re.compile(
    r"\.(?:py|pyi|js|mjs|ts|tsx|jsx|go|rs|c|cc|cpp|cxx|h|hpp|java|kt|rb|php|sh|bash|ps1|"
    r"cmake|html?|css|scss|vue|swift|scala|cs|lua|pl|r|jl)$",
    re.IGNORECASE,
)


def is_license_file(path: str) -> bool:
    """LICENSE*, LICENCE*, COPYING*, NOTICE*, COPYRIGHT*, PATENTS*, THIRD_PARTY*, THIRD-PARTY*
    and third-party-notices*, case-insensitively, on the file's own name; source code and
    templates with such names (license.py, copyright.html) are not license files, nor is anything
    under a test or fixture data directory (crawler.analysis.license_paths)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if _LICENSE_NAME_RE.match(name) is None or _CODE_SUFFIX_RE.search(name) is not None:
        return False  # asked first: a tree's other files, tens of thousands, end here
    return not is_test_data(path)  # tests/ReplayData/License.setUp.txt: data a test reads


_LESSER_RE = re.compile(r"^(?:copying|licen[cs]e)\.lesser(?:\.(?:txt|md))?$", re.IGNORECASE)


def pick_root_license(paths: Sequence[str]) -> str | None:
    """The repository's license file among root paths: LICENSE/LICENCE before COPYING and
    UNLICENSE, before LICENSE-MIT and the like, before COPYRIGHT; NOTICE and PATENTS never.
    COPYING beside COPYING.LESSER (the LGPL's layout) gives COPYING.LESSER."""

    def rank(path: str) -> tuple[int, int, str] | None:
        name = path.rsplit("/", 1)[-1].lower()
        stem, dot, ext = name.partition(".")
        plain_ext = ext in ("", "txt", "md", "markdown", "rst")
        if stem in ("license", "licence") and plain_ext:
            kind = 0
        elif stem in ("copying", "unlicense") and plain_ext:
            kind = 1
        elif re.match(r"(?:licen[cs]e|copying)", name):
            kind = 2
        elif stem == "copyright":
            kind = 3
        else:
            return None
        return kind, 0 if not dot else 1 if plain_ext else 2, name

    ranked = []
    for p in paths:
        rel = p.replace("\\", "/").removeprefix("./").strip("/")
        r = rank(rel) if rel and "/" not in rel else None
        if r is not None:
            ranked.append((r, p))
    if not ranked:
        return None
    chosen = min(ranked)[1]
    # the GNU layout of an LGPL project: the GPL text in COPYING, the LGPL's additional
    # permissions in COPYING.LESSER; the pair is the LGPL, and licensee reads it so
    stem = chosen.replace("\\", "/").rsplit("/", 1)[-1].lower().partition(".")[0]
    lesser = [p for _, p in ranked if _LESSER_RE.match(p.replace("\\", "/").rsplit("/", 1)[-1])]
    return lesser[0] if stem in ("copying", "license", "licence") and lesser else chosen
