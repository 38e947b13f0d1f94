"""``sources.yaml`` → validated, immutable configuration.

Every problem of the file is reported, in one run, as ``file:line: project 'X': what is wrong
(did you mean …?)`` at the line of the key at fault (``problems``), and stops the run before
anything is fetched or stored. ``loader`` reads the file; ``projects``,
``pages`` and ``settings`` are the models of what it holds.
"""

from crawler.config.common import LINE_KEY, ConfigError
from crawler.config.items import Coverage, Standing, coverage, item_warnings, standing
from crawler.config.loader import MAX_CONFIG_BYTES, MAX_PROJECTS, Config, load_config, parse_config
from crawler.config.mappings import (
    LAYERS,
    SUPPORT_STATUSES,
    FieldSource,
    Layer,
    PageIntegration,
    SupportStatus,
    TableIntegrations,
)
from crawler.config.pages import PAGE_FORMS, Location, PageSpec, TableSpec
from crawler.config.projects import ProjectSpec
from crawler.config.settings import (
    DEFAULT_PAGE_SIZE_LIMIT,
    DEFAULT_PIN_TEXT_LIMIT,
    DEFAULT_REQUEST_DEADLINE,
    GitHubIssueSettings,
    NotifySettings,
    ScheduleSettings,
    Settings,
    check_timezone,
)

__all__ = [
    "DEFAULT_PAGE_SIZE_LIMIT",
    "DEFAULT_PIN_TEXT_LIMIT",
    "DEFAULT_REQUEST_DEADLINE",
    "LAYERS",
    "LINE_KEY",
    "MAX_CONFIG_BYTES",
    "MAX_PROJECTS",
    "PAGE_FORMS",
    "SUPPORT_STATUSES",
    "Config",
    "ConfigError",
    "Coverage",
    "FieldSource",
    "GitHubIssueSettings",
    "Layer",
    "Location",
    "NotifySettings",
    "PageIntegration",
    "PageSpec",
    "ProjectSpec",
    "ScheduleSettings",
    "Settings",
    "Standing",
    "SupportStatus",
    "TableIntegrations",
    "TableSpec",
    "check_timezone",
    "coverage",
    "item_warnings",
    "load_config",
    "parse_config",
    "standing",
]
