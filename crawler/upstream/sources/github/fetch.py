"""Fetch what the catalog needs of each GitHub project, spending as little budget as possible.

With a token: one GraphQL query per batch of repositories (releases, tags, head, license
verdict, license blob id), then REST only for what changed (license text when its blob id
moved, the tree when the head moved). Without a token: REST with conditional requests.
A failure becomes an error for that project only; a spent budget defers the rest.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from crawler.config import Location, ProjectSpec
from crawler.model import FetchError, ProjectResult, ProjectSnapshot, ProjectStatus, Provenance
from crawler.upstream.source import RepoFile, SourceContext
from crawler.upstream.sources.github import DEFAULT_API_URL, KIND, GitHubSettings, parse
from crawler.upstream.sources.github.api import BudgetExhausted, GitHubApi, GitHubError
from crawler.versions import usable_releases, usable_tags

log = logging.getLogger(__name__)
Clock = Callable[[], str]
REST_REQUESTS_PER_PROJECT = 4  # repo, releases or tags, license, maybe head: for budgeting
UNREACHABLE_AFTER = 3  # projects in a row without any HTTP answer: stop trying GitHub


def _repo(spec: ProjectSpec) -> str:
    assert spec.forge is not None and spec.forge.source == KIND.name
    return spec.forge.path


def _q(value: str) -> str:
    """A GraphQL string literal (JSON string syntax is valid GraphQL string syntax)."""
    return json.dumps(value)


def graphql_batch_query(
    specs: Sequence[ProjectSpec], license_paths: Sequence[str], settings: GitHubSettings
) -> str:
    """One query, one alias per repository. Validated against GitHub's schema in the tests."""
    parts = ["query CrawlerBatch {", "  rateLimit { cost remaining limit resetAt used }"]
    for index, (spec, path) in enumerate(zip(specs, license_paths, strict=True)):
        owner, name = _repo(spec).split("/", 1)
        parts.append(
            f"  r{index}: repository(owner: {_q(owner)}, name: {_q(name)}) {{ ...RepoFacts "
            f"licenseBlob: object(expression: {_q('HEAD:' + path)}) {{ ... on Blob {{ oid }} }} }}"
        )
    parts.append("}")
    parts.append(
        "fragment RepoFacts on Repository {\n"
        "  databaseId nameWithOwner url isArchived isEmpty\n"
        "  licenseInfo { key spdxId name }\n"
        "  defaultBranchRef { name target { ... on Commit { oid committedDate url } } }\n"
        f"  releases(first: {settings.releases_per_repo}, "
        "orderBy: {field: CREATED_AT, direction: DESC}) {\n"
        "    totalCount\n"
        "    nodes { tagName name publishedAt createdAt isPrerelease isDraft isLatest url }\n"
        "  }\n"
        f'  refs(refPrefix: "refs/tags/", first: {settings.tags_per_repo}, '
        "orderBy: {field: TAG_COMMIT_DATE, direction: DESC}) {\n"
        "    totalCount\n"
        "    nodes { name target { oid ... on Commit { committedDate } "
        "... on Tag { target { oid ... on Commit { committedDate } } } } }\n"
        "  }\n"
        "}"
    )
    return "\n".join(parts)


def _carried_sources(prior: ProjectSnapshot | None, facet: str) -> list[tuple[str, Provenance]]:
    """The provenance of a fact reused from the previous audit: where and when it was fetched."""
    return [(name, src) for name, src in (prior.provenance if prior else ()) if name == facet]


def _is_timeout(status: int, doc: dict[str, Any] | None) -> bool:
    if status in (502, 504):
        return True
    for error in (doc or {}).get("errors") or []:
        text = f"{error.get('type', '')} {error.get('message', '')}".lower()
        if "timeout" in text or "resource_limits" in text or "something went wrong" in text:
            return True
    return False


