"""One tracked project: where its repository lives (a forge), the channels beside it, what its
catalog row follows, and the pages it watches."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from crawler.config.common import Model, check_regex
from crawler.config.pages import Location, PageSpec, _forge_keys, _take_locations
from crawler.model import Tracking, TrackMode


class ProjectSpec(Model):
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
        from crawler.config.kinds import source_kinds

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
        return check_regex(value, "tag_pattern")

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
