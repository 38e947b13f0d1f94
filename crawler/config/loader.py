"""``sources.yaml`` → a validated, immutable ``Config``: the YAML read safely (no aliases, no
lists as keys, size limits), every mapping's line remembered for the messages."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, get_args

import yaml
from pydantic import BaseModel, Field, ValidationError, ValidationInfo, field_validator
from yaml.composer import Composer

from crawler.config.common import KEY_LINES, LINE_KEY, ConfigError, Model, catalog_id, name_keys
from crawler.config.items import item_problems
from crawler.config.problems import Problem, listed, suggestion, validation_problems
from crawler.config.projects import ProjectEntry, ProjectSpec
from crawler.config.settings import NotifySettings, ScheduleSettings, Settings

# Limits no real catalog reaches (the shipped one has a few dozen projects in a few KiB); they
# stop a wrong or hostile file before it costs minutes and gigabytes.
MAX_CONFIG_BYTES = 1024 * 1024
MAX_PROJECTS = 50_000
MAX_NUMBER_DIGITS = 30  # a seconds, bytes or count setting has a dozen at most

# A large catalog says so: CRAWLER_LARGE_CATALOG=1 in the environment raises both limits to
# these (still bounded: a hostile file is still stopped), and nobody else's guard moves.
LARGE_CATALOG_ENV = "CRAWLER_LARGE_CATALOG"
LARGE_CONFIG_BYTES = 256 * 1024 * 1024
LARGE_PROJECTS = 2_000_000


def catalog_limits() -> tuple[int, int]:
    """(bytes, projects) a catalog may have: the defaults, or the large-catalog limits."""
    if os.environ.get(LARGE_CATALOG_ENV, "").strip().lower() in ("1", "true", "yes"):
        return LARGE_CONFIG_BYTES, LARGE_PROJECTS
    return MAX_CONFIG_BYTES, MAX_PROJECTS


class Config(Model):
    path: str
    settings: Settings = Settings()
    sources: dict[str, Any] = Field(default_factory=dict)  # section name → its settings model
    schedule: ScheduleSettings = ScheduleSettings()
    notify: NotifySettings = NotifySettings()
    projects: tuple[ProjectSpec, ...]

    @field_validator("projects")
    @classmethod
    def _release_shown(
        cls, projects: tuple[ProjectSpec, ...], info: ValidationInfo
    ) -> tuple[ProjectSpec, ...]:
        """A project without its own ``release_shown`` shows the release the settings say."""
        settings = info.data.get("settings")
        if not isinstance(settings, Settings) or settings.release_shown == "highest_version":
            return projects  # the default: a project's Tracking says it already
        shown = settings.release_shown
        return tuple(
            p if p.release_shown is not None else p.model_copy(update={"release_shown": shown})
            for p in projects
        )

    def project(self, name: str) -> ProjectSpec:
        for project in self.projects:
            if project.name == name:
                return project
        raise KeyError(name)

    def source_settings(self, name: str) -> Any:
        """A source's settings section (its defaults when sources.yaml has none)."""
        from crawler.config.kinds import source_kinds

        return self.sources.get(name) or source_kinds()[name].settings()


# libyaml's parser when PyYAML was built with it (about 5 times faster), else the pure-Python one
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_SafeLoader):  # type: ignore[valid-type,misc]
    """Safe loader that remembers each mapping's line and refuses what a catalog never needs:
    lists or mappings as keys, merge keys, anchors and aliases; a key said twice in one
    mapping is noted in ``duplicates`` (line, problem), its first value kept."""

    duplicates: list[tuple[int, str]]


def _refuse_alias(node: yaml.Node) -> ConfigError:
    return ConfigError(
        f"line {node.start_mark.line + 1}: YAML anchors and aliases (&name, *name) "
        "are not supported: write the value out"
    )