class GitHubFetcher:
    def __init__(
        self,
        api: GitHubApi,
        settings: GitHubSettings,
        clock: Clock,
        use_graphql: bool = True,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> None:
        self.api = api
        self.settings = settings
        self.clock = clock
        self.should_stop = should_stop
        self.use_graphql = use_graphql and api.authenticated
        self._unreachable_projects: set[str] = set()

    # -- entry point ---------------------------------------------------------------------------

    def fetch_all(
        self, specs: Sequence[ProjectSpec], prior: dict[str, ProjectSnapshot]
    ) -> dict[str, ProjectResult]:
        self.api.refresh_budget()
        results: dict[str, ProjectResult] = {}
        if self.use_graphql:
            self._fetch_graphql(list(specs), prior, results)
        pending = [s for s in specs if s.name not in results]
        unreachable = 0
        for index, spec in enumerate(pending):
            if self.should_stop():
                for rest in pending[index:]:
                    results[rest.name] = self._deferred(rest, "stop requested")
                break
            try:
                result = self._fetch_rest(spec, prior.get(spec.name), len(pending) - index)
            except BudgetExhausted as exc:
                for rest in pending[index:]:
                    results[rest.name] = self._deferred(rest, str(exc))
                break
            results[spec.name] = result
            unreachable = unreachable + 1 if self._unreachable(result) else 0
            if unreachable == UNREACHABLE_AFTER:
                self._give_up(pending[index + 1 :], result, results)
                break
        return results

    def _unreachable(self, result: ProjectResult) -> bool:
        return result.status == "error" and result.project in self._unreachable_projects

    def _give_up(
        self, rest: Sequence[ProjectSpec], last: ProjectResult, results: dict[str, ProjectResult]
    ) -> None:
        """GitHub gave no HTTP answer to several projects in a row: do not make the night
        longer by retrying every remaining project; they are errors, their state carried."""
        why = (
            f"not attempted: GitHub unreachable ({UNREACHABLE_AFTER} projects in a row got no "
            f"answer; last: {last.errors[0].message})"
        )
        for spec in rest:
            url = self.api.absolute(f"/repos/{_repo(spec)}")
            results[spec.name] = self._error(spec, "github", GitHubError(why, url), url)

    def _deferred(self, spec: ProjectSpec, why: str) -> ProjectResult:
        return ProjectResult(
            spec.name, ProjectStatus.DEFERRED, note=f"not checked this audit: {why}"
        )

    def _error(self, spec: ProjectSpec, source: str, exc: Exception, url: str) -> ProjectResult:
        if getattr(exc, "unreachable", False):
            self._unreachable_projects.add(spec.name)
        error = FetchError(spec.name, source, getattr(exc, "url", "") or url, str(exc))
        return ProjectResult(spec.name, ProjectStatus.ERROR, errors=(error,))

    # -- REST ----------------------------------------------------------------------------------

    def _fetch_rest(
        self, spec: ProjectSpec, prior: ProjectSnapshot | None, projects_left: int
    ) -> ProjectResult:
        now = self.clock()
        sources: list[tuple[str, Provenance]] = []
        url = self.api.absolute(f"/repos/{_repo(spec)}")
        try:
            response = self.api.get_json(f"/repos/{_repo(spec)}", allow=(404,))
            if response.status == 404:
                raise GitHubError(
                    f"repository {_repo(spec)} not found (deleted, private, or renamed without "
                    "a redirect): fix 'repo' in sources.yaml",
                    response.url,
                    404,
                )
            repo, gh_license = parse.repo_from_rest(response.data)
            sources.append(("repo", Provenance(response.url, now)))
            base = f"/repos/{repo.full_name}"
            snapshot = ProjectSnapshot(
                project=spec.name, tracking=spec.tracking, repo=repo, forge_license=gh_license
            )

            if spec.track in ("auto", "releases"):
                url = self.api.absolute(
                    f"{base}/releases?per_page={self.settings.releases_per_repo}"
                )
                response = self.api.get_json(url, expect=list)
                snapshot = replace(snapshot, releases=parse.releases_from_rest(response.data))
                sources.append(("releases", Provenance(response.url, now)))
            has_release = bool(usable_releases(spec.tracking, snapshot.releases or ()))
            if spec.track == "tags" or (spec.track == "auto" and not has_release):
                # REST lists tags by name, not date: one full page (same cost) to sort by version.
                url = self.api.absolute(f"{base}/tags?per_page=100")
                response = self.api.get_json(url, expect=list)
                snapshot = replace(snapshot, tags=parse.tags_from_rest(response.data, repo.url))
                sources.append(("tags", Provenance(response.url, now)))
            newest_tags = usable_tags(spec.tracking, snapshot.tags or ())
            has_tag = bool(newest_tags)
            if has_tag and not has_release and self._affordable(projects_left):
                snapshot = self._date_newest_tag(snapshot, newest_tags[0].name, base)
            if spec.track == "commits" or (
                spec.track == "auto" and not has_release and not has_tag
            ):
                url = self.api.absolute(f"{base}/commits?per_page=1")
                response = self.api.get_json(url, expect=list, allow=(409,))
                if response.status == 200 and response.data:
                    snapshot = replace(snapshot, head=parse.commit_from_rest(response.data))
                sources.append(("head", Provenance(response.url, now)))

            # GitHub's repository answer already says when there is no license file (null);
            # /license would only 404, unconditionally, every night.
            if gh_license.key is not None:
                url = self.api.absolute(f"{base}/license")
                response = self.api.get_json(url, allow=(404,))
                if response.status == 200:
                    license_file, _ = parse.license_file_from_rest(response.data)
                    snapshot = replace(snapshot, license_file=license_file)
                sources.append(("license", Provenance(response.url, now)))

            snapshot = self._rest_inventory(snapshot, prior, projects_left, sources, now)
        except BudgetExhausted:
            raise
        except (GitHubError, parse.ShapeError) as exc:
            return self._error(spec, "github", exc, url)
        return ProjectResult(
            spec.name, ProjectStatus.OK, snapshot=replace(snapshot, provenance=tuple(sources))
        )

    def _affordable(self, projects_left: int) -> bool:
        """Room for an optional request after reserving the essentials of every project left."""
        spare = self.api.spare_requests()
        return spare is None or spare > REST_REQUESTS_PER_PROJECT * projects_left

    def _date_newest_tag(self, snapshot: ProjectSnapshot, name: str, base: str) -> ProjectSnapshot:
        """REST tags carry no date: look up the commit of the one the catalog will show."""
        tags = snapshot.tags or ()
        tag = next(t for t in tags if t.name == name)
        response = self.api.get_json(f"{base}/commits/{tag.sha}", allow=(404, 422))
        if response.status != 200:
            return snapshot
        dated = replace(tag, date=parse.commit_from_rest(response.data).date)
        return replace(snapshot, tags=tuple(dated if t.name == name else t for t in tags))

    def _rest_inventory(
        self,
        snapshot: ProjectSnapshot,
        prior: ProjectSnapshot | None,
        projects_left: int,
        sources: list[tuple[str, Provenance]],
        now: str,
    ) -> ProjectSnapshot:
        """Scan the tree for license-ish files when the budget has room for it."""
        assert snapshot.repo is not None
        carried = prior.license_inventory if prior else None
        mode = self.settings.inventory
        affordable = self._affordable(projects_left)
        if (
            mode == "never"
            or (mode == "auto" and not affordable)
            or not snapshot.repo.default_branch
        ):
            sources.extend(_carried_sources(prior, "license_inventory"))
            return replace(snapshot, license_inventory=carried)
        base = f"/repos/{snapshot.repo.full_name}"
        response = self.api.get_json(
            self.api.absolute(f"{base}/git/trees/{snapshot.repo.default_branch}?recursive=1"),
            allow=(404, 409),
        )
        if response.status != 200:
            sources.extend(_carried_sources(prior, "license_inventory"))
            return replace(snapshot, license_inventory=carried)
        sources.append(("license_inventory", Provenance(response.url, now)))
        return replace(snapshot, license_inventory=parse.inventory_from_tree(response.data))

    # -- GraphQL -------------------------------------------------------------------------------

    def _fetch_graphql(
        self,
        specs: list[ProjectSpec],
        prior: dict[str, ProjectSnapshot],
        results: dict[str, ProjectResult],
    ) -> None:
        queue = list(specs)
        batch_size = self.settings.graphql_batch
        while queue:
            if self.should_stop():
                for spec in queue:
                    results[spec.name] = self._deferred(spec, "stop requested")
                return
            batch, queue = queue[:batch_size], queue[batch_size:]
            paths = [self._license_path(prior.get(s.name)) for s in batch]
            try:
                status, doc, message = self.api.post_graphql(
                    graphql_batch_query(batch, paths, self.settings),
                    retry_timeouts=len(batch) == 1,
                )
            except BudgetExhausted as exc:
                for spec in [*batch, *queue]:
                    results[spec.name] = self._deferred(spec, str(exc))
                return
            except GitHubError as exc:
                for spec in batch:
                    results[spec.name] = self._error(
                        spec, "github-graphql", exc, self.api.graphql_url
                    )
                continue
            if _is_timeout(status, doc) and len(batch) > 1:
                batch_size = max(1, len(batch) // 2)  # shrink, like Renovate, and retry
                log.info("GraphQL batch of %d timed out; retrying with %d", len(batch), batch_size)
                queue = batch + queue
                continue
            self._read_batch(batch, doc, message, prior, results)

    @staticmethod
    def _license_path(prior: ProjectSnapshot | None) -> str:
        if prior is not None and prior.license_file is not None:
            return prior.license_file.path
        return "LICENSE"

    def _read_batch(
        self,
        batch: list[ProjectSpec],
        doc: dict[str, Any] | None,
        message: str,
        prior: dict[str, ProjectSnapshot],
        results: dict[str, ProjectResult],
    ) -> None:
        data = (doc or {}).get("data") or {}
        errors_by_alias: dict[str, str] = {}
        for error in (doc or {}).get("errors") or []:
            path = error.get("path") or []
            if path:
                errors_by_alias[str(path[0])] = str(error.get("message", ""))[:300]
        url = self.api.graphql_url
        for index, spec in enumerate(batch):
            alias = f"r{index}"
            node = data.get(alias) if isinstance(data, dict) else None
            if not isinstance(node, dict):
                why = errors_by_alias.get(alias) or f"no data for {_repo(spec)} ({message})"
                results[spec.name] = self._error(spec, "github-graphql", GitHubError(why, url), url)
                continue
            try:
                results[spec.name] = self._from_graphql(spec, node, prior.get(spec.name))
            except BudgetExhausted as exc:
                results[spec.name] = self._deferred(spec, str(exc))
            except (GitHubError, parse.ShapeError, KeyError, TypeError, ValueError) as exc:
                results[spec.name] = self._error(spec, "github", exc, url)

    def _from_graphql(
        self, spec: ProjectSpec, node: dict[str, Any], prior: ProjectSnapshot | None
    ) -> ProjectResult:
        now = self.clock()
        repo, gh_license = parse.repo_from_graphql(node)
        sources: list[tuple[str, Provenance]] = [("repo", Provenance(self.api.graphql_url, now))]
        snapshot = ProjectSnapshot(
            project=spec.name,
            tracking=spec.tracking,
            repo=repo,
            releases=parse.releases_from_graphql(node),
            tags=parse.tags_from_graphql(node, repo.url),
            head=parse.head_from_graphql(node),
            forge_license=gh_license,
        )
        blob = node.get("licenseBlob") or {}
        blob_oid = blob.get("oid") if isinstance(blob, dict) else None
        prior_file = prior.license_file if prior else None
        if prior_file is not None and blob_oid == prior_file.blob_sha:
            snapshot = replace(snapshot, license_file=prior_file)
            sources.extend(_carried_sources(prior, "license"))
        elif gh_license.key is None and not blob_oid:
            pass  # GitHub sees no license file and there is none at the known path
        else:
            response = self.api.get_json(f"/repos/{repo.full_name}/license", allow=(404,))
            if response.status == 200:
                license_file, _ = parse.license_file_from_rest(response.data)
                snapshot = replace(snapshot, license_file=license_file)
            sources.append(("license", Provenance(response.url, now)))

        head = snapshot.head
        prior_inventory = prior.license_inventory if prior else None
        head_unmoved = prior is not None and prior.head is not None and prior.head == head
        if (
            self.settings.inventory == "never"
            or head is None
            or (head_unmoved and prior_inventory is not None)
        ):
            snapshot = replace(snapshot, license_inventory=prior_inventory)
            sources.extend(_carried_sources(prior, "license_inventory"))
        else:
            response = self.api.get_json(
                f"/repos/{repo.full_name}/git/trees/{head.sha}?recursive=1", allow=(404, 409)
            )
            if response.status == 200:
                snapshot = replace(
                    snapshot, license_inventory=parse.inventory_from_tree(response.data)
                )
                sources.append(("license_inventory", Provenance(response.url, now)))
        return ProjectResult(
            spec.name, ProjectStatus.OK, snapshot=replace(snapshot, provenance=tuple(sources))
        )


class GitHubSource:
    """The GitHub source: what the audit calls (see crawler.upstream.source.Source)."""

    kind = KIND

    def __init__(self, context: SourceContext) -> None:
        settings: GitHubSettings = context.settings
        env = context.env
        api_url = env.get("GITHUB_API_URL") or settings.api_url or DEFAULT_API_URL
        token = env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or None
        self.api = GitHubApi(
            api_url, token, context.cache, settings, timeout=context.common.timeout,
            sleep=context.sleep,
        )  # fmt: skip
        self._fetcher = GitHubFetcher(
            self.api, settings, context.clock, should_stop=context.should_stop
        )
        self._web = context.web

    def fetch(
        self, projects: Sequence[ProjectSpec], prior: Mapping[str, ProjectSnapshot]
    ) -> dict[str, ProjectResult]:
        return self._fetcher.fetch_all(projects, dict(prior))

    def read_file(self, location: Location, path: str) -> RepoFile:
        markdown = "text/markdown" if path.lower().endswith(".md") else None
        if self.api.api_url == DEFAULT_API_URL:
            # github.com's raw file host does not spend the API budget
            raw = f"https://raw.githubusercontent.com/{location.path}/HEAD/{path}"
            page = self._web.fetch(raw)
            blob = f"https://github.com/{location.path}/blob/HEAD/{path}"
            return RepoFile(page.body, blob, markdown or page.content_type)
        response = self.api.get_json(f"/repos/{location.path}/contents/{path}")
        data = response.data
        text = base64.b64decode(data.get("content") or "").decode("utf-8", errors="replace")
        return RepoFile(text, str(data.get("html_url") or response.url), markdown)

    def usage(self) -> dict[str, Any]:
        return {
            **self.api.stats.as_dict(),
            "rate_remaining": self.api.core.remaining,
            "authenticated": self.api.authenticated,
        }

    def close(self) -> None:
        self.api.close()
