"""The catalog keeps each validated project entry as a slotted ``ProjectSpec`` (not a pydantic
model: the catalog is held for the whole audit). It reads, compares, copies and refuses
changes as the model did, and is made only from a validated entry."""

from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from crawler.config import ConfigError, Location, parse_config
from crawler.config.loader import Config
from crawler.config.projects import ProjectEntry, ProjectSpec

CATALOG = """\
settings: {release_shown: newest_final}
projects:
  - name: vLLM
    repo: vllm-project/vllm
    pypi: vllm
    tag_pattern: '^v\\d'
    note: the engine
  - name: plugin
    part_of: vLLM
"""


def test_a_parsed_project_is_a_slotted_record_with_every_field_of_its_entry() -> None:
    config = parse_config(CATALOG)
    vllm, plugin = config.projects
    assert type(vllm) is ProjectSpec and not hasattr(vllm, "__dict__")
    assert tuple(ProjectEntry.model_fields) == ProjectSpec.FIELDS
    assert (vllm.name, vllm.forge, vllm.channels) == (
        "vLLM",
        Location(source="github", path="vllm-project/vllm"),
        (Location(source="pypi", path="vllm"),),
    )
    assert (vllm.tag_pattern, vllm.note, vllm.line, vllm.key_lines) == (
        "^v\\d", "the engine", 3,
        (("name", 3), ("repo", 4), ("pypi", 5), ("tag_pattern", 6), ("note", 7)),
    )  # fmt: skip
    # the settings' release_shown filled in by the Config, through model_copy
    assert (vllm.release_shown, plugin.release_shown) == ("newest_final", "newest_final")
    assert (plugin.part_of, plugin.forge, plugin.fetched, plugin.line_of("part_of")) == (
        "vLLM", None, False, 9,
    )  # fmt: skip
    assert vllm.forge_line() == 4 and vllm.line_of("homepage") == 3


def test_made_like_the_model_it_validates_and_equals_the_parsed_one() -> None:
    parsed = parse_config("projects:\n  - name: a\n    repo: o/r\n").projects[0]
    made = ProjectSpec(name="a", repo="o/r", line=2, key_lines=(("name", 2), ("repo", 3)))
    assert made == parsed and hash(made) == hash(parsed)
    assert made != ProjectSpec(name="a", repo="o/other", line=2, key_lines=made.key_lines)
    assert ProjectSpec.model_validate({"name": "a", "repo": "o/r"}).forge == parsed.forge
    with pytest.raises(ValidationError, match="tag_pattern"):
        ProjectSpec(name="a", repo="o/r", tag_pattern="(")
    with pytest.raises(ValidationError, match="needs where it lives"):
        ProjectSpec.model_validate({"name": "a"})


def test_immutable_copied_with_changes_and_pickled_whole() -> None:
    spec = ProjectSpec(name="a", repo="o/r", note="kept")
    with pytest.raises(AttributeError, match="immutable"):
        spec.name = "b"  # type: ignore[misc]
    moved = spec.model_copy(update={"forge": Location(source="git", path="https://h/r.git")})
    assert (moved.name, moved.note, moved.forge) == (
        "a", "kept", Location(source="git", path="https://h/r.git"),
    )  # fmt: skip
    assert spec.forge == Location(source="github", path="o/r")  # the original unchanged
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert repr(spec).startswith("ProjectSpec(name='a', forge=Location(")


def test_the_config_takes_records_as_they_are_and_entries_validated() -> None:
    spec = ProjectSpec(name="a", repo="o/r")
    config = Config(path="x", projects=(spec, {"name": "b", "pypi": "b"}))
    assert config.projects[0] is spec
    assert config.projects[1] == ProjectSpec(name="b", pypi="b")
    with pytest.raises(ValidationError, match="needs where it lives"):
        Config(path="x", projects=({"name": "c"},))


def test_a_location_is_a_slotted_record_and_a_mapping_given_for_one_is_validated() -> None:
    config = parse_config(
        "projects:\n  - name: a\n    forge: {source: github, path: o/r}\n"
        "    pages:\n      - {name: p, path: R.md, gitee: x/y, pins: {v: 'v(\\d)'}}\n"
    )
    project = config.projects[0]
    assert project.forge == Location(source="github", path="o/r", options=())
    assert not hasattr(project.forge, "__dict__")
    page = project.pages[0]
    assert (page.location, str(page.location)) == (Location("gitee", "x/y"), "gitee:x/y")
    assert page.model_dump()["location"] == {"source": "gitee", "path": "x/y", "options": ()}
    # a wrong mapping is said as before, with the keys a location takes
    with pytest.raises(ConfigError) as info:
        parse_config("projects:\n  - name: a\n    forge: {sourse: github, path: a/b}\n")
    assert info.value.problems == (
        "sources.yaml:3: project 'a': forge: 'source' is missing: add it",
        "sources.yaml:3: project 'a': forge: unknown key 'sourse' (did you mean 'source'?)",
    )