# An alias is a node met a second time: it is refused before its value is expanded (a
# "billion laughs" document grows exponentially only once it is constructed). The check is
# inlined in the two container constructors: this runs for every node of the catalog.


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> list[Any]:
    items = []
    for child in node.value:
        if child in loader.constructed_objects or child in loader.recursive_objects:
            raise _refuse_alias(child)
        items.append(loader.construct_object(child, deep=True))
    return items


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    mapping: dict[Any, Any] = {}
    seen: dict[Any, int] = {}
    done, busy = loader.constructed_objects, loader.recursive_objects
    for key_node, value_node in node.value:
        _refuse_merge(key_node)
        for child in (key_node, value_node):
            if child in done or child in busy:
                raise _refuse_alias(child)
        key = _new_key(
            key_node, loader.construct_object(key_node, deep=True), seen, loader.duplicates
        )
        value = loader.construct_object(value_node, deep=True)
        if key is _SAID:
            continue
        mapping[key] = value
    mapping[LINE_KEY] = node.start_mark.line + 1
    mapping[KEY_LINES] = seen  # a moved link names the line of its own key (homepage:, url:)
    return mapping


def _refuse_merge(key_node: yaml.Node) -> None:
    if key_node.tag == "tag:yaml.org,2002:merge":
        raise ConfigError(
            f"line {key_node.start_mark.line + 1}: YAML merge keys ('<<') are not supported: "
            "write the keys out"
        )


_SAID = object()  # a key said twice: its problem noted, its second value left out


def _new_key(
    key_node: yaml.Node, key: Any, seen: dict[Any, int], said: list[tuple[int, str]]
) -> Any:
    """``key`` of a mapping, refused when it is a list or mapping; a key said before is
    noted (every problem is said in one run) and ``_SAID`` returned: the first one stands."""
    line = key_node.start_mark.line + 1
    try:
        hash(key)
    except TypeError:
        what = "mapping" if isinstance(key, dict) else "list"
        raise ConfigError(
            f"line {line}: a {what} cannot be a key: use a plain name before the ':'"
        ) from None
    if key in seen:
        what = f"duplicate key {key!r} (first at line {seen[key]}): remove one of them"
        said.append((line, what))
        return _SAID
    if type(key) is str:  # one copy of `name`, `repo`… for every entry (their key lines keep it)
        key = sys.intern(key)
    seen[key] = line
    return key


def _construct_int(loader: _LineLoader, node: yaml.ScalarNode) -> int:
    """An integer of at most MAX_NUMBER_DIGITS digits (Python refuses to convert more than
    4,300 with a ValueError that names no line)."""
    digits = sum(char.isalnum() for char in str(node.value))
    if digits > MAX_NUMBER_DIGITS:
        raise ConfigError(
            f"line {node.start_mark.line + 1}: a number of {digits:,} digits, over the limit "
            f"of {MAX_NUMBER_DIGITS}: no setting needs more"
        )
    value: int = loader.construct_yaml_int(node)
    return value


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


class _StreamLoader(_LineLoader, Composer):
    """The same loader, composing one node tree at a time: each entry of the top-level
    `projects` list is composed, constructed and handed over before the next is read, so a
    large catalog is never one tree of nodes in memory (23 MB for 10,000 projects: most of the
    peak of reading it). libyaml still parses; PyYAML's composer builds the nodes.

    A node constructed for an earlier entry stays known while it is anchored, so an alias to
    it is refused (and a merge key before it) exactly as in one tree. (PyYAML's loader
    internals are untyped: ``me`` reaches them.)"""

    def __init__(self, stream: str) -> None:
        # libyaml's loader (typeshed cannot type it: mypy sees the Composer after it)
        super().__init__(stream)  # type: ignore[call-arg]
        self.anchors: dict[Any, yaml.Node] = {}  # Composer's own __init__ is not reached
        self.duplicates = []

    def node(self) -> yaml.Node:
        compose: Any = Composer.compose_node
        found: yaml.Node = compose(self, None, None)
        return found

    def value(self) -> Any:
        """The next node composed and constructed."""
        return self.construct(self.node())

    def construct(self, node: yaml.Node) -> Any:
        """``node`` constructed; a node met before (an alias to an earlier entry) refused."""
        me: Any = self
        if node in me.constructed_objects:
            raise _refuse_alias(node)
        data = me.construct_object(node, deep=True)  # deep: nothing left for later
        anchored = set(map(id, me.anchors.values()))
        me.constructed_objects = {
            n: v for n, v in me.constructed_objects.items() if id(n) in anchored
        }
        return data


