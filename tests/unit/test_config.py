from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from crawler.config import ConfigError, Location, load_config, parse_config
from tests.support import ROOT


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "sources.yaml")
    return str(info.value)


def test_shipped_sources_lists_the_seed_projects() -> None:
    config = load_config(ROOT / "sources.yaml")
    names = [p.name for p in config.projects]
    assert len(names) == 84  # every item of the catalog page (tests/unit/test_shipped_catalog)
    assert {"Triton", "TritonBench", "MLC-LLM", "torch-gcu", "vLLM Iluvatar plugin"} <= set(names)
    iluvatar = config.project("vLLM Iluvatar plugin")
    assert iluvatar.forge == Location(source="gitee", path="deep-spark/vllm-iluvatar")
    assert [(p.name, p.location, p.path) for p in iluvatar.pages] == [
        ("README pins", None, "README.md")  # read through the Gitee source
    ]
    assert config.project("vLLM").forge == Location(source="github", path="vllm-project/vllm")


def test_defaults() -> None:
    project = parse_config("projects:\n  - name: a\n    repo: o/r\n").projects[0]
    assert (project.track, project.prereleases, project.tag_pattern) == ("auto", "include", None)
    assert project.line == 2


def test_the_release_a_row_shows_is_a_setting_a_project_may_override() -> None:
    """Issue 32, defect 1: by default the highest release in version order (the catalog page's
    convention); ``settings.release_shown: newest_final`` offers the forge's latest mark."""
    projects = "projects:\n  - name: a\n    repo: o/r\n  - name: b\n    repo: o/s\n"
    plain = parse_config(projects)
    assert plain.settings.release_shown == "highest_version"
    assert [p.tracking.release_shown for p in plain.projects] == ["highest_version"] * 2
    own = projects + "    release_shown: highest_version\n"
    chosen = parse_config("settings: {release_shown: newest_final}\n" + own)
    assert [p.tracking.release_shown for p in chosen.projects] == [
        "newest_final",
        "highest_version",  # b says so itself
    ]
    assert _error("settings: {release_shown: latest}\n" + projects) == (
        "sources.yaml:1: settings: release_shown: 'latest' is not one of 'highest_version', "
        "'newest_final'"
    )


def test_unknown_key_names_file_line_and_project() -> None:
    text = "projects:\n  - name: a\n    repo: o/r\n  - name: b\n    repo: o/s\n    trak: tags\n"
    assert (
        _error(text) == "sources.yaml:6: project 'b': unknown key 'trak' (did you mean 'track'?)"
    )
    # nothing close: the keys that are known there
    message = _error(text.replace("trak", "zzzzzz"))
    assert message.startswith(
        "sources.yaml:6: project 'b': unknown key 'zzzzzz' (known: name, homepage, track, "
    )


def test_a_misspelt_key_is_answered_with_the_closest_one_wherever_it_is() -> None:
    """Issue 22: "did you mean" in settings, a source's section and a page, not only projects."""
    assert _error("settings: {request_deadlin: 3}\nprojects: []\n") == (
        "sources.yaml:1: settings: unknown key 'request_deadlin' "
        "(did you mean 'request_deadline'?)"
    )
    assert _error("github: {max_retry: 3}\nprojects: []\n") == (
        "sources.yaml:1: github: unknown key 'max_retry' (did you mean 'max_retries'?)"
    )
    page = (
        "projects:\n  - name: x\n    pages:\n"
        "      - {name: p, url: 'https://x.example/', tabels: []}\n"
    )
    assert _error(page) == (
        "sources.yaml:4: project 'x': page 'p': unknown key 'tabels' (did you mean 'tables'?)"
    )


def test_duplicate_name() -> None:
    text = "projects:\n  - name: a\n    repo: o/r\n  - name: a\n    repo: o/s\n"
    assert _error(text) == (
        "sources.yaml:4: project 'a': duplicate name (first at line 2): names must be unique"
    )


