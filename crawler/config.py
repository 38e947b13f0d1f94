"""``sources.yaml`` → validated, immutable configuration.

Every problem is reported as ``file:line: project 'X': what is wrong — what to do`` and stops
the run before anything is fetched or stored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
DEFAULT_API_URL = "https://api.github.com"
DEFAULT_PAGE_SIZE_LIMIT = 5 * 1024 * 1024
LINE_KEY = "__line__"


class ConfigError(Exception):
    """A configuration problem, with the file and line it comes from."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_regex(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"{what} {value!r} is not a valid regular expression: {exc}") from None
    return value


def _check_repo(value: str | None) -> str | None:
    if value is not None and not REPO_RE.match(value):
        raise ValueError(f"repo {value!r} must look like 'owner/name'")
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


class PageSpec(_Model):
    """A vendor documentation page or a file in a GitHub repository."""

    name: str
    url: str | None = None
    repo: str | None = None
    path: str | None = None
    tables: tuple[TableSpec, ...] = ()
    pins: dict[str, str] = Field(default_factory=dict)
    text: str | None = None  # CSS selector of a block compared as normalised text
    integration: PageIntegration | None = None

    @field_validator("url")
    @classmethod
    def _http_only(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^/\s]+", value, re.IGNORECASE):
            raise ValueError(f"url {value!r} must start with http:// or https://")
        return value

    @field_validator("repo")
    @classmethod
    def _repo(cls, value: str | None) -> str | None:
        return _check_repo(value)

    @field_validator("pins")
    @classmethod
    def _pins(cls, value: dict[str, str]) -> dict[str, str]:
        for name, pattern in value.items():
            _check_regex(pattern, f"pin {name!r}")
            if re.compile(pattern).groups < 1:
                raise ValueError(f"pin {name!r} needs a capture group around the pinned value")
        return value

    @model_validator(mode="after")
    def _one_location(self) -> PageSpec:
        if (self.url is None) == (self.repo is None):
            raise ValueError(f"page {self.name!r} needs either 'url' or 'repo' and 'path'")
        if self.repo is not None and not self.path:
            raise ValueError(f"page {self.name!r} names a repo and needs a 'path' in it")
        if not (self.tables or self.pins or self.text):
            raise ValueError(f"page {self.name!r} watches nothing: add 'tables', 'pins' or 'text'")
        return self

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
    repo: str | None = None
    homepage: str | None = None  # where a project lives when it is not on GitHub
    track: Literal["auto", "releases", "tags", "commits"] = "auto"
    tag_pattern: str | None = None
    prereleases: Literal["include", "exclude"] = "include"
    note: str | None = None
    pages: tuple[PageSpec, ...] = ()
    line: int = 0

    @field_validator("repo")
    @classmethod
    def _repo(cls, value: str | None) -> str | None:
        return _check_repo(value)

    @field_validator("tag_pattern")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        return _check_regex(value, "tag_pattern")

    @model_validator(mode="after")
    def _somewhere(self) -> ProjectSpec:
        if self.repo is None and self.homepage is None:
            raise ValueError("needs 'repo: owner/name', or 'homepage' when it is not on GitHub")
        return self

    @property
    def on_github(self) -> bool:
        return self.repo is not None


class GitHubSettings(_Model):
    api_url: str | None = None
    graphql_batch: int = Field(default=50, ge=1, le=100)
    releases_per_repo: int = Field(default=10, ge=1, le=100)
    tags_per_repo: int = Field(default=10, ge=1, le=100)
    budget_reserve: int = Field(default=0, ge=0)  # requests kept unspent
    max_retries: int = Field(default=3, ge=0, le=10)
    max_retry_wait: float = Field(default=60.0, ge=0)  # total waiting per request, seconds
    retry_base_delay: float = Field(default=1.0, ge=0)
    inventory: Literal["auto", "always", "never"] = "auto"  # license-file tree scan


class Settings(_Model):
    page_size_limit: int = Field(default=DEFAULT_PAGE_SIZE_LIMIT, ge=1024)
    allow_private_addresses: bool = False
    timeout: float = Field(default=30.0, gt=0)
    per_host_concurrency: int = Field(default=2, ge=1, le=16)


class Config(_Model):
    path: str
    github: GitHubSettings = GitHubSettings()
    settings: Settings = Settings()
    projects: tuple[ProjectSpec, ...]

    def project(self, name: str) -> ProjectSpec:
        for project in self.projects:
            if project.name == name:
                return project
        raise KeyError(name)


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys and remembers each mapping's line."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise ConfigError(
                f"line {key_node.start_mark.line + 1}: duplicate key {key!r} "
                f"(first at line {seen[key]}): remove one of them"
            )
        seen[key] = key_node.start_mark.line + 1
    mapping = loader.construct_mapping(node, deep=True)
    mapping[LINE_KEY] = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


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
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found: pass --config PATH") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_config(text, str(path))


def parse_config(text: str, path: str = "sources.yaml") -> Config:
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
    if not isinstance(raw, dict) or not isinstance(raw.get("projects"), list):
        raise ConfigError(f"{path}:1: expected a mapping with a 'projects:' list")

    unknown = set(raw) - {"github", "settings", "projects", LINE_KEY}
    if unknown:
        raise ConfigError(
            f"{path}:{raw[LINE_KEY]}: unknown top-level key(s) {sorted(unknown)}: "
            "allowed are github, settings, projects"
        )
    sections: dict[str, Any] = {}
    for section, model in (("github", GitHubSettings), ("settings", Settings)):
        value = raw.get(section) or {}
        line = value.get(LINE_KEY, raw[LINE_KEY]) if isinstance(value, dict) else raw[LINE_KEY]
        try:
            sections[section] = model.model_validate(_strip_lines(value))
        except ValidationError as exc:
            raise ConfigError(f"{path}:{line}: {section}: {_explain(exc)}") from None

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
