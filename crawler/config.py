"""``sources.yaml`` → validated, immutable configuration.

Every problem is reported as ``file:line: project 'X': what is wrong — what to do`` and stops
the run before anything is fetched or stored.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from crawler.cron import CronError, parse_crontab
from crawler.model import Tracking, TrackMode
from crawler.patterns import compile_pattern

DEFAULT_PAGE_SIZE_LIMIT = 5 * 1024 * 1024
DEFAULT_REQUEST_DEADLINE = 60.0  # seconds for a whole page request: redirects, headers, body
DEFAULT_PIN_TEXT_LIMIT = 1_000_000  # characters of page text a pin's pattern scans
LINE_KEY = "__line__"
# Limits no real catalog reaches (the shipped one has a few dozen projects in a few KiB); they
# stop a wrong or hostile file before it costs minutes and gigabytes.
MAX_CONFIG_BYTES = 1024 * 1024
MAX_PROJECTS = 50_000


class ConfigError(Exception):
    """A configuration problem, with the file and line it comes from."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_regex(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    try:
        compile_pattern(value)  # the engine that will run it (with a time limit)
    except ValueError as exc:
        raise ValueError(f"{what} {exc}") from None
    return value


# The controlled vocabularies of the catalog's integration records (see the seed, section 5)
# and the software layers of its section 1.
SupportStatus = Literal[
    "upstream",
    "official plugin",
    "vendor integration",
    "community plugin",
    "in progress",
    "unverified",
]
SUPPORT_STATUSES: tuple[str, ...] = get_args(SupportStatus)
Layer = Literal[
    "framework",
    "compiler",
    "kernel programming",
    "kernel library",
    "serving",
    "distributed serving",
    "platform sdk",
]
LAYERS: tuple[str, ...] = get_args(Layer)