def _read_catalog(
    text: str, on_project: Callable[[int, Any, int], None], said: list[tuple[int, str]]
) -> Any:
    """The YAML document, a project at a time: a top-level mapping's `projects` list is handed
    to ``on_project`` entry by entry (index, value, line) and left out of the mapping returned
    (it holds the list's length instead); any other document is returned whole. A key said
    twice in a mapping goes to ``said`` (line, problem)."""
    loader = _StreamLoader(text)
    loader.duplicates = said
    try:
        loader.get_event()  # stream start
        if loader.check_event(yaml.StreamEndEvent):
            return None
        loader.get_event()  # document start
        if not loader.check_event(yaml.MappingStartEvent):
            data = loader.value()
        else:
            data = _read_top(loader, on_project)
        loader.get_event()  # document end
        if not loader.check_event(yaml.StreamEndEvent):
            event = loader.get_event()
            raise yaml.composer.ComposerError(
                "expected a single document in the stream", None,
                "but found another document", event.start_mark,
            )  # fmt: skip
        return data
    finally:
        loader.dispose()


def _read_top(loader: _StreamLoader, on_project: Callable[[int, Any, int], None]) -> dict[Any, Any]:
    start = loader.peek_event()
    if start.anchor is not None or start.tag not in (None, "tag:yaml.org,2002:map"):
        # an anchored or tagged top level: read as one tree, as ever
        data: dict[Any, Any] = loader.value()
        return data
    loader.get_event()
    top: dict[Any, Any] = {}
    seen: dict[Any, int] = {}
    while not loader.check_event(yaml.MappingEndEvent):
        key_node = loader.node()
        _refuse_merge(key_node)
        key = _new_key(key_node, loader.construct(key_node), seen, loader.duplicates)
        if key is _SAID:
            loader.value()  # read past the second value: the first one stands
            continue
        items = loader.peek_event()
        if (
            key != "projects"
            or not isinstance(items, yaml.SequenceStartEvent)
            or items.anchor is not None
            or items.tag not in (None, "tag:yaml.org,2002:seq")
        ):
            top[key] = loader.value()
            continue
        loader.get_event()
        count = 0
        while not loader.check_event(yaml.SequenceEndEvent):
            node = loader.node()
            on_project(count, loader.construct(node), node.start_mark.line + 1)
            count += 1
        loader.get_event()
        top[key] = count
    loader.get_event()
    top[LINE_KEY] = start.start_mark.line + 1
    top[KEY_LINES] = seen  # a wrong top-level key is cited at its own line
    return top


def _strip_lines(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_lines(v) for k, v in value.items() if k not in (LINE_KEY, KEY_LINES)}
    if isinstance(value, list):
        return [_strip_lines(v) for v in value]
    return value


def _key_lines(mapping: dict[Any, Any]) -> tuple[tuple[str, int], ...]:
    lines = mapping.get(KEY_LINES)
    if not isinstance(lines, dict):
        return ()
    return tuple((k, v) for k, v in lines.items() if isinstance(k, str) and isinstance(v, int))


