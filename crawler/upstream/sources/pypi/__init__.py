"""PyPI as a release channel: what users ``pip install`` beside the forge's releases.

A project names its package with ``pypi: <name>``; the ``pypi:`` section of sources.yaml holds
the settings below. ``PYPI_API_URL``, else ``pypi.api_url``, else https://pypi.org (a mirror
serving Warehouse's JSON API works the same way). The JSON API needs no credentials, so this
source sends none.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import Field

from crawler.upstream.api_settings import ApiSettings
from crawler.upstream.source import SourceKind

if TYPE_CHECKING:
    from crawler.upstream.source import ProjectSource, SourceContext

DEFAULT_API_URL = "https://pypi.org"
API_URL_ENV = "PYPI_API_URL"
# A distribution name as the core metadata specification defines it (PEP 508 "Names").
NAME_RE = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)
MAX_NAME = 200


class PyPISettings(ApiSettings):
    # newest first by PEP 440 order; older versions are dropped from the snapshot
    versions_per_package: int = Field(default=30, ge=1, le=500)
    # a package with thousands of releases answers tens of MB (every file of every release)
    answer_size_limit: int = Field(default=64 * 2**20, ge=2**16)


def check_package(value: str) -> str:
    if len(value) > MAX_NAME or not NAME_RE.match(value):
        raise ValueError(
            f"pypi {value!r} is not a package name: letters, digits, '.', '_' and '-', "
            "starting and ending with a letter or digit (e.g. 'flashinfer-python')"
        )
    return value


def _open(context: SourceContext) -> ProjectSource:
    from crawler.upstream.sources.pypi.fetch import PyPISource

    return PyPISource(context)


KIND = SourceKind(
    name="pypi",
    label="PyPI",
    role="channel",
    project_key="pypi",
    check_path=check_package,
    open=_open,
    settings=PyPISettings,
)