@pytest.mark.parametrize(
    ("written", "shown", "both"),
    [
        ('"Helion\\u200b"', "Helion\u200b", "; both have the id 'helion'"),  # a zero-width space
        ('" Helion "', " Helion ", "; both have the id 'helion'"),
        ("helion", "helion", "; both have the id 'helion'"),
        ('"H\\u00e9lion"', "Hélion", "; both have the id 'helion'"),
        ("C", "C", "; both have the id 'c'"),  # after "C++": the same id in catalog.json
        ('"\\u9ec4\\u6cb3\\u200b"', "黄河\u200b", ""),  # the same to a reader; ids differ
    ],
)
def test_names_the_catalog_would_confuse_are_refused_naming_both_lines(
    written: str, shown: str, both: str
) -> None:
    """Issue 38 item 13: `Helion`, `Helion` with a zero-width space, ` Helion ` and `helion`
    were four projects to `check` and the audit (three identical "Helion" rows in the
    report), and the export then failed with exit 2."""
    first = {"C": "C++", "helion": "Helion"}.get(shown, "黄河" if "黄" in shown else "Helion")
    text = (
        f'projects:\n  - name: "{first}"\n    repo: o/r\n'
        f"  - name: {written}\n    repo: o/s\n"
    )
    assert _error(text) == (
        f"sources.yaml:4: project {shown!r} and project {first!r} (line 2) are the same name "
        f"to the catalog (case, spaces, accents and invisible characters aside{both}), so one "
        "could pass for the other: give them distinct names"
    )


def test_names_that_differ_to_the_catalog_are_kept() -> None:
    text = "".join(f"  - name: {n}\n    repo: o/{i}\n" for i, n in enumerate(
        ["Helion", "Helion Ascend", "helion2", "vLLM", "vLLM-Ascend"]))  # fmt: skip
    assert [p.name for p in parse_config("projects:\n" + text).projects] == [
        "Helion", "Helion Ascend", "helion2", "vLLM", "vLLM-Ascend"
    ]  # fmt: skip


def test_duplicate_key_in_one_entry() -> None:
    text = "projects:\n  - name: a\n    repo: o/r\n    repo: o/s\n"
    assert (
        _error(text) == "sources.yaml:4: duplicate key 'repo' (first at line 3): remove one of them"
    )


@pytest.mark.parametrize("repo", ["just-a-name", "o/r/extra", "-bad/x", "o/"])
def test_malformed_repo(repo: str) -> None:
    message = _error(f"projects:\n  - name: a\n    repo: '{repo}'\n")
    assert (
        message == f"sources.yaml:3: project 'a': repo {repo!r} must look like 'owner/name'"
    )


def test_bad_regex() -> None:
    message = _error("projects:\n  - name: a\n    repo: o/r\n    tag_pattern: 'v(['\n")
    assert message.startswith("sources.yaml:4: project 'a': tag_pattern 'v([' is not")


def test_bad_track_value() -> None:
    message = _error("projects:\n  - name: a\n    repo: o/r\n    track: newest\n")
    assert message == (
        "sources.yaml:4: project 'a': track: 'newest' is not one of 'auto', 'releases', 'tags', "
        "'commits'"
    )


def test_malformed_yaml_gives_line_and_column() -> None:
    # the wording after the location is the YAML parser's (libyaml's when PyYAML has it)
    assert _error("projects:\n  - name: a\n   repo: o/r\n") in (
        "sources.yaml:3:4: malformed YAML: did not find expected '-' indicator",
        "sources.yaml:3:4: malformed YAML: expected <block end>, but found '<block mapping start>'",
    )


def test_project_needs_a_location() -> None:
    message = _error("projects:\n  - name: a\n")
    assert message.startswith("sources.yaml:2: project 'a': needs where it lives: ")
    assert "'repo' (GitHub)" in message and "'gitee' (Gitee)" in message  # every forge, any order
    assert message.endswith(
        "a release channel, 'part_of' (the item it ships with) or 'not_trackable' (why no "
        "source can follow it)"
    )


def test_page_url_must_be_http() -> None:
    text = (
        "projects:\n  - name: a\n    repo: o/r\n    pages:\n      - name: p\n"
        "        url: file:///etc/passwd\n        pins: {v: 'v(\\d+)'}\n"
    )
    assert "url 'file:///etc/passwd' must start with http:// or https://" in _error(text)


def test_pin_needs_a_group() -> None:
    text = (
        "projects:\n  - name: a\n    repo: o/r\n    pages:\n      - name: p\n"
        "        url: https://example.org/\n        pins: {v: 'v\\d+'}\n"
    )
    assert "pin 'v' needs a capture group" in _error(text)


