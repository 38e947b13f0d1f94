"""The license template index cached on disk: a process that finds it reads no license data file
to build the index, reads the same index, and a torn, altered or unwritable cache only costs a
rebuild (issue 23: half a second of CPU every first audit and every night a new text turns up).
Beside it, what analyses derive from the data (templates tokenised in full, the official
variants read from ScanCode's rules): a second process reads no license or rule file at all and
reads the text the same (0.4 s of CPU for a first Apache-2.0 text).

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
opened, rules = [], []
sys.addaudithook(lambda event, args: (opened if str(args[0]).endswith(".LICENSE") else rules)
                 .append(str(args[0])) if event == "open"
                 and str(args[0]).endswith((".LICENSE", ".RULE")) else None)
from crawler.analysis import license_templates
from crawler.analysis.licenses import analyze_license
found = analyze_license(sys.stdin.read(), "LICENSE")
path = license_templates._cache_path(license_templates.data_dir(),
                                     license_templates._choosealicense_dir())
print(json.dumps({"opened": len(opened), "rules": len(rules), "ids": list(found.spdx_ids),
                  "verdict": found.verdict, "analysis": found.to_dict(), "cache": str(path),
                  "derived": str(license_templates.load_index().derived.path)}))
"""
TEXT = reference_text("Apache-2.0", "2024 Example Authors") + "\nNo use in weapons.\n"


def _damaged(whole: bytes) -> tuple[bytes, ...]:
    """A cache file cut in half, with its last byte altered, and empty."""
    return whole[: len(whole) // 2], whole[:-1] + bytes([whole[-1] ^ 1]), b""


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
    assert int(str(first["rules"])) > 0  # Apache-2.0's official variants, from the rules
    second = _probe(tmp_path / "cache")
    # the candidates' templates and the variants come from the derived cache: no data file read
    assert (second["opened"], second["rules"]) == (0, 0)
    assert second["analysis"] == first["analysis"]
    assert first["ids"] == ["Apache-2.0"] and first["verdict"] == "match_with_extra_text"
    derived = Path(str(first["derived"]))
    assert derived.parent == cache.parent and derived.name.startswith("license-derived-")
    # no temporary left
    assert sorted(p.name for p in cache.parent.iterdir()) == sorted([cache.name, derived.name])


def test_a_torn_or_altered_derived_cache_is_derived_again(tmp_path: Path) -> None:
    first = _probe(tmp_path)
    derived = Path(str(first["derived"]))
    whole = derived.read_bytes()
    for damaged in _damaged(whole):
        derived.write_bytes(damaged)
        again = _probe(tmp_path)
        # the index is still read from its cache; the templates and rules are read again
        assert 0 < int(str(again["opened"])) < 100 and int(str(again["rules"])) > 0
        assert again["analysis"] == first["analysis"]
        assert derived.read_bytes() == whole  # and written again whole


def test_a_torn_or_altered_cache_is_rebuilt_not_used(tmp_path: Path) -> None:
    from crawler.analysis import license_templates as lt

    first = _probe(tmp_path)
    cache = Path(str(first["cache"]))
    whole = cache.read_bytes()
    for damaged in _damaged(whole):
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


def test_a_template_read_from_the_derived_cache_is_the_parsed_template(tmp_path: Path) -> None:
    from crawler.analysis import license_templates as lt

    index = lt.load_index()
    cache = lt.DerivedCache(tmp_path / "derived.marshal")
    for spdx_id in ("MIT", "Apache-2.0", "GPL-2.0-only", "BSD-3-Clause"):
        entry = index.entries[index.by_spdx[spdx_id]]
        cache.put("templates", entry.key, lt._template_fields(lt._parse(entry)))
    cache.save()
    again = lt.DerivedCache(tmp_path / "derived.marshal")
    for spdx_id in ("MIT", "Apache-2.0", "GPL-2.0-only", "BSD-3-Clause"):
        entry = index.entries[index.by_spdx[spdx_id]]
        parsed = lt._parse(entry)
        read = lt._template_from(again.get("templates", entry.key))  # type: ignore[arg-type]
        assert read == parsed and read.counts == parsed.counts
        assert read.boiler == parsed.boiler and read.words == parsed.words


def test_another_installations_cache_is_kept_and_this_ones_older_files_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two installations on one machine (two virtual environments, two checkouts) each keep
    their files: each removing the other's cost both a rebuild of the index at every start
    after the other ran (issue 32 defect 7: half a second of CPU of a first audit)."""
    from crawler.analysis import license_templates as lt

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("CRAWLER_CACHE_DIR", str(cache))
    elsewhere = tmp_path / "another-venv" / "licensedcode" / "data" / "licenses"
    elsewhere.mkdir(parents=True)
    theirs = [lt._cache_path(elsewhere, None),
              lt._cache_path(elsewhere, None, lt._DERIVED_PREFIX, lt._DERIVED_FORMAT)]  # fmt: skip
    # this installation's files from before an upgrade of its code
    older = lt._cache_path(lt.data_dir(), lt._choosealicense_dir(), code=("licenses.py",))
    legacy = cache / f"{lt._CACHE_PREFIX}{'0' * 32}.marshal"  # a name without a place
    assert None not in theirs and older is not None and older.parent == cache
    for path in [*theirs, older, legacy]:
        assert path is not None
        path.write_bytes(b"a cache file\n")
    found = _probe(cache)
    ours = {Path(str(found["cache"])).name, Path(str(found["derived"])).name}
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        ours | {p.name for p in theirs if p is not None}
    )
    second = _probe(cache)  # reads this installation's files: no license file opened
    assert (second["opened"], second["rules"]) == (0, 0)
    assert all(p is not None and p.read_bytes() == b"a cache file\n" for p in theirs)