def _project_data(entry: dict[Any, Any]) -> dict[str, Any]:
    """A project entry as ProjectSpec validates it: its own line, the line of each of its keys,
    and each page's (its ``url:``, else where the page starts)."""
    data: dict[str, Any] = _strip_lines(entry)
    data["line"] = entry.get(LINE_KEY, 0)
    data["key_lines"] = _key_lines(entry)
    pages = entry.get("pages")
    if isinstance(pages, list) and isinstance(data.get("pages"), list):
        data["pages"] = [
            {**page, "line": dict(_key_lines(raw)).get("url", raw.get(LINE_KEY, 0))}
            if isinstance(page, dict) and isinstance(raw, dict)
            else page
            for page, raw in zip(data["pages"], pages, strict=True)
        ]
    return data


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The first pydantic model in a field's type (``X``, ``X | None``, ``tuple[X, ...]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    entry = getattr(annotation, "ENTRY", None)  # a record validated as a model (Location)
    if isinstance(entry, type) and issubclass(entry, BaseModel):
        return entry
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _keys_beside(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys the model at ``loc[:-1]`` accepts: where an unknown key ``loc[-1]`` was met."""
    current: type[BaseModel] | None = model
    for part in loc[:-1]:
        if isinstance(part, int) or current is None or part == current.__name__:
            continue  # a list index, or the member of a union: the same model
        field = current.model_fields.get(str(part))
        current = _model_in(field.annotation) if field is not None else None
    if current is None:
        return []
    keys = [field.alias or name for name, field in current.model_fields.items()]
    if {"forge", "location"} & set(keys):  # written as `repo:`, `gitee:`, `pypi:`… (and options)
        from crawler.config.kinds import source_kinds

        for kind in source_kinds().values():
            keys += [kind.project_key, *kind.option_keys]
    return [k for k in dict.fromkeys(keys) if k not in _DERIVED]


# set by the loader, never written
_DERIVED = {"forge", "channels", "location", "line", "key_lines"}


def _same_name(name: str, first: str, first_at: int) -> str:
    if name == first:
        return f"project {name!r}: duplicate name (first at line {first_at}): names must be unique"
    ident = catalog_id(name)
    both = f"; both have the id {ident!r}" if ident == catalog_id(first) else ""
    return (
        f"project {name!r} and project {first!r} (line {first_at}) are the same "
        f"name to the catalog (case, spaces, accents and invisible characters aside{both}), so "
        "one could pass for the other: give them distinct names"
    )


def load_config(path: str | Path) -> Config:
    """Read and validate ``sources.yaml``; raise ConfigError naming file, line and project."""
    path = Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or a device would never end
            raise ConfigError(f"{path}: not a regular file: pass --config PATH of a YAML file")
        with path.open("rb") as handle:
            data = _read_up_to(handle, catalog_limits()[0] + 1)
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found: pass --config PATH") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > catalog_limits()[0]:
        raise ConfigError(_too_large(str(path)))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_config(text, str(path))


def _read_up_to(handle: BinaryIO, limit: int) -> bytes:
    """At most ``limit`` bytes, a MiB at a time: ``read(limit)`` would allocate the whole limit
    (256 MiB with CRAWLER_LARGE_CATALOG) for a file of a few KiB."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = handle.read(min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _too_large(path: str) -> str:
    return (
        f"{path}: larger than {catalog_limits()[0] // 1024 // 1024} MiB, the limit for a "
        "catalog (the shipped one is a few KiB): is this the right file? (a catalog really "
        f"this large: set {LARGE_CATALOG_ENV}=1)"
    )


# Sections of sources.yaml beside `projects`; each source adds its own (crawler.upstream).
_SECTIONS: dict[str, type[Model]] = {
    "settings": Settings,
    "schedule": ScheduleSettings,
    "notify": NotifySettings,
}


def parse_config(text: str, path: str = "sources.yaml") -> Config:
    """Validate the catalog; ConfigError lists every problem found, in file order (a YAML
    error, which stops the reading, alone)."""
    max_bytes, max_projects = catalog_limits()
    if len(text) > max_bytes or len(text.encode("utf-8")) > max_bytes:
        raise ConfigError(_too_large(path))
    entries = _Entries(max_projects)
    said: list[tuple[int, str]] = []  # keys said twice
    try:
        raw = _read_catalog(text, entries.take, said)
    except ConfigError as exc:
        raise ConfigError(f"{path}:{str(exc).removeprefix('line ')}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        raise ConfigError(f"{where}: malformed YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: malformed YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to be a catalog") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("projects"), int | list):
        raise ConfigError(f"{path}:1: expected a mapping with a 'projects:' list")
    if isinstance(raw["projects"], list):  # an anchored list, read as one tree
        for index, entry in enumerate(raw["projects"]):
            entries.take(index, entry, raw[LINE_KEY])
        raw["projects"] = len(raw["projects"])
    if raw["projects"] > max_projects:
        raise ConfigError(
            f"{path}:{raw[LINE_KEY]}: {raw['projects']:,} projects, over the limit of "
            f"{max_projects:,}: for a catalog really this large, set {LARGE_CATALOG_ENV}=1"
        )
    sections, problems = _sections(raw)
    problems += [Problem(line, what) for line, what in said]
    problems += entries.problems
    problems += item_problems(entries.projects, entries.unread)
    if problems:
        raise ConfigError(*listed(path, problems), total=len(problems))
    return Config(path=path, projects=tuple(entries.projects), **sections)


class _Entries:
    """The entries of `projects:`, each validated as it is read (its YAML then let go): the
    projects, and the problems of those that are not."""

    def __init__(self, max_projects: int) -> None:
        self.max_projects = max_projects
        self.projects: list[ProjectSpec] = []
        self.first_line: dict[str, tuple[str, int]] = {}  # each name key → the first name
        self.problems: list[Problem] = []
        self.unread: set[str] = set()  # names of entries with a problem: no part_of check

    def take(self, index: int, entry: Any, line: int) -> None:
        if index >= self.max_projects:
            return  # counted, not kept
        if not isinstance(entry, dict):
            what = f"projects[{index}] must be a mapping with a 'name'"
            self.problems.append(Problem(line, what))
            return
        line = entry.get(LINE_KEY, 0)
        name = entry.get("name", f"#{index + 1}")
        try:
            spec = ProjectSpec.of(ProjectEntry.model_validate(_project_data(entry)))
        except ValidationError as exc:
            self.unread.add(str(name))
            keys_at = partial(_keys_beside, ProjectEntry)
            prefix = f"project {name!r}: "
            self.problems.extend(validation_problems(exc, entry, line, prefix, keys_at))
            return
        keys = name_keys(spec.name)
        clash = next((self.first_line[k] for k in keys if k in self.first_line), None)
        if clash is not None:
            self.problems.append(Problem(line, _same_name(spec.name, *clash)))
            return
        self.first_line.update(dict.fromkeys(keys, (spec.name, line)))
        self.projects.append(spec)


def _sections(raw: dict[Any, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """The sections beside `projects` validated (the crawler's and each source's), and the
    problems of the top level: a key no section has, a wrong value in one."""
    from crawler.config.kinds import source_kinds

    kinds = source_kinds()
    allowed = [*_SECTIONS, "projects", *kinds]
    key_lines = dict(_key_lines(raw))
    problems = [
        Problem(key_lines.get(str(key), raw[LINE_KEY]), f"unknown top-level key {key!r}"
                + suggestion(str(key), allowed))
        for key in raw
        if key not in (*allowed, LINE_KEY, KEY_LINES)
    ]  # fmt: skip
    sections: dict[str, Any] = {}
    source_settings: dict[str, Any] = {}
    models: list[tuple[str, type[BaseModel]]] = list(_SECTIONS.items())
    models += [(name, kind.settings) for name, kind in kinds.items()]
    for section, model in models:
        value = raw.get(section) or {}
        start = key_lines.get(section, raw[LINE_KEY])
        try:
            validated = model.model_validate(_strip_lines(value))
        except ValidationError as exc:
            keys_at = partial(_keys_beside, model)
            problems += validation_problems(exc, value, start, f"{section}: ", keys_at)
            continue
        if section in _SECTIONS:
            sections[section] = validated
        else:
            source_settings[section] = validated
    sections["sources"] = source_settings
    return sections, problems
