"""What ``sources.yaml`` knows of each source kind: how a project names it (``repo:``,
``gitee:``, ``pypi:``…), how that name is checked, and its settings section.

The kinds are the ``KIND`` of each module in ``crawler/upstream/sources/``, found by name at run
time (as nvchecker finds its sources), so the configuration imports no source: it sits below
them. How a source is opened is ``crawler.upstream.source.SourceKind``, which extends this.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

SOURCES_PACKAGE = "crawler.upstream.sources"  # one module (or package) per source, found by name

Role = Literal["forge", "channel"]


class NoSettings(BaseModel):
    """A source without a settings section of its own."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class KindInfo:
    name: str  # registry key and the name of its settings section in sources.yaml
    label: str  # how people call it in prose: "GitHub", "Gitee", "PyPI"
    role: Role  # a forge holds the repository; a channel publishes packages beside it
    project_key: str  # the key a project entry uses to name it: "repo", "gitee", "pypi"
    check_path: Callable[[str], str]  # validates the name given; ValueError says what is wrong
    option_keys: tuple[str, ...] = ()  # further per-project keys, e.g. "gitlab_url"
    # checks one option's value (key, value) → the value to keep; ValueError says what is wrong
    check_option: Callable[[str, str], str] = lambda _key, value: value
    settings: type[BaseModel] = NoSettings


@cache
def source_kinds() -> dict[str, KindInfo]:
    """Every source kind in crawler/upstream/sources/, by name."""
    package = importlib.import_module(SOURCES_PACKAGE)
    kinds: dict[str, KindInfo] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{SOURCES_PACKAGE}.{info.name}")
        kind = getattr(module, "KIND", None)
        if isinstance(kind, KindInfo):
            kinds[kind.name] = kind
    return dict(sorted(kinds.items()))
