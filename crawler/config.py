"""``sources.yaml`` → validated, immutable configuration.

Every problem is reported as ``file:line: project 'X': what is wrong — what to do`` and stops
the run before anything is fetched or stored.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from crawler.cron import CronError, parse_crontab

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


class TableSpec(_Model):
    """One table to watch on a page: chosen by CSS selector or by the heading it follows."""

    name: str
    selector: str | None = None
    heading: str | None = None
    key: tuple[str, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_locator(self) -> TableSpec:
        if (self.selector is None) == (self.heading is None):
            raise ValueError(f"table {self.name!r} needs exactly one of 'selector' or 'heading'")
        return self


class PageSpec(_Model):
    """A vendor documentation page or a file in a GitHub repository."""

    name: str
    url: str | None = None
    repo: str | None = None
    path: str | None = None
    tables: tuple[TableSpec, ...] = ()
    pins: dict[str, str] = Field(default_factory=dict)
    text: str | None = None  # CSS selector of a block compared as normalised text

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
        _check_repo(value)
        return value


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
    github: GitHubSettings = GitHubSettings()
    settings: Settings = Settings()
    schedule: ScheduleSettings = ScheduleSettings()
    notify: NotifySettings = NotifySettings()
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


_SECTIONS: dict[str, type[_Model]] = {
    "github": GitHubSettings,
    "settings": Settings,
    "schedule": ScheduleSettings,
    "notify": NotifySettings,
}


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

    unknown = set(raw) - {*_SECTIONS, "projects", LINE_KEY}
    if unknown:
        raise ConfigError(
            f"{path}:{raw[LINE_KEY]}: unknown top-level key(s) {sorted(unknown)}: "
            f"allowed are {', '.join(_SECTIONS)}, projects"
        )
    sections: dict[str, Any] = {}
    for section, model in _SECTIONS.items():
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
