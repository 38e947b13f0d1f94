from __future__ import annotations

from pathlib import Path

import pytest

from crawler.config import ConfigError, Location, load_config, parse_config

ROOT = Path(__file__).resolve().parents[1]


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "sources.yaml")
    return str(info.value)


def test_shipped_sources_lists_the_seed_projects() -> None:
    config = load_config(ROOT / "sources.yaml")
    names = [p.name for p in config.projects]
    assert len(names) == 20
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


def test_unknown_key_names_file_line_and_project() -> None:
    text = "projects:\n  - name: a\n    repo: o/r\n  - name: b\n    repo: o/s\n    trak: tags\n"
    assert (
        _error(text) == "sources.yaml:4: project 'b': trak: unknown key 'trak': check its spelling"
    )


def test_duplicate_name() -> None:
    text = "projects:\n  - name: a\n    repo: o/r\n  - name: a\n    repo: o/s\n"
    assert _error(text) == (
        "sources.yaml:4: project 'a': duplicate name (first at line 2): names must be unique"
    )


def test_duplicate_key_in_one_entry() -> None:
    text = "projects:\n  - name: a\n    repo: o/r\n    repo: o/s\n"
    assert (
        _error(text) == "sources.yaml:4: duplicate key 'repo' (first at line 3): remove one of them"
    )


@pytest.mark.parametrize("repo", ["just-a-name", "o/r/extra", "-bad/x", "o/"])
def test_malformed_repo(repo: str) -> None:
    message = _error(f"projects:\n  - name: a\n    repo: '{repo}'\n")
    assert (
        message == f"sources.yaml:2: project 'a': repo {repo!r} must look like 'owner/name'"
    )


def test_bad_regex() -> None:
    message = _error("projects:\n  - name: a\n    repo: o/r\n    tag_pattern: 'v(['\n")
    assert message.startswith("sources.yaml:2: project 'a': tag_pattern: tag_pattern 'v([' is not")


def test_bad_track_value() -> None:
    message = _error("projects:\n  - name: a\n    repo: o/r\n    track: newest\n")
    assert message.startswith("sources.yaml:2: project 'a': track: Input should be 'auto'")


def test_malformed_yaml_gives_line_and_column() -> None:
    assert _error("projects:\n  - name: a\n   repo: o/r\n") == (
        "sources.yaml:3:4: malformed YAML: expected <block end>, but found '<block mapping start>'"
    )


def test_project_needs_a_location() -> None:
    message = _error("projects:\n  - name: a\n")
    assert message.startswith("sources.yaml:2: project 'a': needs where it lives: ")
    assert "'repo' (GitHub)" in message and "'gitee' (Gitee)" in message  # every forge, any order
    assert message.endswith("a release channel, or 'homepage' when no source can fetch it")


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
    assert message.startswith(
        "sources.yaml:1: unknown top-level key(s) ['projcts']: allowed are settings, projects, "
    )
    assert "github" in message.rsplit(":", 1)[1].split(", ")


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
