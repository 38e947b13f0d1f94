"""The repository's own LICENSE is the license pyproject.toml declares, read by our own reader."""

from __future__ import annotations

import tomllib

from crawler.analysis.licenses import analyze_file
from tests.support import ROOT


def test_license_file_is_the_declared_license_verbatim() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]
    analysis = analyze_file(ROOT / "LICENSE")
    assert declared == "Apache-2.0"
    assert analysis.spdx_ids == ("Apache-2.0",)
    assert analysis.verdict == "exact"
