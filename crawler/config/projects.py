"""One catalog item: where its repository lives (a forge), the channels beside it, what its
catalog row follows, and the pages it watches; or, for an item with no source of its own, the
item it ships with (``part_of``) or why no source can follow it (``not_trackable``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, GetCoreSchemaHandler, field_validator, model_validator
from pydantic_core import core_schema

from crawler.config.common import AtKey, Model, check_regex, refused_location
from crawler.config.mappings import Layer
from crawler.config.pages import Location, PageSpec, _forge_keys, _take_locations
from crawler.model import ReleaseShown, Tracking, TrackMode

MAX_REASON = 300  # a not_trackable reason: one sentence, shown in every output


class ProjectEntry(Model):
    """One entry of ``projects:`` as it is validated (every rule below); the catalog keeps each
    as a ``ProjectSpec``, the same fields in slots."""

    name: str = Field(min_length=1)
    forge: Location | None = None  # where the repository lives: GitHub, Gitee, GitLab…
    channels: tuple[Location, ...] = ()  # where packages are published beside it: PyPI…
    homepage: str | None = None  # for a project no source can fetch yet
    track: TrackMode = "auto"
    tag_pattern: str | None = None
    prereleases: Literal["include", "exclude"] = "include"
    # which release the row shows; None: settings.release_shown (filled in by the Config)
    release_shown: ReleaseShown | None = None
    note: str | None = None
    pages: tuple[PageSpec, ...] = ()
    layer: Layer | None = None  # where the catalog page lists it (its section's layer)
    snapshot: bool = False  # a row of the page's "Release and license snapshot" table
    part_of: str | None = None  # the item it ships with: its record shows that item's facts
    not_trackable: str | None = None  # why no source can follow it (a closed SDK, …)
    line: int = 0  # where its entry starts in sources.yaml
    key_lines: tuple[tuple[str, int], ...] = ()  # the line of each of its keys, as written

    @model_validator(mode="before")
    @classmethod
    def _locate(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("forge") or data.get("channels"):
            return data
        from crawler.config.kinds import source_kinds

        data = dict(data)
        try:
            locations = _take_locations(data)
        except AtKey as exc:
            return {**data, "forge": exc}  # said with the project's other errors
        forges = [loc for loc in locations if source_kinds()[loc.source].role == "forge"]
        if len(forges) > 1:
            raise ValueError(
                "a project's repository lives on one forge: keep one of "
                + ", ".join(source_kinds()[loc.source].project_key for loc in forges)
            )
        data["forge"] = forges[0] if forges else None
        data["channels"] = tuple(loc for loc in locations if loc not in forges)
        return data

    _refused = field_validator("forge", mode="before")(refused_location)

    @field_validator("tag_pattern")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        return check_regex(value, "tag_pattern")

    @field_validator("part_of", "not_trackable")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = " ".join(value.split())
        if not text:
            raise ValueError("must not be empty: name the item it ships with, or say why")
        if len(text) > MAX_REASON:
            raise ValueError(f"is {len(text)} characters long: say it in at most {MAX_REASON}")
        return text

    @model_validator(mode="after")
    def _somewhere(self) -> ProjectEntry:
        named = _sources_named(self.forge, self.channels, self.pages)
        sources = named if self.part_of or self.not_trackable else []
        if self.part_of is not None:
            if self.part_of == self.name:
                raise ValueError("part_of names the item itself: name the item it ships with")
            if self.not_trackable is not None:
                raise ValueError(
                    "has both 'part_of' and 'not_trackable': an item that ships with another "
                    "shows that item's facts; keep one of them"
                )
            if sources:
                raise ValueError(
                    f"rides on {self.part_of!r} (part_of) but also names {', '.join(sources)}: "
                    "a riding item has no source of its own; remove them, or drop part_of "
                    "to track it on its own"
                )
            return self
        if self.not_trackable is not None:
            if sources:
                raise ValueError(
                    f"says not_trackable but names {', '.join(sources)}: an item a source can "
                    "follow is trackable; remove not_trackable or the source"
                )
            return self
        if self.forge is None and not self.channels and self.homepage is None:
            raise ValueError(
                f"needs where it lives: {_forge_keys()}, a release channel, 'part_of' (the "
                "item it ships with) or 'not_trackable' (why no source can follow it)"
            )
        for page in self.pages:
            if page.url is None and page.location is None and self.forge is None:
                raise ValueError(
                    f"page {page.name!r} names a 'path' but the project has no repository: "
                    "name the repository beside the path"
                )
        return self


def _sources_named(
    forge: Location | None, channels: tuple[Location, ...], pages: tuple[PageSpec, ...]
) -> list[str]:
    """The keys naming a source of its own, as written: 'repo', 'pypi', 'pages'…"""
    from crawler.config.kinds import source_kinds

    kinds = source_kinds()
    named = [
        f"'{kinds[loc.source].project_key if loc.source in kinds else loc.source}'"
        for loc in ((forge,) if forge else ()) + channels
    ]
    return named + (["'pages'"] if pages else [])


class ProjectSpec:
    """A catalog item as the catalog keeps it, once its entry is validated (``ProjectEntry``):
    the entry's fields in slots, immutable. A pydantic model holds a ``__dict__`` and the set
    of the fields given besides its values (about 1.3 KB an item); this, about 0.2 KB: the
    catalog is held for the whole audit, and a large one is most of the audit's memory.

    Made like the model: ``ProjectSpec(name=..., repo=...)`` and ``model_validate`` validate
    (a ValidationError as the model's); ``model_copy(update=...)`` does not, as pydantic's."""

    __slots__ = tuple(ProjectEntry.model_fields)
    FIELDS: ClassVar[tuple[str, ...]] = tuple(ProjectEntry.model_fields)

    name: str
    forge: Location | None
    channels: tuple[Location, ...]
    homepage: str | None
    track: TrackMode
    tag_pattern: str | None
    prereleases: Literal["include", "exclude"]
    release_shown: ReleaseShown | None
    note: str | None
    pages: tuple[PageSpec, ...]
    layer: Layer | None
    snapshot: bool
    part_of: str | None
    not_trackable: str | None
    line: int
    key_lines: tuple[tuple[str, int], ...]

    def __init__(self, **data: Any) -> None:
        self._fill(ProjectEntry(**data).__dict__)

    @classmethod
    def model_validate(cls, data: Any) -> ProjectSpec:
        if isinstance(data, ProjectSpec):
            return data
        return cls.of(ProjectEntry.model_validate(data))

    @classmethod
    def of(cls, entry: ProjectEntry) -> ProjectSpec:
        """The validated entry, kept."""
        return cls._made(entry.__dict__)

    @classmethod
    def _made(cls, values: Mapping[str, Any]) -> ProjectSpec:
        spec = cls.__new__(cls)
        spec._fill(values)
        return spec

    def _fill(self, values: Mapping[str, Any]) -> None:
        for name in self.FIELDS:
            object.__setattr__(self, name, values[name])

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> ProjectSpec:
        """A copy with ``update``'s fields changed, not validated (as pydantic's)."""
        return self._made({**self._fields(), **(update or {})})

    def _fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FIELDS}

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ProjectSpec is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ProjectSpec is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProjectSpec):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(tuple(self._fields().values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self._fields().items())
        return f"ProjectSpec({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return ProjectSpec._made, (self._fields(),)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """A field of this type (``Config.projects``) takes a ProjectSpec as it is, or an
        entry's mapping, validated."""
        return core_schema.no_info_plain_validator_function(cls.model_validate)

    def _sources_named(self) -> list[str]:
        """The keys naming a source of its own, as written: 'repo', 'pypi', 'pages'…"""
        return _sources_named(self.forge, self.channels, self.pages)

    def line_of(self, key: str) -> int:
        """The sources.yaml line of one of its keys (``homepage``, ``repo``…), else of its entry."""
        return dict(self.key_lines).get(key, self.line)

    def forge_line(self) -> int:
        """The line of the key naming its repository (``repo:``, ``gitee:``…)."""
        from crawler.config.kinds import source_kinds

        kind = source_kinds().get(self.forge.source) if self.forge else None
        return self.line_of(kind.project_key) if kind else self.line

    @property
    def tracking(self) -> Tracking:
        return Tracking(
            self.track, self.tag_pattern, self.prereleases,
            self.release_shown or "highest_version",
        )  # fmt: skip

    @property
    def fetched(self) -> bool:
        """A source follows it (its forge, a channel or a page): the audit reads it."""
        return self.forge is not None or bool(self.channels) or bool(self.pages)

    def locations(self) -> tuple[Location, ...]:
        return ((self.forge,) if self.forge else ()) + self.channels
