"""Which paths in a repository's tree hold test data rather than the project's own files.

The rule (documented in the README): a file below a directory named as test or fixture data --
``test``, ``tests``, ``testing``, ``testdata``, ``test_data``, ``test-data``, ``__tests__``,
``fixture(s)``, ``__fixtures__``, ``ReplayData``, or any name ending in ``fixtures`` or
``testdata`` -- is data a test reads (PyGithub's ``tests/ReplayData/License.setUp.txt``, a
license scanner's sample texts), not a license of the project, whatever its name. Pure.
"""

from __future__ import annotations

import re

_TEST_DATA_DIR = re.compile(
    r"(?:tests?|testing|__tests__|test[-_]?data|__fixtures__|replay[-_]?data|.*fixtures?|.*testdata)",
    re.IGNORECASE,
)


def is_test_data(path: str) -> bool:
    """True when a directory on ``path`` (not the file's own name) is a test or fixture one."""
    parts = path.replace("\\", "/").strip("/").split("/")[:-1]
    return any(_TEST_DATA_DIR.fullmatch(part) for part in parts)
