"""Fetch what the catalog needs of one Gitea or Forgejo project: the repository, then its
releases, tags or default-branch head as its ``track`` needs (the head also when no release or
tag is newer than ``settings.dormant_after_days``), and the root license file (read
again only when its blob SHA moved). Every request is conditional (Gitea sends ETags). The
audit runs each project in its guard: this module only raises.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from crawler.upstream.sources.gitea import (
    API_URL_ENV,
    DEFAULT_API_URL,
    KIND,
    TOKEN_ENV,
    GiteaSettings,
    parse,
)
from crawler.versions import head_decides_dormancy, usable_releases, usable_tags

MAX_PAGES = 10  # per list: a bound even if an instance kept answering full pages
Facts = list[tuple[str, Provenance]]


class GiteaSource:
    """The Gitea source, one project at a time (crawler.upstream.source.ProjectSource)."""

    kind = KIND

    def __init__(self, context: SourceContext) -> None:
        settings: GiteaSettings = context.settings
        api_url = context.env.get(API_URL_ENV) or settings.api_url or DEFAULT_API_URL
        token = context.env.get(TOKEN_ENV) or None
        self.settings = settings
        self.concurrency = settings.concurrency
        self.api = JsonApi(
            KIND.label, api_url, cache=context.cache, settings=settings,
            timeout=context.common.timeout, deadline=context.common.request_deadline,
            auth_headers={"Authorization": f"token {token}"} if token else None,
            sleep=context.sleep, allow_private=private_addresses_allowed(context.common),
        )  # fmt: skip
        self._clock = context.clock
        self._dormant_after = context.common.dormant_after_days

    # -- the ProjectSource protocol ------------------------------------------------------------

    def fetch_project(self, spec: ProjectSpec, prior: ProjectSnapshot | None) -> ProjectSnapshot:
        assert spec.forge is not None and spec.forge.source == KIND.name
        now, path = self._clock(), spec.forge.path
        response = self.api.get(f"/repos/{path}", allow=(404,))
        if response.status == 404:
            raise SourceError(
                f"repository {path} not found on {self.api.name} (deleted, private, or renamed "
                "without a redirect): fix 'gitea' in sources.yaml",
                response.url,
                404,
            )
        repo, forge_license = parse.repo_info(response.data)
        facts: Facts = [("repo", Provenance(response.url, now))]
        base = f"/repos/{repo.full_name}"  # as the forge now calls it, after a rename
        snapshot = ProjectSnapshot(
            project=spec.name, tracking=spec.tracking, repo=repo, forge_license=forge_license
        )
        if spec.track in ("auto", "releases"):
            items, url = self._list(f"{base}/releases", self.settings.releases_per_repo)
            snapshot = replace(snapshot, releases=parse.releases(items, repo.url))
            facts.append(("releases", Provenance(url, now)))
        has_release = bool(usable_releases(spec.tracking, snapshot.releases or ()))
        if spec.track == "tags" or (spec.track == "auto" and not has_release):
            items, url = self._list(f"{base}/tags", self.settings.tags_per_repo)
            snapshot = replace(snapshot, tags=parse.tags(items, repo.url))
            facts.append(("tags", Provenance(url, now)))
        has_tag = bool(usable_tags(spec.tracking, snapshot.tags or ()))
        wants_head = spec.track == "commits" or (
            spec.track == "auto" and not has_release and not has_tag
        )  # or only the head can say whether it is dormant
        if repo.default_branch and (
            wants_head or head_decides_dormancy(snapshot, now, self._dormant_after)
        ):
            params = {"sha": repo.default_branch, "limit": 1, "stat": "false",
                      "verification": "false", "files": "false"}  # fmt: skip
            response = self.api.get(f"{base}/commits", params, expect=list, allow=(404, 409))
            if response.status == 200 and response.data:
                snapshot = replace(snapshot, head=parse.commit(response.data[0], repo.url))
            facts.append(("head", Provenance(response.url, now)))
        snapshot = self._license(snapshot, base, prior, facts, now)
        return replace(snapshot, provenance=tuple(facts))

    def project_url(self, spec: ProjectSpec) -> str:
        return self.api.absolute(f"/repos/{spec.forge.path}" if spec.forge else "/")

    def redact(self, text: str) -> str:
        return self.api.redact(text)

    def read_file(self, location: Location, path: str, ref: str | None = None) -> RepoFile:
        url = f"/repos/{location.path}/contents/{quote(path.strip('/'))}"
        params = {"ref": ref} if ref else None
        response = self.api.get(url, params, allow=(404,), expect=object)
        if response.status == 404 or not isinstance(response.data, dict):
            at = f" at {ref}" if ref else ""
            raise SourceError(f"{path} not found in {location.path}{at}", response.url, 404)
        text = parse.file_text(response.data)
        markdown = "text/markdown" if path.lower().endswith((".md", ".markdown")) else None
        return RepoFile(text, str(response.data.get("html_url") or response.url), markdown)

    def look_up_repositories(self, paths: Sequence[str]) -> RepositoryAnswers:
        """Repository links (crawler.upstream.source.RepositoryLookup): one conditional request
        each; Gitea answers a renamed repository's old path with a redirect it follows."""

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

    def _list(self, path: str, limit: int) -> tuple[list[Any], str]:
        """Up to ``limit`` items, newest first, page by page until a short page or
        ``X-Total-Count``. Returns the items and the first page's URL."""
        per_page = min(self.settings.page_size, limit)
        items: list[Any] = []
        first = ""
        for page in range(1, MAX_PAGES + 1):
            response = self.api.get(path, {"page": page, "limit": per_page}, expect=list)
            first = first or response.url
            items.extend(response.data)
            total = response.headers.get("x-total-count", "")
            done = total.isdigit() and len(items) >= int(total)
            if done or len(items) >= limit or len(response.data) < per_page:
                break
        return items[:limit], first

    def _license(
        self, snapshot: ProjectSnapshot, base: str, prior: ProjectSnapshot | None, facts: Facts,
        now: str,
    ) -> ProjectSnapshot:  # fmt: skip
        """The root license file (and the license-ish files beside it) from the root listing;
        its text is read again only when its blob SHA moved."""
        assert snapshot.repo is not None
        branch = snapshot.repo.default_branch
        if not branch:
            return snapshot  # an empty repository: no files
        ref = {"ref": branch}
        response = self.api.get(f"{base}/contents", ref, expect=list, allow=(404,))
        if response.status != 200:
            return snapshot
        files = parse.root_files(response.data)
        page = f"{snapshot.repo.url}/src/branch/{quote(branch, safe='/')}"
        root = read_root_listing(files, page, prior)
        snapshot = replace(snapshot, license_inventory=root.inventory)
        facts.append(("license_inventory", Provenance(response.url, now)))
        chosen = root.chosen
        if chosen is None:
            return snapshot
        if root.unchanged is not None:
            facts.extend(carried(prior, "license"))
            return replace(snapshot, license_file=root.unchanged)
        response = self.api.get(f"{base}/contents/{quote(chosen)}", ref, allow=(404,))
        facts.append(("license", Provenance(response.url, now)))
        if response.status != 200:
            return snapshot
        return replace(snapshot, license_file=parse.license_file(response.data))