def test_unknown_top_level_key() -> None:
    message = _error("projcts: []\nprojects: []\n")
    assert message == "sources.yaml:1: unknown top-level key 'projcts' (did you mean 'projects'?)"
    message = _error("projects: []\nextras: {}\n")
    assert message.startswith(
        "sources.yaml:2: unknown top-level key 'extras' (known: settings, schedule, notify, "
        "projects, "
    )
    assert "github" in message.removesuffix(")").split(", ")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "nope.yaml")
    assert str(info.value) == f"{tmp_path / 'nope.yaml'}: file not found: pass --config PATH"


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(b"projects:\n  - name: \xff\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: not UTF-8 text (invalid start byte at byte 20)"


# -- hostile or oversized files (issue 9 item 8) ---------------------------------------------

LAUGHS = """\
projects:
  - name: x
    repo: o/x
    note:
      a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]
      b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
      c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
      d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
      e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
      f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
      g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
      h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
      i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def _load_in_child(path: Path) -> subprocess.CompletedProcess[str]:
    """load_config in a child process capped at 1 GiB of address space and 60 s, so that a
    loader that expands the document fails there (MemoryError) instead of taking the machine."""

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    code = (
        "import sys\nfrom crawler.config import ConfigError, load_config\n"
        "try:\n    load_config(sys.argv[1])\nexcept ConfigError as exc:\n    print(exc)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=cap_memory,
    )


def test_billion_laughs_in_a_note_is_refused_before_expansion(tmp_path: Path) -> None:
    path = tmp_path / "sources.yaml"
    path.write_text(LAUGHS)
    assert len(LAUGHS.encode()) <= 433  # 9**9 strings once expanded
    result = _load_in_child(path)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        f"{path}:5: YAML anchors and aliases (&name, *name) are not supported: "
        "write the value out\n"
    )


def test_merge_keys_and_self_references_are_refused() -> None:
    merged = "projects:\n  - &p {name: x, repo: o/x}\n  - <<: *p\n    name: y\n"
    assert _error(merged) == (
        "sources.yaml:3: YAML merge keys ('<<') are not supported: write the keys out"
    )
    assert _error("projects: &a [*a]\n") == (
        "sources.yaml:1: YAML anchors and aliases (&name, *name) are not supported: "
        "write the value out"
    )


def test_a_list_or_mapping_as_a_key_is_a_clear_error() -> None:
    listed = "projects:\n  - name: x\n    repo: o/x\n    ? [a, b]\n    : 1\n"
    assert _error(listed) == (
        "sources.yaml:4: a list cannot be a key: use a plain name before the ':'"
    )
    mapped = "projects:\n  - name: x\n    repo: o/x\n    ? {a: 1}\n    : 1\n"
    assert _error(mapped) == (
        "sources.yaml:4: a mapping cannot be a key: use a plain name before the ':'"
    )


def test_a_file_over_one_mebibyte_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    padding = "# " + "x" * 100 + "\n"
    path.write_text("projects:\n  - name: a\n    repo: o/a\n" + padding * (1024 * 1024 // 100))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (
        f"{path}: larger than 1 MiB, the limit for a catalog (the shipped one is a few KiB): "
        "is this the right file? (a catalog really this large: set CRAWLER_LARGE_CATALOG=1)"
    )
    with pytest.raises(ConfigError) as info:
        parse_config(path.read_text(), "huge.yaml")
    assert str(info.value).startswith("huge.yaml: larger than 1 MiB, the limit for a catalog")


def test_more_than_fifty_thousand_projects_are_refused() -> None:
    text = "projects:\n" + "- 1\n" * 50_001
    assert _error(text) == (
        "sources.yaml:1: 50,001 projects, over the limit of 50,000: "
        "for a catalog really this large, set CRAWLER_LARGE_CATALOG=1"
    )


def test_a_large_catalog_passes_the_guard_only_when_it_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "large.yaml"
    path.write_text("projects:\n" + "".join(
        f"  - name: p{i}\n    repo: org/p{i}\n" for i in range(50_001)))  # fmt: skip
    assert path.stat().st_size > 1024 * 1024
    with pytest.raises(ConfigError, match="larger than 1 MiB"):
        load_config(path)
    monkeypatch.setenv("CRAWLER_LARGE_CATALOG", "1")
    config = load_config(path)
    assert len(config.projects) == 50_001
    assert config.projects[-1].name == "p50000"
    # still bounded: a file past the large limits is refused all the same
    monkeypatch.setattr("crawler.config.loader.LARGE_PROJECTS", 50_000)
    with pytest.raises(ConfigError, match="50,001 projects, over the limit of 50,000"):
        load_config(path)


def test_a_fifo_as_configuration_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "sources.yaml"
    os.mkfifo(fifo)
    result = _load_in_child(fifo)  # in a child: the old loader blocks for ever on open()
    assert result.stdout == f"{fifo}: not a regular file: pass --config PATH of a YAML file\n"


def test_line_numbers_survive_the_fast_loader() -> None:
    text = "projects:\n" + "".join(
        f"  - name: P{i}\n    repo: org/p{i}\n    track: tags\n" for i in range(200)
    )
    config = parse_config(text)
    assert [p.line for p in config.projects[:3]] == [2, 5, 8]
    assert config.projects[-1].line == 2 + 3 * 199


def test_an_alias_to_an_earlier_project_is_refused_as_in_one_tree() -> None:
    """The projects are read one entry at a time; an alias reaching back into an earlier entry
    (or to another section) is still refused, at the anchored node's line."""
    whole = "projects:\n  - &p {name: x, repo: o/x}\n  - *p\n"
    nested = (
        "projects:\n  - name: x\n    repo: o/x\n    note: &n hello\n"
        "  - name: y\n    repo: o/y\n    note: *n\n"
    )
    section = "settings: &s {}\nprojects:\n  - name: x\n    repo: o/x\nnotify: *s\n"
    refused = "YAML anchors and aliases (&name, *name) are not supported: write the value out"
    assert _error(whole) == f"sources.yaml:2: {refused}"
    assert _error(nested) == f"sources.yaml:4: {refused}"
    assert _error(section) == f"sources.yaml:1: {refused}"
    assert _error("projects: []\n---\nprojects: []\n") == (
        "sources.yaml:2:1: malformed YAML: but found another document"
    )
    # a tag the safe loader has no constructor for, on the document or on the list
    unknown = "malformed YAML: could not determine a constructor for the tag '!foo'"
    assert _error("!foo\nprojects: []\n") == f"sources.yaml:1:1: {unknown}"
    assert _error("projects: !foo\n  - name: a\n    repo: o/a\n") == f"sources.yaml:1:11: {unknown}"


def test_a_later_top_level_error_is_said_with_an_earlier_projects_error() -> None:
    """Each project is validated as it is read, and the file's own errors (its top-level
    keys) are said too, every problem in file order."""
    bad_project_then_bad_key = "projects:\n  - name: a\n    repo: o/a\n  - name: b\nsetings: {}\n"
    message = _error(bad_project_then_bad_key).splitlines()
    assert message[0].startswith("sources.yaml:4: project 'b': needs where it lives: ")
    assert message[1] == (
        "sources.yaml:5: unknown top-level key 'setings' (did you mean 'settings'?)"
    )
    assert len(message) == 2


def test_reading_a_large_catalog_never_holds_its_whole_yaml_tree() -> None:
    """sources.yaml is read a project at a time (issue 23): reading 5,000 projects peaks at
    little more than the parsed catalog it keeps (the node tree of the whole file was twice
    the catalog: 27.7 MB of peak for 12.4 MB kept at 10,000 projects)."""
    import gc
    import tracemalloc

    text = "projects:\n" + "".join(
        f"  - name: p{i}\n    repo: org{i % 37}/project-{i:05d}\n" for i in range(5000)
    )
    gc.collect()
    tracemalloc.start()
    try:
        config = parse_config(text)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(config.projects) == 5000 and config.projects[-1].name == "p4999"
    assert peak < 1.3 * kept, (peak, kept)


def test_each_key_of_a_project_and_each_page_url_keeps_its_own_line() -> None:
    """A moved link names the line to change: the line of its own key (``homepage:``,
    ``repo:``, a page's ``url:``), not the line where the project's entry starts (before:
    every link of a project was cited at its ``- name:`` line)."""
    text = (
        "projects:\n"
        "  - name: Kit\n"  # 2
        "    note: a toolkit\n"
        "    homepage: https://kit.example/\n"  # 4
        "    gitee: org/kit\n"  # 5
        "    pages:\n"
        "      - name: support\n"  # 7
        "        text: main\n"
        "        url: https://kit.example/support\n"  # 9
        "      - name: readme\n"  # 10
        "        path: README.md\n"
        "        text: main\n"
        "  - {name: Flat, repo: org/flat, homepage: 'https://flat.example/'}\n"  # 13
    )
    kit, flat = parse_config(text).projects
    assert (kit.line, kit.line_of("homepage"), kit.forge_line()) == (2, 4, 5)
    assert [(p.name, p.line) for p in kit.pages] == [("support", 9), ("readme", 10)]
    assert kit.line_of("no such key") == 2
    assert (flat.line, flat.line_of("homepage"), flat.forge_line()) == (13, 13, 13)
