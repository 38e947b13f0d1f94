"""Fetch what the catalog needs of each Gitee project, as GitHub's REST path does: repository
metadata, then releases, tags or the default-branch head as the project's ``track`` needs (the
head also when no release or tag is newer than ``settings.dormant_after_days``), and the root
license file (read again only when its blob SHA moved). Every request is conditional;
projects go through a bounded pool; one project's failure is that project's error only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from crawler.config import Location, ProjectSpec
from crawler.model import ProjectSnapshot, Provenance, RepoInfo, Usage
from crawler.upstream.guard import carried
from crawler.upstream.json_api import JsonApi
from crawler.upstream.pages import private_addresses_allowed
from crawler.upstream.root_license import read_root_listing
from crawler.upstream.source import (
    RepoFile,
    RepositoryAnswers,
    SourceContext,
    SourceError,
    look_up_each,
)
from crawler.upstream.sources.gitee import DEFAULT_API_URL, KIND, GiteeSettings, parse
from crawler.versions import head_decides_dormancy, usable_releases, usable_tags

log = logging.getLogger(__name__)
MAX_PAGES = 10  # per list: enough for any limit the settings allow at 100 per page
Sources = list[tuple[str, Provenance]]


def _number(value: str | None) -> int | None:
    return int(value) if value is not None and value.strip().isdigit() else None


class GiteeSource:
    """The Gitee source, one project at a time (crawler.upstream.source.ProjectSource)."""

    kind = KIND

    def __init__(self, context: SourceContext) -> None:
        settings: GiteeSettings = context.settings
        api_url = context.env.get("GITEE_API_URL") or settings.api_url or DEFAULT_API_URL
        token = context.env.get("GITEE_TOKEN") or None
        self.settings = settings
        self.api = JsonApi(
            KIND.label, api_url, cache=context.cache, settings=settings,
            timeout=context.common.timeout,
            deadline=context.common.request_deadline,
            auth_headers={"Authorization": f"Bearer {token}"} if token else None,
            sleep=context.sleep,
            allow_private=private_addresses_allowed(context.common),
        )  # fmt: skip
        self.concurrency = settings.concurrency
        self._clock: Callable[[], str] = context.clock
        self._dormant_after = context.common.dormant_after_days

    # -- the ProjectSource protocol ------------------------------------------------------------

    def project_url(self, spec: ProjectSpec) -> str:
        return self.api.absolute(f"/repos/{self._path(spec)}")

    def redact(self, text: str) -> str:
        return self.api.redact(text)

    def read_file(self, location: Location, path: str, ref: str | None = None) -> RepoFile:
        url = f"/repos/{location.path}/contents/{quote(path.strip('/'))}"
        params = {"ref": ref} if ref else None
        response = self.api.get(url, params, allow=(404,), expect=object)
        if response.status == 404 or not isinstance(response.data, dict):
            at = f" at {ref}" if ref else ""
            raise SourceError(
                f"{path} not found in Gitee repository {location.path}{at}", response.url, 404
            )
        try:
            text = parse.file_text(response.data)
        except parse.ShapeError as exc:
            raise SourceError(str(exc), response.url) from None
        markdown = "text/markdown" if path.lower().endswith((".md", ".markdown")) else None
        return RepoFile(text, str(response.data.get("html_url") or response.url), markdown)

    def look_up_repositories(self, paths: Sequence[str]) -> RepositoryAnswers:
        """Repository links (crawler.upstream.source.RepositoryLookup): one conditional request
        each; Gitee answers a renamed repository's old path with a redirect it follows."""

        def ask(path: str) -> RepoInfo | None:
            response = self.api.get(f"/repos/{path}", allow=(404,))
            return None if response.status == 404 else parse.repo_info(response.data)[0]

        return look_up_each(paths, ask, self.api.redact, lambda: self.api.usage.requests)

    def usage(self) -> Usage:
        return {
            **self.api.usage.as_dict(),
            "rate_remaining": self.api.budget.remaining,
            "authenticated": self.api.authenticated,
        }

    def close(self) -> None:
        self.api.close()

    # -- one project ---------------------------------------------------------------------------

    @staticmethod
    def _path(spec: ProjectSpec) -> str:
        assert spec.forge is not None and spec.forge.source == KIND.name
        return spec.forge.path

    def fetch_project(self, spec: ProjectSpec, prior: ProjectSnapshot | None) -> ProjectSnapshot:
        now = self._clock()
        path = self._path(spec)
        response = self.api.get(f"/repos/{path}", allow=(404,))
        if response.status == 404:
            raise SourceError(
                f"repository {path} not found on Gitee (deleted, private, or renamed without a "
                "redirect): fix 'gitee' in sources.yaml",
                response.url,
                404,
            )
        repo, forge_license = parse.repo_info(response.data)
        sources: Sources = [("repo", Provenance(response.url, now))]
        base = f"/repos/{repo.full_name}"  # as Gitee now calls it, after a rename
        snapshot = ProjectSnapshot(
            project=spec.name, tracking=spec.tracking, repo=repo, forge_license=forge_license
        )
        settings = self.settings
        if spec.track in ("auto", "releases"):
            items, url = self._list(f"{base}/releases", {"direction": "desc"},
                                    settings.releases_per_repo)  # fmt: skip
            snapshot = replace(snapshot, releases=parse.releases(items, repo.url))
            sources.append(("releases", Provenance(url, now)))
        has_release = bool(usable_releases(spec.tracking, snapshot.releases or ()))
        if spec.track == "tags" or (spec.track == "auto" and not has_release):
            items, url = self._list(
                f"{base}/tags", {"sort": "updated", "direction": "desc"}, settings.tags_per_repo
            )
            snapshot = replace(snapshot, tags=parse.tags(items, repo.url))
            sources.append(("tags", Provenance(url, now)))
        has_tag = bool(usable_tags(spec.tracking, snapshot.tags or ()))
        wants_head = spec.track == "commits" or (
            spec.track == "auto" and not has_release and not has_tag
        )  # or only the head can say whether it is dormant
        if repo.default_branch and (
            wants_head or head_decides_dormancy(snapshot, now, self._dormant_after)
        ):
            response = self.api.get(f"{base}/commits", {"sha": repo.default_branch, "per_page": 1},
                                    expect=list, allow=(404, 409))  # fmt: skip
            if response.status == 200 and response.data:
                snapshot = replace(snapshot, head=parse.commit(response.data[0], repo.url))
            sources.append(("head", Provenance(response.url, now)))
        snapshot = self._license(snapshot, base, prior, sources, now)
        return replace(snapshot, provenance=tuple(sources))

    def _list(self, path: str, params: dict[str, str], limit: int) -> tuple[list[Any], str]:
        """Up to ``limit`` items, following pages by Gitee's ``total_page`` header (or, when a
        304 replay lacks it, until a short page). Returns the items and the first page's URL."""
        per_page = min(self.settings.page_size, limit)
        items: list[Any] = []
        first = ""
        for page in range(1, MAX_PAGES + 1):
            response = self.api.get(path, {**params, "page": page, "per_page": per_page},
                                    expect=list)  # fmt: skip
            first = first or response.url
            items.extend(response.data)
            total = _number(response.headers.get("total_page"))
            last = total is not None and page >= total
            if last or len(items) >= limit or len(response.data) < per_page:
                break
        return items[:limit], first

    def _license(
        self,
        snapshot: ProjectSnapshot,
        base: str,
        prior: ProjectSnapshot | None,
        sources: Sources,
        now: str,
    ) -> ProjectSnapshot:
        """The root license file (and the license-ish files beside it) from the root tree;
        its text is read again only when its blob SHA moved."""
        assert snapshot.repo is not None
        branch = snapshot.repo.default_branch
        if not branch:
            return snapshot  # an empty repository: no files
        response = self.api.get(f"{base}/git/trees/{quote(branch, safe='')}", allow=(404, 409))
        if response.status != 200:
            return snapshot
        blobs = parse.root_blobs(response.data)
        page = f"{snapshot.repo.url}/blob/{quote(branch, safe='')}"
        root = read_root_listing(blobs, page, prior)
        snapshot = replace(snapshot, license_inventory=root.inventory)
        sources.append(("license_inventory", Provenance(response.url, now)))
        chosen = root.chosen
        if chosen is None:
            return snapshot
        if root.unchanged is not None:
            sources.extend(carried(prior, "license"))
            return replace(snapshot, license_file=root.unchanged)
        response = self.api.get(f"{base}/contents/{quote(chosen)}", allow=(404,))
        sources.append(("license", Provenance(response.url, now)))
        if response.status != 200:
            return snapshot
        return replace(snapshot, license_file=parse.license_file(response.data))
