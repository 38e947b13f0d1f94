"""The license template index cached on disk: a process that finds it reads no license data file
to build the index, reads the same index, and a torn, altered or unwritable cache only costs a
rebuild (issue 23: half a second of CPU every first audit and every night a new text turns up).

Each check runs in a fresh interpreter, as a nightly run does, with an audit hook counting the
ScanCode license files it opens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from crawler.analysis.license_texts import reference_text

ROOT = Path(__file__).resolve().parents[2]
# Analyse a text the way an audit does; print how many ScanCode .LICENSE files were opened, the
# analysis, and where the cache file is.
PROBE = """
import json, sys
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open"
                 and str(args[0]).endswith(".LICENSE") else None)
from crawler.analysis import license_templates
from crawler.analysis.licenses import analyze_license
found = analyze_license(sys.stdin.read(), "LICENSE")
path = license_templates._cache_path(license_templates.data_dir(),
                                     license_templates._choosealicense_dir())
print(json.dumps({"opened": len(opened), "ids": list(found.spdx_ids),
                  "verdict": found.verdict, "cache": str(path)}))
"""
TEXT = reference_text("Apache-2.0", "2024 Example Authors") + "\nNo use in weapons.\n"


def _probe(cache: Path | str) -> dict[str, object]:
    env = {**os.environ, "CRAWLER_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", PROBE], input=TEXT, capture_output=True,
                         text=True, env=env, cwd=ROOT, check=True)  # fmt: skip
    return dict(json.loads(out.stdout))


def test_a_second_process_reads_the_cached_index_not_the_license_files(tmp_path: Path) -> None:
    first = _probe(tmp_path / "cache")
    cache = Path(str(first["cache"]))
    assert cache.parent == tmp_path / "cache" and cache.is_file()
    assert int(str(first["opened"])) > 2000  # every ScanCode license, to build the index
    second = _probe(tmp_path / "cache")
    # only the templates the text made candidates are read in full (27 here), not 2,300
    assert int(str(second["opened"])) < 100
    assert {k: second[k] for k in ("ids", "verdict")} == {k: first[k] for k in ("ids", "verdict")}
    assert first["ids"] == ["Apache-2.0"] and first["verdict"] == "match_with_extra_text"
    assert sorted(p.name for p in cache.parent.iterdir()) == [cache.name]  # no temporary left


def test_a_torn_or_altered_cache_is_rebuilt_not_used(tmp_path: Path) -> None:
    from crawler.analysis import license_templates as lt

    first = _probe(tmp_path)
    cache = Path(str(first["cache"]))
    whole = cache.read_bytes()
    for damaged in (whole[: len(whole) // 2], whole[:-1] + bytes([whole[-1] ^ 1]), b""):
        cache.write_bytes(damaged)
        again = _probe(tmp_path)
        assert int(str(again["opened"])) > 2000  # rebuilt from the license files
        assert (again["ids"], again["verdict"]) == (first["ids"], first["verdict"])
        assert lt._read_cached(cache) is not None  # and written again whole


def test_an_unwritable_cache_folder_costs_only_the_build(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be\n")
    for _night in range(2):
        found = _probe(blocked / "crawler")
        assert int(str(found["opened"])) > 2000
        assert (found["ids"], found["verdict"]) == (["Apache-2.0"], "match_with_extra_text")
    assert blocked.read_text() == "a file where the cache folder would be\n"


def test_the_cached_index_is_the_built_index(tmp_path: Path) -> None:
    from crawler.analysis import license_templates as lt

    built = lt._load(lt.data_dir(), lt._choosealicense_dir())
    path = tmp_path / "index.marshal"
    lt._write_cached(path, built)
    read = lt._read_cached(path)
    assert read is not None
    assert read.entries == built.entries and read.by_spdx == built.by_spdx
    assert read.idf == built.idf and read.postings == built.postings
    assert read.weight == built.weight and read.names == built.names
    words = lt.normalize_words(TEXT)
    assert read.candidates(words)[:3] == built.candidates(words)[:3]


def test_the_cache_folder_follows_the_xdg_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from crawler.analysis.license_templates import cache_dir

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CRAWLER_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "mine"  # the crawler's own setting first
    monkeypatch.delenv("CRAWLER_CACHE_DIR")
    assert cache_dir() == tmp_path / "xdg" / "crawler"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # invalid by the spec: ignored
    assert cache_dir() == tmp_path / "home" / ".cache" / "crawler"
