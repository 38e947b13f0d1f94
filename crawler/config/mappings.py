"""The catalog's vocabularies (support statuses, software layers) and how a page's facts become
its integration records: a table's ``integrations`` mapping, a page's own ``integration``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import Field, model_validator

from crawler.config.common import Model

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
class FieldSource(Model):
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


class TableIntegrations(Model):
    """How each row of a support table becomes an integration record of the catalog; or, for a
    table whose platforms are its columns (``platform_columns``: an operation × backend grid),
    one record per row and named column: the column's header is the platform, the row's cell
    under it the status."""

    project: FieldSource | None = None  # default: the project that watches the table
    platform: FieldSource | None = None
    status: FieldSource | None = None
    platform_columns: tuple[str, ...] = ()
    version: FieldSource | None = None
    layer: Layer
    pins: tuple[str, ...] = ()  # pins of the same page that are version facts of each record

    @model_validator(mode="after")
    def _across(self) -> TableIntegrations:
        if self.platform_columns:
            if self.platform is not None or self.status is not None:
                raise ValueError(
                    "with platform_columns, each column's header is the platform and the "
                    "row's cell under it the status: leave out 'platform' and 'status'"
                )
        elif self.platform is None or self.status is None:
            raise ValueError(
                "integrations need 'platform' and 'status' (or 'platform_columns' for a table "
                "whose columns are the platforms)"
            )
        return self

    @model_validator(mode="after")
    def _sources(self) -> TableIntegrations:
        for name in ("project", "platform", "status"):
            source = getattr(self, name)
            if source is not None and source.pin is not None:
                raise ValueError(f"integrations.{name} cannot come from a pin")
        if (
            self.status is not None
            and self.status.value is not None
            and self.status.value not in SUPPORT_STATUSES
        ):
            raise ValueError(
                f"integrations.status {self.status.value!r} is not one of {list(SUPPORT_STATUSES)}"
            )
        return self


def casefold_unique(mapping: Mapping[str, object], what: str) -> None:
    seen: dict[str, str] = {}
    for key in mapping:
        folded = " ".join(key.split()).casefold()
        if folded in seen:
            raise ValueError(f"{what} has {seen[folded]!r} and {key!r}, which match the same cells")
        seen[folded] = key


class PageIntegration(Model):
    """One integration record described by a page's pins alone (a README with no table)."""

    project: str | None = None  # the integrated project's name; default: the watching project
    platform: str = Field(min_length=1)
    status: SupportStatus
    layer: Layer
    version: str | None = None  # the pin whose value is the version range
    pins: tuple[str, ...] = ()  # further pins that are version facts of the record
