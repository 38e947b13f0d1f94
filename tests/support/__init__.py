"""Helpers shared by the tests, each written once: the repository's paths here, the fixtures'
data and servers in the modules beside this one."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout
SHARED = ROOT.parent / "shared"  # real recorded material, read at run time, never copied
GOLDEN = Path(__file__).resolve().parent / "golden"  # expected outputs the tests compare with