class FieldSource(_Model):
    """Where one field of an integration record comes from: a column of the row (a bare string
    in YAML), a literal ``{value: ...}``, or ``{pin: NAME}``, a pin watched on the same page."""

    column: str | None = None
    value: str | None = None
    pin: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _bare_column(cls, data: Any) -> Any:
        return {"column": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _exactly_one(self) -> FieldSource:
        if sum(x is not None for x in (self.column, self.value, self.pin)) != 1:
            raise ValueError("give a column name, or exactly one of {value: ...} or {pin: ...}")
        return self


class TableIntegrations(_Model):
    """How each row of a support table becomes an integration record of the catalog."""

    project: FieldSource | None = None  # default: the project that watches the table
    platform: FieldSource
    status: FieldSource
    version: FieldSource | None = None
    layer: Layer
    pins: tuple[str, ...] = ()  # pins of the same page that are version facts of each record

    @model_validator(mode="after")
    def _sources(self) -> TableIntegrations:
        for name in ("project", "platform", "status"):
            source = getattr(self, name)
            if source is not None and source.pin is not None:
                raise ValueError(f"integrations.{name} cannot come from a pin")
        if self.status.value is not None and self.status.value not in SUPPORT_STATUSES:
            raise ValueError(
                f"integrations.status {self.status.value!r} is not one of {list(SUPPORT_STATUSES)}"
            )
        return self


def _casefold_unique(mapping: Mapping[str, str], what: str) -> None:
    seen: dict[str, str] = {}
    for key in mapping:
        folded = " ".join(key.split()).casefold()
        if folded in seen:
            raise ValueError(f"{what} has {seen[folded]!r} and {key!r}, which match the same cells")
        seen[folded] = key


class TableSpec(_Model):
    """One table to watch on a page: chosen by CSS selector or by the heading it follows.

    ``integrations`` turns each row into an integration record; ``status_map`` maps the page's
    status wording to the controlled vocabulary and ``platform_map`` (optional) the page's
    platform wording to the catalog's platform names. A cell neither map covers is an export
    error, never a silent default."""

    name: str
    selector: str | None = None
    heading: str | None = None
    key: tuple[str, ...] = Field(min_length=1)
    integrations: TableIntegrations | None = None
    status_map: dict[str, SupportStatus] = Field(default_factory=dict)
    platform_map: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_locator(self) -> TableSpec:
        if (self.selector is None) == (self.heading is None):
            raise ValueError(f"table {self.name!r} needs exactly one of 'selector' or 'heading'")
        return self

    @model_validator(mode="after")
    def _mapping(self) -> TableSpec:
        mapping = self.integrations
        if mapping is None:
            if self.status_map or self.platform_map:
                raise ValueError(
                    f"table {self.name!r}: status_map/platform_map need an 'integrations' mapping"
                )
            return self
        if mapping.status.column is not None and not self.status_map:
            raise ValueError(
                f"table {self.name!r}: status comes from column {mapping.status.column!r}: "
                f"add a status_map from its wording to one of {list(SUPPORT_STATUSES)}"
            )
        if self.platform_map and mapping.platform.column is None:
            raise ValueError(f"table {self.name!r}: platform_map needs a platform column")
        _casefold_unique(self.status_map, f"table {self.name!r}: status_map")
        _casefold_unique(self.platform_map, f"table {self.name!r}: platform_map")
        return self


class PageIntegration(_Model):
    """One integration record described by a page's pins alone (a README with no table)."""

    project: str | None = None  # the integrated project's name; default: the watching project
    platform: str = Field(min_length=1)
    status: SupportStatus
    layer: Layer
    version: str | None = None  # the pin whose value is the version range
    pins: tuple[str, ...] = ()  # further pins that are version facts of the record


class Location(_Model):
    """Where something lives on a source: ``github`` ``owner/name``, ``pypi`` ``vllm``…"""

    source: str  # a crawler.upstream registry name
    path: str
    options: tuple[tuple[str, str], ...] = ()  # per-project source options, e.g. gitlab_url

    def option(self, key: str) -> str | None:
        return dict(self.options).get(key)

    def __str__(self) -> str:
        return f"{self.source}:{self.path}"


def _take_locations(data: dict[str, Any]) -> list[Location]:
    """Pop every registry key (``repo``, ``gitee``, ``gitlab``, ``pypi``…) and its options."""
    from crawler.upstream.source import source_kinds

    found: list[Location] = []
    for kind in source_kinds().values():
        options = {k: data.pop(k) for k in kind.option_keys if k in data}
        if kind.project_key not in data:
            if options:
                raise ValueError(
                    f"{', '.join(options)} only applies with '{kind.project_key}:' "
                    f"(a {kind.label} project)"
                )
            continue
        path = data.pop(kind.project_key)
        if not isinstance(path, str) or not path.strip():
            raise ValueError(f"{kind.project_key} must be a non-empty string")
        for key, value in options.items():
            if not isinstance(value, str):
                raise ValueError(f"{key} must be a string")
        path = kind.check_path(path.strip())
        opts = tuple(sorted((k, kind.check_option(k, str(v))) for k, v in options.items()))
        found.append(Location(source=kind.name, path=path, options=opts))
    return found


def _forge_keys() -> str:
    from crawler.upstream.source import source_kinds

    keys = [f"'{k.project_key}' ({k.label})" for k in source_kinds().values() if k.role == "forge"]
    return ", ".join(keys)


class PageSpec(_Model):
    """A vendor documentation page (``url``), or a file (``path``) in a repository: the
    project's own, or one named like a project names its forge (``repo:``, ``gitee:``…)."""

    name: str
    url: str | None = None
    location: Location | None = None
    path: str | None = None
    tables: tuple[TableSpec, ...] = ()
    pins: dict[str, str] = Field(default_factory=dict)
    text: str | None = None  # CSS selector of a block compared as normalised text
    integration: PageIntegration | None = None

    @model_validator(mode="before")
    @classmethod
    def _locate(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("location") is None:
            data = dict(data)
            locations = _take_locations(data)
            if len(locations) > 1:
                raise ValueError("a page lives in one repository: name one of them")
            data["location"] = locations[0] if locations else None
        return data

    @field_validator("url")
    @classmethod
    def _http_only(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^/\s]+", value, re.IGNORECASE):
            raise ValueError(f"url {value!r} must start with http:// or https://")
        return value

    @field_validator("pins")
    @classmethod
    def _pins(cls, value: dict[str, str]) -> dict[str, str]:
        for name, pattern in value.items():
            _check_regex(pattern, f"pin {name!r}")
            if compile_pattern(pattern).groups < 1:
                raise ValueError(f"pin {name!r} needs a capture group around the pinned value")
        return value

    @model_validator(mode="after")
    def _one_location(self) -> PageSpec:
        if self.url is not None and (self.path is not None or self.location is not None):
            raise ValueError(f"page {self.name!r} needs either 'url' or a repository 'path'")
        if self.url is None and not self.path:
            raise ValueError(
                f"page {self.name!r} needs 'url', or 'path' (a file in the project's repository, "
                "or in the repository named beside it)"
            )
        if not (self.tables or self.pins or self.text):
            raise ValueError(f"page {self.name!r} watches nothing: add 'tables', 'pins' or 'text'")
        return self

    @property
    def where(self) -> str:
        """The page for messages: its URL, or ``repository:path``."""
        if self.url is not None:
            return self.url
        return f"{self.location.path}:{self.path}" if self.location else f"{self.path}"

    @model_validator(mode="after")
    def _integration_pins(self) -> PageSpec:
        named: list[tuple[str, str]] = []
        for table in self.tables:
            if table.integrations is not None:
                mapping = table.integrations
                version_pin = mapping.version.pin if mapping.version else None
                where = f"table {table.name!r}"
                named += [(where, p) for p in (*mapping.pins, version_pin) if p is not None]
        if self.integration is not None:
            pins = (*self.integration.pins, self.integration.version)
            named += [("integration", p) for p in pins if p is not None]
        for where, pin in named:
            if pin not in self.pins:
                raise ValueError(
                    f"page {self.name!r}: {where} names pin {pin!r}, which the page does not "
                    f"watch: add it under 'pins' or fix the name"
                )
        return self


class ProjectSpec(_Model):
    name: str = Field(min_length=1)
    forge: Location | None = None  # where the repository lives: GitHub, Gitee, GitLab…
    channels: tuple[Location, ...] = ()  # where packages are published beside it: PyPI…
    homepage: str | None = None  # for a project no source can fetch yet
    track: TrackMode = "auto"
    tag_pattern: str | None = None
    prereleases: Literal["include", "exclude"] = "include"
    note: str | None = None
    pages: tuple[PageSpec, ...] = ()
    line: int = 0

    @model_validator(mode="before")
    @classmethod
    def _locate(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("forge") or data.get("channels"):
            return data
        from crawler.upstream.source import source_kinds

        data = dict(data)
        locations = _take_locations(data)
        forges = [loc for loc in locations if source_kinds()[loc.source].role == "forge"]
        if len(forges) > 1:
            raise ValueError(
                "a project's repository lives on one forge: keep one of "
                + ", ".join(source_kinds()[loc.source].project_key for loc in forges)
            )
        data["forge"] = forges[0] if forges else None
        data["channels"] = tuple(loc for loc in locations if loc not in forges)
        return data

    @field_validator("tag_pattern")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        return _check_regex(value, "tag_pattern")

    @model_validator(mode="after")
    def _somewhere(self) -> ProjectSpec:
        if self.forge is None and not self.channels and self.homepage is None:
            raise ValueError(
                f"needs where it lives: {_forge_keys()}, a release channel, or 'homepage' "
                "when no source can fetch it"
            )
        for page in self.pages:
            if page.url is None and page.location is None and self.forge is None:
                raise ValueError(
                    f"page {page.name!r} names a 'path' but the project has no repository: "
                    "name the repository beside the path"
                )
        return self

    @property
    def tracking(self) -> Tracking:
        return Tracking(self.track, self.tag_pattern, self.prereleases)

    def locations(self) -> tuple[Location, ...]:
        return ((self.forge,) if self.forge else ()) + self.channels


class Settings(_Model):
    page_size_limit: int = Field(default=DEFAULT_PAGE_SIZE_LIMIT, ge=1024)
    allow_private_addresses: bool = False
    timeout: float = Field(default=30.0, gt=0)
    request_deadline: float = Field(default=DEFAULT_REQUEST_DEADLINE, gt=0)
    pin_text_limit: int = Field(default=DEFAULT_PIN_TEXT_LIMIT, ge=1000)
    per_host_concurrency: int = Field(default=2, ge=1, le=16)
    # one wall-clock limit per project: all its requests together
    project_deadline: float = Field(default=600.0, gt=0)
    # a project unchecked for longer than this is flagged `stale` (and the exit status is 1)
    stale_after_days: float = Field(default=3.0, gt=0)
    # a forge release with no package upload after this long is a channel_mismatch
    channel_grace_days: float = Field(default=7.0, ge=0)


class ScheduleSettings(_Model):
    """``schedule:``: when ``crawler schedule`` audits (its --cron/--timezone flags win)."""

    cron: str = "0 3 * * *"
    timezone: str = "UTC"

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        try:
            parse_crontab(value)
        except CronError as exc:
            raise ValueError(f"cron {value!r}: {exc}") from None
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        return check_timezone(value)


def check_timezone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"timezone {value!r} is not an IANA time zone name such as 'Europe/Berlin' or 'UTC'"
        ) from None
    return value


class GitHubIssueSettings(_Model):
    """The one catalog issue kept up to date with the latest report."""

    repo: str
    title: str = "Upstream release and license audit"
    labels: tuple[str, ...] = ("crawler-audit",)

    @field_validator("repo")
    @classmethod
    def _repo(cls, value: str) -> str:
        from crawler.upstream.sources.github import check_repo

        return check_repo(value)


class NotifySettings(_Model):
    """``notify:``: where a finished audit's summary goes (see crawler.notify)."""

    when: Literal["always", "changes", "errors"] = "changes"
    urls: tuple[str, ...] = ()  # Apprise URLs; CRAWLER_NOTIFY adds URLs that hold secrets
    attach_report: bool = True  # attach report.md where the service takes attachments
    report_url: str | None = None  # link template: {audit_id}, {report_dir}
    github_issue: GitHubIssueSettings | None = None

    @field_validator("urls")
    @classmethod
    def _urls(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for url in value:
            if "://" not in url:
                raise ValueError(f"url {url!r} is not an Apprise URL such as 'json://host/path'")
        return value


class Config(_Model):
    path: str
    settings: Settings = Settings()
    sources: dict[str, Any] = Field(default_factory=dict)  # section name → its settings model
    schedule: ScheduleSettings = ScheduleSettings()
    notify: NotifySettings = NotifySettings()
    projects: tuple[ProjectSpec, ...]

    def project(self, name: str) -> ProjectSpec:
        for project in self.projects:
            if project.name == name:
                return project
        raise KeyError(name)

    def source_settings(self, name: str) -> Any:
        """A source's settings section (its defaults when sources.yaml has none)."""
        from crawler.upstream.source import source_kinds

        return self.sources.get(name) or source_kinds()[name].settings()


# libyaml's parser when PyYAML was built with it (about 5 times faster), else the pure-Python one
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_SafeLoader):  # type: ignore[valid-type,misc]
    """Safe loader that remembers each mapping's line and refuses what a catalog never needs:
    duplicate keys, lists or mappings as keys, merge keys, anchors and aliases."""


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
        line = key_node.start_mark.line + 1
        if key_node.tag == "tag:yaml.org,2002:merge":
            raise ConfigError(
                f"line {line}: YAML merge keys ('<<') are not supported: write the keys out"
            )
        for child in (key_node, value_node):
            if child in done or child in busy:
                raise _refuse_alias(child)
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            what = "mapping" if isinstance(key, dict) else "list"
            raise ConfigError(
                f"line {line}: a {what} cannot be a key: use a plain name before the ':'"
            ) from None
        if key in seen:
            raise ConfigError(
                f"line {line}: duplicate key {key!r} "
                f"(first at line {seen[key]}): remove one of them"
            )
        seen[key] = line
        mapping[key] = loader.construct_object(value_node, deep=True)
    mapping[LINE_KEY] = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def _strip_lines(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_lines(v) for k, v in value.items() if k != LINE_KEY}
    if isinstance(value, list):
        return [_strip_lines(v) for v in value]
    return value


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = f"unknown key {str(err['loc'][-1])!r}: check its spelling"
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts)


def load_config(path: str | Path) -> Config:
    """Read and validate ``sources.yaml``; raise ConfigError naming file, line and project."""
    path = Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or a device would never end
            raise ConfigError(f"{path}: not a regular file: pass --config PATH of a YAML file")
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found: pass --config PATH") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(_too_large(str(path)))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_config(text, str(path))


def _too_large(path: str) -> str:
    return (
        f"{path}: larger than {MAX_CONFIG_BYTES // 1024 // 1024} MiB, the limit for a catalog "
        "(the shipped one is a few KiB): is this the right file?"
    )


# Sections of sources.yaml beside `projects`; each source adds its own (crawler.upstream).
_SECTIONS: dict[str, type[_Model]] = {
    "settings": Settings,
    "schedule": ScheduleSettings,
    "notify": NotifySettings,
}


def parse_config(text: str, path: str = "sources.yaml") -> Config:
    if len(text) > MAX_CONFIG_BYTES or len(text.encode("utf-8")) > MAX_CONFIG_BYTES:
        raise ConfigError(_too_large(path))
    try:
        raw = yaml.load(text, Loader=_LineLoader)
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
    if not isinstance(raw, dict) or not isinstance(raw.get("projects"), list):
        raise ConfigError(f"{path}:1: expected a mapping with a 'projects:' list")
    if len(raw["projects"]) > MAX_PROJECTS:
        raise ConfigError(
            f"{path}:{raw[LINE_KEY]}: {len(raw['projects']):,} projects, over the limit of "
            f"{MAX_PROJECTS:,}: split the catalog into several files"
        )

    from crawler.upstream.source import source_kinds

    kinds = source_kinds()
    allowed = [*_SECTIONS, "projects", *kinds]
    unknown = set(raw) - {*allowed, LINE_KEY}
    if unknown:
        raise ConfigError(
            f"{path}:{raw[LINE_KEY]}: unknown top-level key(s) {sorted(unknown)}: "
            f"allowed are {', '.join(allowed)}"
        )
    sections: dict[str, Any] = {}
    source_settings: dict[str, Any] = {}
    models: list[tuple[str, type[BaseModel]]] = list(_SECTIONS.items())
    models += [(name, kind.settings) for name, kind in kinds.items()]
    for section, model in models:
        value = raw.get(section) or {}
        line = value.get(LINE_KEY, raw[LINE_KEY]) if isinstance(value, dict) else raw[LINE_KEY]
        try:
            validated = model.model_validate(_strip_lines(value))
        except ValidationError as exc:
            raise ConfigError(f"{path}:{line}: {section}: {_explain(exc)}") from None
        if section in _SECTIONS:
            sections[section] = validated
        else:
            source_settings[section] = validated
    sections["sources"] = source_settings

    projects: list[ProjectSpec] = []
    first_line: dict[str, int] = {}
    for index, entry in enumerate(raw["projects"]):
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: projects[{index}] must be a mapping with a 'name'")
        line = entry.get(LINE_KEY, 0)
        name = entry.get("name", f"#{index + 1}")
        try:
            spec = ProjectSpec.model_validate({**_strip_lines(entry), "line": line})
        except ValidationError as exc:
            raise ConfigError(f"{path}:{line}: project {name!r}: {_explain(exc)}") from None
        if spec.name in first_line:
            raise ConfigError(
                f"{path}:{line}: project {spec.name!r}: duplicate name "
                f"(first at line {first_line[spec.name]}): names must be unique"
            )
        first_line[spec.name] = line
        projects.append(spec)
    return Config(path=path, projects=tuple(projects), **sections)
