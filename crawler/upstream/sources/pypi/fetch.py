"""Fetch each project's PyPI package: one conditional GET of ``/pypi/<name>/json`` per project,
a few in flight at once (``pypi.concurrency``). PyPI sends an ETag on every answer, so an
unchanged package costs a 304 and its stored body is replayed.

The name is requested in its normalised form (PEP 503), which is the URL PyPI redirects every
other spelling to: one request instead of a 301 and a request, and a cache key that does not
depend on how sources.yaml spells the name.
"""

from __future__ import annotations

import logging

from packaging.utils import canonicalize_name

from crawler.config import Location, ProjectSpec
from crawler.model import ProjectSnapshot, Provenance, Usage
from crawler.upstream.json_api import JsonApi
from crawler.upstream.pages import private_addresses_allowed
from crawler.upstream.source import RepoFile, SourceContext, SourceError
from crawler.upstream.sources.pypi import API_URL_ENV, DEFAULT_API_URL, KIND, PyPISettings
from crawler.upstream.sources.pypi.parse import package_from_json

log = logging.getLogger(__name__)
FACET = "package:pypi"


def _package(spec: ProjectSpec) -> Location:
    return next(loc for loc in spec.channels if loc.source == KIND.name)


class PyPISource:
    """The PyPI source, one project at a time (crawler.upstream.source.ProjectSource)."""

    kind = KIND

    def __init__(self, context: SourceContext) -> None:
        settings: PyPISettings = context.settings
        self.settings = settings
        api_url = context.env.get(API_URL_ENV) or settings.api_url or DEFAULT_API_URL
        self.api = JsonApi(
            KIND.label,
            api_url,
            cache=context.cache,
            settings=settings,
            timeout=context.common.timeout,
            deadline=context.common.request_deadline,
            sleep=context.sleep,
            allow_private=private_addresses_allowed(context.common),
        )
        self.concurrency = settings.concurrency
        self._clock = context.clock

    def fetch_project(self, spec: ProjectSpec, prior: ProjectSnapshot | None) -> ProjectSnapshot:
        location = _package(spec)
        path = f"/pypi/{canonicalize_name(location.path)}/json"
        response = self.api.get(path, allow=(404,))
        if response.status == 404:
            raise SourceError(
                f"PyPI has no package {location.path!r} (or none of its releases has "
                "files yet): fix 'pypi' in sources.yaml",
                response.url,
                404,
            )
        package = package_from_json(
            response.data,
            fallback_url=self.api.absolute(f"/project/{canonicalize_name(location.path)}/"),
            limit=self.settings.versions_per_package,
        )
        return ProjectSnapshot(
            project=spec.name,
            tracking=spec.tracking,
            packages=(package,),
            provenance=((FACET, Provenance(response.url, self._clock())),),
        )

    def project_url(self, spec: ProjectSpec) -> str:
        return self.api.absolute(f"/pypi/{canonicalize_name(_package(spec).path)}/json")

    def redact(self, text: str) -> str:
        return self.api.redact(text)

    def read_file(self, location: Location, path: str, ref: str | None = None) -> RepoFile:
        raise SourceError(
            f"PyPI is a release channel, not a repository: it cannot serve {path!r}; name the "
            "project's forge beside the page's path"
        )

    def usage(self) -> Usage:
        return {**self.api.usage.as_dict(), "rate_remaining": self.api.budget.remaining}

    def close(self) -> None:
        self.api.close()
