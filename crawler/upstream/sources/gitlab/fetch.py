"""Fetch what the catalog needs of each GitLab project, one JsonApi per instance.

Per project: the project (``?license=true``: id, current path, default branch, archived, web
URL, GitLab's license verdict and the license file's page), then what its ``track`` needs
(releases; tags only without a usable release; the default-branch head without either, or
when no release or tag is newer than ``settings.dormant_after_days``: only it can say dormant),
then the license file's text. Everything after the first request addresses the project by
its numeric id, so a renamed or transferred project keeps its validators and comes back with
its new path and the same id. Every request is conditional (GitLab sends ETags); projects are
fetched through a bounded pool; one project's failure is that project's error only.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from crawler.config import Location, ProjectSpec
from crawler.model import ForgeLicense, ProjectSnapshot, Provenance, RepoInfo, Usage
from crawler.upstream.json_api import ApiResponse, JsonApi
from crawler.upstream.pages import private_addresses_allowed
from crawler.upstream.root_license import choose_root_license, forge_pick_in_doubt
from crawler.upstream.source import (
    RepoFile,
    RepositoryAnswers,
    SourceContext,
    SourceError,
    look_up_each,
)
from crawler.upstream.sources.gitlab import (
    DEFAULT_URL,
    KIND,
    URL_OPTION,
    GitLabSettings,
    instance_url,
    parse,
)
from crawler.versions import head_decides_dormancy, usable_releases, usable_tags

log = logging.getLogger(__name__)
TOKEN_HEADER = "PRIVATE-TOKEN"  # how GitLab takes a personal access token
MAX_PAGES = 50  # per list: a bound even if an instance kept answering "next"


@dataclass(frozen=True)
class _Known:
    """What read_file needs of a project fetched earlier in this audit."""

    id: int
    url: str
    default_branch: str


def _host(instance: str) -> str:
    return urlsplit(instance).netloc


class GitLabSource:
    """The GitLab source, one project at a time (crawler.upstream.source.ProjectSource)."""

    kind = KIND

    def __init__(self, context: SourceContext) -> None:
        self._context = context
        self._settings: GitLabSettings = context.settings
        self._default = instance_url(
            context.env.get("GITLAB_URL") or self._settings.url or DEFAULT_URL
        )
        self._apis: dict[str, JsonApi] = {}
        self._known: dict[tuple[str, str], _Known] = {}
        self._lock = threading.Lock()
        self.concurrency = self._settings.concurrency

    # -- instances and their clients ------------------------------------------------------------

    def _instance(self, location: Location) -> str:
        given = location.option(URL_OPTION)
        if given is None:
            return self._default
        try:
            return instance_url(given)
        except ValueError as exc:
            raise SourceError(f"{URL_OPTION} {exc}: fix it in sources.yaml") from None

    def _token(self, instance: str) -> str | None:
        env = self._context.env
        named = self._settings.tokens.get(instance)
        if named is not None:
            return env.get(named) or None
        return (env.get("GITLAB_TOKEN") or None) if instance == self._default else None

    def _api(self, instance: str) -> JsonApi:
        with self._lock:
            api = self._apis.get(instance)
            if api is None:
                token = self._token(instance)
                name = "GitLab" if instance == DEFAULT_URL else f"GitLab ({_host(instance)})"
                api = JsonApi(
                    name,
                    f"{instance}/api/v4",
                    cache=self._context.cache,
                    settings=self._settings,
                    timeout=self._context.common.timeout,
                    deadline=self._context.common.request_deadline,
                    auth_headers={TOKEN_HEADER: token} if token else None,
                    sleep=self._context.sleep,
                    allow_private=private_addresses_allowed(self._context.common),
                )
                self._apis[instance] = api
            return api

    # -- the ProjectSource protocol -------------------------------------------------------------

    def fetch_project(self, spec: ProjectSpec, prior: ProjectSnapshot | None) -> ProjectSnapshot:
        assert spec.forge is not None
        return self._fetch_project(spec, spec.forge)

    def project_url(self, spec: ProjectSpec) -> str:
        return ""

    def redact(self, text: str) -> str:
        with self._lock:
            apis = list(self._apis.values())
        for api in apis:
            text = api.redact(text)
        return text

    def read_file(self, location: Location, path: str, ref: str | None = None) -> RepoFile:
        instance = self._instance(location)
        api = self._api(instance)
        known = self._known.get((instance, location.path.lower()))
        if known is None:
            repo, _, _ = parse.project(self._project(api, location.path).data)
            known = _Known(repo.id, repo.url, repo.default_branch)
        if not known.default_branch and ref is None:
            raise SourceError(f"{location.path} has no default branch (empty repository)")
        at = ref or known.default_branch
        response = api.get(
            f"/projects/{known.id}/repository/files/{quote(path, safe='')}",
            {"ref": at},
            allow=(404,),
        )
        if response.status == 404:
            raise SourceError(f"{path} not found in {location.path} on {at}", response.url, 404)
        _, _, text = parse.file_text(response.data)
        branch = quote(at, safe="/")
        url = f"{known.url}/-/blob/{branch}/{quote(path, safe='/')}"
        markdown = "text/markdown" if path.lower().endswith((".md", ".markdown")) else None
        return RepoFile(text, url, markdown)

    def look_up_repositories(self, paths: Sequence[str]) -> RepositoryAnswers:
        """Repository links on the default instance (crawler.upstream.source.RepositoryLookup):
        one conditional request each; GitLab answers a moved project's old path with a
        redirect it follows."""
        api = self._api(self._default)

        def ask(path: str) -> RepoInfo | None:
            response = api.get(f"/projects/{quote(path, safe='')}", allow=(404,))
            return None if response.status == 404 else parse.project(response.data)[0]

        return look_up_each(paths, ask, api.redact, lambda: api.usage.requests)

    def usage(self) -> Usage:
        with self._lock:
            apis = list(self._apis.values())
        remaining = [a.budget.remaining for a in apis if a.budget.remaining is not None]
        return {
            "requests": sum(a.usage.requests for a in apis),
            "not_modified": sum(a.usage.not_modified for a in apis),
            "retries": sum(a.usage.retries for a in apis),
            "rate_remaining": min(remaining) if remaining else None,
            "authenticated": any(a.authenticated for a in apis),
            "instances": len(apis),
        }

    def close(self) -> None:
        with self._lock:
            apis, self._apis = list(self._apis.values()), {}
        for api in apis:
            api.close()

    # -- one project ----------------------------------------------------------------------------

    def _project(self, api: JsonApi, path: str) -> ApiResponse:
        response = api.get(f"/projects/{quote(path, safe='')}", {"license": "true"}, allow=(404,))
        if response.status == 404:
            raise SourceError(
                f"project {path} not found on {_host(api.base_url)} (deleted, private, or "
                "moved without a redirect): fix 'gitlab' in sources.yaml",
                response.url,
                404,
            )
        data = response.data
        moved = str(data.get("path_with_namespace", "")).lower() != path.lower()
        if moved and "license" not in data and isinstance(data.get("id"), int):
            # GitLab's redirect for a moved project (to /projects/<id>) drops the query string
            response = api.get(f"/projects/{data['id']}", {"license": "true"})
        return response

    def _fetch_project(self, spec: ProjectSpec, location: Location) -> ProjectSnapshot:
        instance = self._instance(location)
        api = self._api(instance)
        now = self._context.clock()
        response = self._project(api, location.path)
        repo, forge_license, license_url = parse.project(response.data)
        with self._lock:
            self._known[(instance, location.path.lower())] = _Known(
                repo.id, repo.url, repo.default_branch
            )
        provenance = [("repo", Provenance(response.url, now))]
        snapshot = ProjectSnapshot(
            project=spec.name, tracking=spec.tracking, repo=repo, forge_license=forge_license
        )
        base = f"/projects/{repo.id}"
        settings = self._settings
        if spec.track in ("auto", "releases"):
            items, url = self._list(
                api, f"{base}/releases", {"order_by": "released_at", "sort": "desc"},
                settings.releases_per_repo,
            )  # fmt: skip
            snapshot = replace(snapshot, releases=parse.releases(items, repo.url))
            provenance.append(("releases", Provenance(url, now)))
        has_release = bool(usable_releases(spec.tracking, snapshot.releases or ()))
        if spec.track == "tags" or (spec.track == "auto" and not has_release):
            items, url = self._list(
                api, f"{base}/repository/tags", {"order_by": "updated", "sort": "desc"},
                settings.tags_per_repo,
            )  # fmt: skip
            snapshot = replace(snapshot, tags=parse.tags(items, repo.url))
            provenance.append(("tags", Provenance(url, now)))
        has_tag = bool(usable_tags(spec.tracking, snapshot.tags or ()))
        wants_head = spec.track == "commits" or (
            spec.track == "auto" and not has_release and not has_tag
        )
        dormant_after = self._context.common.dormant_after_days
        if wants_head or head_decides_dormancy(snapshot, now, dormant_after):
            snapshot = self._head(api, snapshot, provenance, now)
        if forge_license.key is not None and repo.default_branch:
            snapshot = self._license_file(api, snapshot, license_url, provenance, now)
        return replace(snapshot, provenance=tuple(provenance))

    def _head(
        self,
        api: JsonApi,
        snapshot: ProjectSnapshot,
        provenance: list[tuple[str, Provenance]],
        now: str,
    ) -> ProjectSnapshot:
        """The default branch's head commit (its date too): one request, conditional."""
        repo = snapshot.repo
        assert repo is not None
        if not repo.default_branch:
            return snapshot  # an empty project: no commit
        branch = quote(repo.default_branch, safe="")
        head = api.get(f"/projects/{repo.id}/repository/branches/{branch}", allow=(404,))
        if head.status == 200:
            snapshot = replace(snapshot, head=parse.branch_head(head.data, repo.url))
        provenance.append(("head", Provenance(head.url, now)))
        return snapshot

    def _license_file(
        self,
        api: JsonApi,
        snapshot: ProjectSnapshot,
        license_url: str | None,
        provenance: list[tuple[str, Provenance]],
        now: str,
    ) -> ProjectSnapshot:
        """The root license file GitLab detected (its ``license_url`` says which): its blob id
        and text. Without a readable ``license_url`` there is no text; GitLab's verdict stands.
        When GitLab's verdict says the GNU layout (``forge_pick_in_doubt``), the root's listing
        decides which file is the root license, by the rule every source shares."""
        repo = snapshot.repo
        assert repo is not None
        base = f"/projects/{repo.id}"
        path = parse.license_path(license_url, repo)
        if path is None or license_url is None:
            return snapshot
        if forge_pick_in_doubt(snapshot.forge_license or ForgeLicense(None, None, None), path):
            root = self._root_files(api, snapshot)
            chosen = choose_root_license(root) if root else None
            if chosen is not None and chosen[0] != path:
                path = chosen[0]
                license_url = parse.file_page(repo, path)
        response = api.get(
            f"{base}/repository/files/{quote(path, safe='')}",
            {"ref": repo.default_branch},
            allow=(404,),
        )
        provenance.append(("license", Provenance(response.url, now)))
        if response.status != 200:
            return snapshot
        license_file = parse.license_file(response.data, license_url)
        return replace(snapshot, license_file=license_file)

    def _root_files(self, api: JsonApi, snapshot: ProjectSnapshot) -> dict[str, str] | None:
        """The root's files (path → blob id) at the default branch; None when unanswered."""
        repo = snapshot.repo
        assert repo is not None and repo.default_branch
        response = api.get(
            f"/projects/{repo.id}/repository/tree",
            {"ref": repo.default_branch, "per_page": 100},
            expect=list,
            allow=(404,),
        )
        return parse.root_files(response.data) if response.status == 200 else None

    # -- lists ----------------------------------------------------------------------------------

    def _list(
        self, api: JsonApi, path: str, params: Mapping[str, Any], limit: int
    ) -> tuple[list[Any], str]:
        """Up to ``limit`` items of a paginated list, newest first as asked, following the
        answer's ``Link: rel="next"`` (else ``x-next-page``). Returns the items and the first
        page's URL (the provenance)."""
        per_page = min(self._settings.page_size, limit)
        url = api.absolute(path, {**params, "per_page": per_page})
        first = url
        items: list[Any] = []
        seen = {url}
        for _ in range(MAX_PAGES):
            response = api.get(url, expect=list)
            items.extend(response.data)
            if len(items) >= limit or not response.data:
                break
            following = _next_page(api, response)
            if following is None or following in seen:
                break
            seen.add(following)
            url = following
        return items[:limit], first


def _next_page(api: JsonApi, response: ApiResponse) -> str | None:
    """The next page's URL, rebuilt on this API's own base with sorted parameters: byte-stable
    for the cache, and never pointing at another host (an instance whose external URL is
    misconfigured sends links to that URL; credentials must not follow them)."""
    base_path = urlsplit(api.base_url).path
    link = response.links.get("next")
    if link:
        parts = urlsplit(link)
        if parts.path.startswith(base_path + "/"):
            kept = {k: v for k, v in parse_qsl(parts.query) if k != "private_token"}
            return api.absolute(parts.path[len(base_path) :], kept)
    page = (response.headers.get("x-next-page") or "").strip()
    if page.isdigit():
        current = urlsplit(response.url)
        params = dict(parse_qsl(current.query))
        params["page"] = page
        return api.absolute(current.path[len(base_path) :], params)
    return None
