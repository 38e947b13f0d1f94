"""Watched pages: where a page is (a URL, or a file of a repository), the tables, pins and text
it watches (how their facts become integration records: ``mappings``)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal, get_args

from pydantic import Field, GetCoreSchemaHandler, field_validator, model_validator
from pydantic_core import core_schema

from crawler.config.common import AtKey, Model, check_regex, refused_location
from crawler.config.mappings import (
    SUPPORT_STATUSES,
    PageIntegration,
    SupportStatus,
    TableIntegrations,
    casefold_unique,
)
from crawler.patterns import compile_pattern

# a git ref name (git check-ref-format, loosely): no spaces, no "..", no control characters
_REF_RE = re.compile(r"^(?!.*\.\.)(?!/)(?!.*//)[^\s~^:?*\[\\\x00-\x1f\x7f]{1,250}(?<![/.])$")

# How a page is read (crawler/analysis/pages/): chosen by `form:`, else by the file's extension,
# else by the content type the server gives.
PageForm = Literal["markdown", "mdx", "html", "rst", "csv", "tsv", "keyvalue", "text"]
PAGE_FORMS: tuple[str, ...] = get_args(PageForm)
ItemKind = Literal["list", "enumeration"]
ITEM_KINDS: tuple[str, ...] = get_args(ItemKind)


class TableSpec(Model):
    """One table to watch on a page: chosen by CSS selector or by the heading it follows (the
    page's first table with neither; a CSV file's one table). With ``items:`` the lists
    (``list``) or the labelled enumerations ("Label: a, b and c.", ``enumeration``) in that
    place are read as a table instead, one row per item (columns ``Item``, ``Label``,
    ``Link``, ``Parent``; keyed by ``Item``), and ``labels`` keeps the items under those
    labels (required for an enumeration).

    ``integrations`` turns each row into an integration record; ``status_map`` maps the page's
    status wording to the controlled vocabulary and ``platform_map`` (optional) the page's
    platform wording to the catalog's platform names. A cell neither map covers is an export
    error, never a silent default; a wording mapped to null (``n/a: null``) says that the row
    gives no record. ``no_records: WHY`` marks a table watched for its changes alone (``crawler
    check`` does not ask for a mapping)."""

    name: str
    selector: str | None = None
    heading: str | None = None
    key: tuple[str, ...] = ()
    items: ItemKind | None = None
    labels: tuple[str, ...] = ()
    integrations: TableIntegrations | None = None
    # a wording mapped to null gives no record (said, never a default)
    status_map: dict[str, SupportStatus | None] = Field(default_factory=dict)
    platform_map: dict[str, str | None] = Field(default_factory=dict)
    # rows that give one project, platform and version different statuses: "refuse" stops the
    # export naming them; "strongest" keeps one record with the first status in
    # SUPPORT_STATUSES order (upstream first) and every row as its evidence
    combine: Literal["refuse", "strongest"] = "refuse"
    no_records: str | None = Field(default=None, min_length=1)  # why it maps nothing

    @model_validator(mode="after")
    def _one_locator(self) -> TableSpec:
        if self.selector is not None and self.heading is not None:
            raise ValueError(f"table {self.name!r}: give 'selector' or 'heading', not both")
        if self.items is None:
            if not self.key:
                raise ValueError(
                    f"table {self.name!r} needs 'key': the column(s) that identify a row "
                    "(or 'items: list' / 'items: enumeration' to read lists as a table)"
                )
            if self.labels:
                raise ValueError(f"table {self.name!r}: 'labels' only applies with 'items'")
            return self
        if self.key and self.key != ("Item",):
            raise ValueError(f"table {self.name!r}: items are keyed by their text ('Item')")
        if self.items == "enumeration" and not self.labels:
            raise ValueError(
                f"table {self.name!r}: an enumeration is chosen by its label: add "
                "'labels: [Integrations in progress]' (the text before its colon)"
            )
        return self

    @field_validator("status_map", "platform_map", mode="before")
    @classmethod
    def _words_not_booleans(cls, value: Any) -> Any:
        """YAML reads an unquoted yes, no, on, off, true or false as a boolean: a cell that
        says "yes" (✅) must be quoted to be named."""
        if isinstance(value, dict):
            for key in value:
                if isinstance(key, bool):
                    raise ValueError(
                        f"a key read as the boolean {str(key).lower()}: YAML reads an unquoted "
                        "yes, no, on, off, true or false as one: quote the page's word "
                        "('yes': upstream)"
                    )
        return value

    @model_validator(mode="before")
    @classmethod
    def _item_key(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("items") is not None and not data.get("key"):
            data = {**data, "key": ("Item",)}
        return data

    @model_validator(mode="after")
    def _mapping(self) -> TableSpec:
        mapping = self.integrations
        if mapping is None:
            if self.status_map or self.platform_map or self.combine != "refuse":
                raise ValueError(
                    f"table {self.name!r}: status_map/platform_map/combine need an "
                    "'integrations' mapping"
                )
            return self
        if self.no_records is not None:
            raise ValueError(
                f"table {self.name!r} has an 'integrations' mapping and says no_records: "
                "keep one of them"
            )
        status_column = mapping.platform_columns or (mapping.status and mapping.status.column)
        if status_column and not self.status_map:
            where = "the platform columns' cells" if mapping.platform_columns else (
                f"column {status_column!r}"
            )
            raise ValueError(
                f"table {self.name!r}: status comes from {where}: add a status_map from its "
                f"wording to one of {list(SUPPORT_STATUSES)} (or null: no record)"
            )
        platform_column = mapping.platform_columns or (mapping.platform and mapping.platform.column)
        if self.platform_map and not platform_column:
            raise ValueError(f"table {self.name!r}: platform_map needs a platform column")
        casefold_unique(self.status_map, f"table {self.name!r}: status_map")
        casefold_unique(self.platform_map, f"table {self.name!r}: platform_map")
        return self


class TextSection(Model):
    """A watched text block given by the heading it stands under (``text: {heading: ...}``):
    everything up to the next heading of its level or above."""

    heading: str = Field(min_length=1)


class LocationEntry(Model):
    """A location given as a mapping (``{source: ..., path: ...}``), as it is validated."""

    source: str
    path: str
    options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Location:
    """Where something lives on a source: ``github`` ``owner/name``, ``pypi`` ``vllm``…

    A slotted record, not a pydantic model (every project of the catalog holds one for the
    whole audit): a model field of this type takes a Location as it is, or a mapping validated
    as a ``LocationEntry``."""

    ENTRY: ClassVar[type[LocationEntry]] = LocationEntry

    source: str  # a crawler.upstream registry name
    path: str
    options: tuple[tuple[str, str], ...] = ()  # per-project source options, e.g. gitlab_url

    def option(self, key: str) -> str | None:
        return dict(self.options).get(key)

    def __str__(self) -> str:
        return f"{self.source}:{self.path}"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_wrap_validator_function(
            cls._validated,
            handler.generate_schema(LocationEntry),
            serialization=core_schema.plain_serializer_function_ser_schema(asdict),
        )

    @classmethod
    def _validated(cls, value: Any, validate: core_schema.ValidatorFunctionWrapHandler) -> Any:
        if isinstance(value, Location):
            return value
        entry: LocationEntry = validate(value)
        return cls(entry.source, entry.path, entry.options)


def _take_locations(data: dict[str, Any]) -> list[Location]:
    """Pop every registry key (``repo``, ``gitee``, ``gitlab``, ``pypi``…) and its options;
    on an AtKey (a wrong one), every such key is popped all the same, so the rest of the
    entry is still checked and the error said with the others (``refused_location``)."""
    try:
        return _locations_in(data)
    except AtKey:
        from crawler.config.kinds import source_kinds

        for kind in source_kinds().values():
            for key in (kind.project_key, *kind.option_keys):
                data.pop(key, None)
        raise


def _locations_in(data: dict[str, Any]) -> list[Location]:
    from crawler.config.kinds import source_kinds

    found: list[Location] = []
    for kind in source_kinds().values():
        options = {k: data.pop(k) for k in kind.option_keys if k in data}
        if kind.project_key not in data:
            if options:
                raise AtKey(
                    next(iter(options)),
                    f"{', '.join(options)} only applies with '{kind.project_key}:' "
                    f"(a {kind.label} project)",
                )
            continue
        key = kind.project_key
        path = data.pop(key)
        if not isinstance(path, str) or not path.strip():
            raise AtKey(key, f"{key} must be a non-empty string")
        for option, value in options.items():
            if not isinstance(value, str):
                raise AtKey(option, f"{option} must be a string")
        try:
            path = kind.check_path(path.strip())
            checked = []
            for key, value in sorted(options.items()):
                checked.append((key, kind.check_option(key, str(value))))
        except ValueError as exc:
            raise AtKey(key, str(exc)) from None
        opts = tuple(checked)
        found.append(Location(source=kind.name, path=path, options=opts))
    return found


def _forge_keys() -> str:
    from crawler.config.kinds import source_kinds

    keys = [f"'{k.project_key}' ({k.label})" for k in source_kinds().values() if k.role == "forge"]
    return ", ".join(keys)


class PageSpec(Model):
    """A vendor documentation page (``url``), or a file (``path``) in a repository: the
    project's own, or one named like a project names its forge (``repo:``, ``gitee:``…)."""

    name: str
    url: str | None = None
    location: Location | None = None
    path: str | None = None
    ref: str | None = None  # a branch or tag to read ``path`` at (default: the default branch)
    form: PageForm | None = None  # default: by extension, then by content type
    tables: tuple[TableSpec, ...] = ()
    pins: dict[str, str] = Field(default_factory=dict)  # name -> regex (first group: value)
    # KEY=VALUE pages: every key ("all") or these keys, each a pin named by its key
    pin_keys: Literal["all"] | tuple[str, ...] = ()
    # a block compared as normalised text: its CSS selector, or {heading: ...}
    text: str | TextSection | None = None
    integration: PageIntegration | None = None
    line: int = 0  # the sources.yaml line of its ``url:`` (else where the page starts)
    # why a page is watched for its changes alone (pins, text, tables without a mapping):
    # ``crawler check`` then does not ask for mappings
    no_records: str | None = Field(default=None, min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _key_pins(cls, data: Any) -> Any:
        """``pins: all`` and ``pins: [KEY, ...]`` name keys of a KEY=VALUE file."""
        if isinstance(data, dict) and (
            data.get("pins") == "all" or isinstance(data.get("pins"), list)
        ):
            data = dict(data)
            if "pin_keys" in data:
                raise ValueError("give the keys under 'pins' only")
            data["pin_keys"] = data.pop("pins")
        return data

    @model_validator(mode="before")
    @classmethod
    def _locate(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("location") is None:
            data = dict(data)
            try:
                locations = _take_locations(data)
            except AtKey as exc:
                return {**data, "location": exc}  # said with the page's other errors
            if len(locations) > 1:
                raise ValueError("a page lives in one repository: name one of them")
            data["location"] = locations[0] if locations else None
        return data

    _refused = field_validator("location", mode="before")(refused_location)

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
            try:
                check_regex(pattern, f"pin {name!r}")
            except ValueError as exc:
                raise AtKey(name, str(exc)) from None
            if compile_pattern(pattern).groups < 1:
                raise AtKey(name, f"pin {name!r} needs a capture group around the pinned value")
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
        if not (self.tables or self.pins or self.pin_keys or self.text):
            raise ValueError(f"page {self.name!r} watches nothing: add 'tables', 'pins' or 'text'")
        if self.ref is not None and self.url is not None:
            raise ValueError(
                f"page {self.name!r}: 'ref' (a branch or tag) applies to a repository 'path', "
                "not to a 'url'"
            )
        if self.ref is not None and not _REF_RE.match(self.ref):
            raise ValueError(f"page {self.name!r}: ref {self.ref!r} is not a branch or tag name")
        if self.pin_keys and self.pins:
            raise ValueError(
                f"page {self.name!r}: 'pins' is either KEY=VALUE keys (all, or a list) or "
                "named patterns, not both"
            )
        return self

    @model_validator(mode="after")
    def _records_or_not(self) -> PageSpec:
        mapped = [t.name for t in self.tables if t.integrations is not None]
        if self.no_records is not None and (mapped or self.integration is not None):
            what = f"table {mapped[0]!r}" if mapped else "'integration'"
            raise ValueError(
                f"page {self.name!r} says no_records but maps {what}: keep one of them"
            )
        return self

    @property
    def pin_names(self) -> tuple[str, ...] | None:
        """The pins the page watches by name; None when it watches every key of its file."""
        if self.pin_keys == "all":
            return None
        return (*self.pins, *self.pin_keys)

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
        watched = self.pin_names
        for where, pin in named:
            if watched is not None and pin not in watched:
                raise ValueError(
                    f"page {self.name!r}: {where} names pin {pin!r}, which the page does not "
                    f"watch: add it under 'pins' or fix the name"
                )
        return self
