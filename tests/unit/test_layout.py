"""How the tests are laid out (CONTRIBUTING.md, "Tests"): three folders by what a test starts,
files named by the behaviour they cover, the marker of each folder applied by conftest."""

from __future__ import annotations

import re

import pytest

from tests.support import ROOT

TESTS = ROOT / "tests"


def test_a_test_carries_the_marker_of_its_folder(request: pytest.FixtureRequest) -> None:
    marks = {m.name for m in request.node.iter_markers()} & {"unit", "integration", "e2e"}
    assert marks == {"unit"}


def test_every_test_file_is_in_a_level_folder_and_named_by_behaviour() -> None:
    files = sorted(p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py"))
    outside = [f for f in files if f.split("/")[0] not in ("unit", "integration", "e2e")]
    assert outside == [], "move each into tests/unit, tests/integration or tests/e2e"
    numbered = [f for f in files if re.search(r"issue\d|regression|hardening", f)]
    assert numbered == [], "name the file by what it covers; the docstring names the defect"
    assert len(files) > 60  # the walk found the suite
