"""Fetch each project's PyPI package: one conditional GET of ``/pypi/<name>/json`` per project,
a few in flight at once (``pypi.concurrency``). PyPI sends an ETag on every answer, so an
unchanged package costs a 304 and its stored body is replayed.

The name is requested in its normalised form (PEP 503), which is the URL PyPI redirects every
other spelling to: one request instead of a 301 and a request, and a cache key that does not
depend on how sources.yaml spells the name.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from packaging.utils import canonicalize_name

from crawler.config import Location, ProjectSpec
from crawler.model import FetchError, ProjectResult, ProjectSnapshot, ProjectStatus, Provenance
from crawler.upstream.pages import private_addresses_allowed
from crawler.upstream.rest import JsonApi
from crawler.upstream.source import RepoFile, SourceContext, SourceDeferred, SourceError
from crawler.upstream.sources.pypi import API_URL_ENV, DEFAULT_API_URL, KIND, PyPISettings
from crawler.upstream.sources.pypi.parse import ShapeError, package_from_json

log = logging.getLogger(__name__)
FACET = "package:pypi"


def _package(spec: ProjectSpec) -> Location:
    return next(loc for loc in spec.channels if loc.source == KIND.name)


class PyPISource:
    """The PyPI source: what the audit calls (see crawler.upstream.source.Source)."""

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
        self._clock = context.clock
        self._should_stop = context.should_stop

    def fetch(
        self, projects: Sequence[ProjectSpec], prior: Mapping[str, ProjectSnapshot]
    ) -> dict[str, ProjectResult]:
        unique = list({spec.name: spec for spec in projects}.values())
        with ThreadPoolExecutor(
            max_workers=self.settings.concurrency, thread_name_prefix="pypi"
        ) as pool:
            futures = {spec.name: pool.submit(self._guarded, spec) for spec in unique}
        return {name: future.result() for name, future in futures.items()}

    def _guarded(self, spec: ProjectSpec) -> ProjectResult:
        try:
            return self._fetch_one(spec)
        except Exception as exc:  # one package's surprise stays that project's error
            log.warning("PyPI package of %s failed", spec.name, exc_info=True)
            why = f"internal error: {self.api.redact(str(exc) or type(exc).__name__)[:300]}"
            return self._error(spec, "", why)

    def _fetch_one(self, spec: ProjectSpec) -> ProjectResult:
        if self._should_stop():
            return self._deferred(spec, "stop requested")
        location = _package(spec)
        path = f"/pypi/{canonicalize_name(location.path)}/json"
        url = self.api.absolute(path)
        try:
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
        except SourceDeferred as exc:
            return self._deferred(spec, str(exc))
        except SourceError as exc:
            return self._error(spec, exc.url or url, str(exc))
        except ShapeError as exc:
            return self._error(spec, url, f"unexpected answer from PyPI: {exc}")
        snapshot = ProjectSnapshot(
            project=spec.name,
            tracking=spec.tracking,
            packages=(package,),
            provenance=((FACET, Provenance(response.url, self._clock())),),
        )
        return ProjectResult(spec.name, ProjectStatus.OK, snapshot=snapshot)

    @staticmethod
    def _deferred(spec: ProjectSpec, why: str) -> ProjectResult:
        # the audit says "pypi not checked: <why>" beside the project's forge facts
        return ProjectResult(spec.name, ProjectStatus.DEFERRED, note=why)

    @staticmethod
    def _error(spec: ProjectSpec, url: str, message: str) -> ProjectResult:
        error = FetchError(spec.name, KIND.name, url, message)
        return ProjectResult(spec.name, ProjectStatus.ERROR, errors=(error,))

    def read_file(self, location: Location, path: str) -> RepoFile:
        raise SourceError(
            f"PyPI is a release channel, not a repository: it cannot serve {path!r}; name the "
            "project's forge beside the page's path"
        )

    def usage(self) -> dict[str, Any]:
        return {**self.api.usage.as_dict(), "rate_remaining": self.api.budget.remaining}

    def close(self) -> None:
        self.api.close()
