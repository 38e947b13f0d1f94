"""Fetch what the catalog needs of each GitHub project, spending as little budget as possible.

With a token: GraphQL rounds (by_graphql.py) — one query per batch of repositories, then a few
queries for what changed — and REST only for the trees of repositories whose head moved.
Without a token: REST per project with conditional requests (by_rest.py). Either way requests
run on a small pool of workers (``github.concurrency``, default 8; 1 is strictly serial).

A failure becomes an error for that project only; a spent budget defers the projects not yet
started; after several projects in a row got no answer at all, GitHub is taken to be
unreachable and the rest are not attempted.
"""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from urllib.parse import quote

from crawler.config import Location, ProjectSpec
from crawler.model import ProjectResult, ProjectSnapshot, ProjectStatus, Usage
from crawler.upstream.guard import deferred, failed
from crawler.upstream.pages import private_addresses_allowed
from crawler.upstream.source import RepoFile, RepositoryAnswers, SourceContext, SourceError
from crawler.upstream.sources.github import (
    DEFAULT_API_URL,
    KIND,
    GitHubSettings,
    credential_in_use,
    github_endpoint,
    parse,
)
from crawler.upstream.sources.github.api import BudgetExhausted, GitHubApi, GitHubError
from crawler.upstream.sources.github.app_auth import InstallationTokens, app_credentials
from crawler.upstream.sources.github.by_graphql import Answered, GraphQLRounds, TreeRead
from crawler.upstream.sources.github.by_rest import RestProject
from crawler.upstream.sources.github.queries import Query, batch_query

log = logging.getLogger(__name__)
Clock = Callable[[], str]
UNREACHABLE_AFTER = 3  # projects in a row without any HTTP answer: stop trying GitHub

__all__ = ["GitHubFetcher", "GitHubSource", "graphql_batch_query"]


def _failed(spec: ProjectSpec, exc: Exception, url: str) -> ProjectResult:
    return failed(spec.name, "github", getattr(exc, "url", "") or url, str(exc))


def _repo(spec: ProjectSpec) -> str:
    assert spec.forge is not None and spec.forge.source == KIND.name
    return spec.forge.path


def graphql_batch_query(
    specs: Sequence[ProjectSpec], license_paths: Sequence[str | None], settings: GitHubSettings
) -> Query:
    return batch_query([_repo(s) for s in specs], license_paths, settings)


class GitHubFetcher:
    def __init__(
        self,
        api: GitHubApi,
        settings: GitHubSettings,
        clock: Clock,
        use_graphql: bool = True,
        should_stop: Callable[[], bool] = lambda: False,
        on_fetched: Callable[[ProjectResult], None] = lambda _result: None,
        dormant_after_days: float = 365.0,
        wants_readme: Callable[[ProjectSnapshot, ProjectSnapshot | None], bool] = (
            lambda _snapshot, _prior: False
        ),
    ) -> None:
        self.api = api
        self.dormant_after_days = dormant_after_days
        self.wants_readme = wants_readme
        # the READMEs the last GraphQL batch read (or why not), until the audit takes each
        self.readmes: dict[str, RepoFile | SourceError] = {}
        self.on_fetched = on_fetched
        self.settings = settings
        self.clock = clock
        self.should_stop = should_stop
        self.use_graphql = use_graphql and api.authenticated
        self._lock = threading.Lock()
        self._deferral: str | None = None  # the budget ran out: later projects are deferred
        self._gone: str | None = None  # GitHub unreachable: later projects are not attempted
        self._unanswered = 0  # projects in a row that got no HTTP answer at all
        self._budget_read = False  # /rate_limit asked once per audit, not once per batch
        # worker threads for the whole audit, not per batch: each keeps its HTTP session (and
        # its open connection) from one batch to the next (an executor starts none until used)
        workers = settings.concurrency
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="github")
        self._queries = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="github-graphql")

    # -- shared state between workers ----------------------------------------------------------

    def _halted(self) -> str | None:
        if self.should_stop():
            return "stop requested"
        with self._lock:
            return self._deferral

    def _halt(self, why: str) -> None:
        with self._lock:
            self._deferral = self._deferral or why

    def _count(self, result: ProjectResult, unanswered: bool, unresolved: bool = False) -> None:
        with self._lock:
            self._unanswered = self._unanswered + 1 if unanswered else 0
            if unresolved and self._gone is None:
                self._gone = f"not attempted: {result.errors[0].message}"
            if self._unanswered >= UNREACHABLE_AFTER and self._gone is None:
                self._gone = (
                    f"not attempted: GitHub unreachable ({UNREACHABLE_AFTER} projects in a row "
                    f"got no answer; last: {result.errors[0].message})"
                )

    # -- entry point ---------------------------------------------------------------------------

    def fetch_all(
        self, specs: Sequence[ProjectSpec], prior: Mapping[str, ProjectSnapshot]
    ) -> dict[str, ProjectResult]:
        if not self._budget_read:  # later batches know the budget from every answer's headers
            self.api.refresh_budget()
            self._budget_read = True
        if self.use_graphql:
            self.readmes = {}  # the previous batch's were taken as its projects completed
            return self._graphql(specs, dict(prior), self._pool)
        return self._rest(specs, prior, self._pool)

    def close(self) -> None:
        for pool in (self._pool, self._queries):
            pool.shutdown(wait=True, cancel_futures=True)

    def _rest(
        self,
        specs: Sequence[ProjectSpec],
        prior: Mapping[str, ProjectSnapshot],
        pool: ThreadPoolExecutor,
    ) -> dict[str, ProjectResult]:
        left = [len(specs)]  # projects whose essentials are still to be fetched
        rest = RestProject(
            self.api, self.settings, self.clock, lambda: left[0], self.dormant_after_days
        )

        def one(spec: ProjectSpec) -> ProjectResult:
            try:
                result = self._rest_one(rest, spec, prior.get(spec.name))
            finally:
                with self._lock:
                    left[0] -= 1
            self.on_fetched(result)
            return result

        return {spec.name: result for spec, result in zip(specs, pool.map(one, specs), strict=True)}

    def _rest_one(
        self, rest: RestProject, spec: ProjectSpec, prior: ProjectSnapshot | None
    ) -> ProjectResult:
        url = self.api.absolute(f"/repos/{_repo(spec)}")
        why = self._halted()
        if why is not None:
            return deferred(spec.name, why)
        with self._lock:
            gone = self._gone
        if gone is not None:
            return _failed(spec, GitHubError(gone, url), url)
        self.api.start_project()
        try:
            snapshot = rest.fetch(spec, _repo(spec), prior)
        except BudgetExhausted as exc:
            self._halt(str(exc))
            return deferred(spec.name, str(exc))
        except (GitHubError, parse.ShapeError) as exc:
            result = _failed(spec, exc, url)
            self._count(
                result,
                unanswered=getattr(exc, "unreachable", False),
                unresolved=getattr(exc, "unresolved", False),
            )
            return result
        except Exception as exc:  # e.g. a tag_pattern that timed out: this project only
            log.warning("GitHub project %s failed", spec.name, exc_info=True)
            return _failed(spec, exc, url)
        result = ProjectResult(spec.name, ProjectStatus.OK, snapshot=snapshot)
        self._count(result, unanswered=False)
        return result

    def _graphql(
        self,
        specs: Sequence[ProjectSpec],
        prior: dict[str, ProjectSnapshot],
        pool: ThreadPoolExecutor,
    ) -> dict[str, ProjectResult]:
        rounds = GraphQLRounds(
            self.api, self.settings, self.clock, _repo, halted=self._halted, halt=self._halt,
            wants_readme=self.wants_readme,
        )  # fmt: skip
        trees: dict[int, Future[TreeRead | None]] = {}

        def read_tree(seen: Answered) -> TreeRead | None:
            self.api.start_project()
            return rounds.read_tree(seen)

        def answered(part: list[Answered]) -> None:
            # a tree needs only the head: read while the other batches and the license
            # rounds run, not after them (a first audit's long pole: one request a repository)
            for seen in part:
                if rounds.needs_tree(seen, prior.get(seen.spec.name)) and not self._halted():
                    trees[id(seen)] = pool.submit(read_tree, seen)

        outcome = rounds.run(specs, prior, self._queries, on_answered=answered)
        self.readmes = outcome.readmes  # before any project is completed (on_fetched)
        url = self.api.graphql_url
        results: dict[str, ProjectResult] = {}
        for name, why in outcome.deferred.items():
            results[name] = deferred(name, why)
        for name, (source, exc) in outcome.failed.items():
            results[name] = failed(name, source, getattr(exc, "url", "") or url, str(exc))

        def finish(seen: Answered) -> ProjectResult:
            # its facts are in hand: only a tree request it still needs can be refused
            spec = seen.spec
            self.api.start_project()
            try:
                reading = trees.get(id(seen))
                if reading is not None:
                    rounds.apply_tree(seen, reading.result())
                else:
                    rounds.inventory(seen, prior.get(spec.name))
            except BudgetExhausted as exc:
                self._halt(str(exc))
                return deferred(spec.name, str(exc))
            except (GitHubError, parse.ShapeError) as exc:
                return _failed(spec, exc, url)
            snapshot = replace(seen.snapshot, provenance=tuple(seen.provenance))
            result = ProjectResult(spec.name, ProjectStatus.OK, snapshot=snapshot)
            self.on_fetched(result)
            return result

        for seen in outcome.answered:
            results[seen.spec.name] = finish(seen)
        for name in (*outcome.deferred, *outcome.failed):
            self.on_fetched(results[name])
        return {spec.name: results[spec.name] for spec in specs if spec.name in results}


class GitHubSource:
    """The GitHub source: what the audit calls (see crawler.upstream.source.Source)."""

    kind = KIND

    def __init__(self, context: SourceContext) -> None:
        settings: GitHubSettings = context.settings
        api_url, token = github_endpoint(settings, context.env)
        app = app_credentials(context.env)  # a GitHub App, when configured, wins over a token
        self.api = GitHubApi(
            api_url,
            token,
            context.cache,
            settings,
            timeout=context.common.timeout,
            deadline=context.common.request_deadline,
            sleep=context.sleep,
            allow_private=private_addresses_allowed(context.common),
            app_tokens=InstallationTokens(
                api_url, app, timeout=context.common.timeout,
                allow_private=private_addresses_allowed(context.common),
            )
            if app
            else None,
            credential=credential_in_use(context.env),
        )  # fmt: skip
        self.api.project_deadline = context.common.project_deadline
        self._fetcher = GitHubFetcher(
            self.api,
            settings,
            context.clock,
            should_stop=context.should_stop,
            on_fetched=context.on_fetched,
            dormant_after_days=context.common.dormant_after_days,
            wants_readme=context.wants_readme,
        )
        self._web = context.web

    def fetch(
        self, projects: Sequence[ProjectSpec], prior: Mapping[str, ProjectSnapshot]
    ) -> dict[str, ProjectResult]:
        return self._fetcher.fetch_all(projects, prior)

    def look_up_repositories(self, paths: Sequence[str]) -> RepositoryAnswers:
        """Repository links (crawler.upstream.source.RepositoryLookup): sources/github/lookup."""
        from crawler.upstream.sources.github.lookup import look_up

        self.api.start_project()  # one clock for the lookups, not the last project's
        return look_up(self.api, self._fetcher.settings, paths, self._fetcher.use_graphql)

    def batched_readme(self, project: str) -> RepoFile | None:
        """The README.md the project's GraphQL batch read (crawler.upstream.source
        .BatchedReadmes); None without a token (REST: ``read_file`` reads it)."""
        found = self._fetcher.readmes.pop(project, None)
        if isinstance(found, SourceError):
            raise found
        return found

    def read_file(self, location: Location, path: str, ref: str | None = None) -> RepoFile:
        markdown = "text/markdown" if path.lower().endswith(".md") else None
        if self.api.api_url == DEFAULT_API_URL:
            # github.com's raw file host does not spend the API budget
            at = quote(ref, safe="/") if ref else "HEAD"
            raw = f"https://raw.githubusercontent.com/{location.path}/{at}/{path}"
            page = self._web.fetch(raw)
            blob = f"https://github.com/{location.path}/blob/{at}/{path}"
            return RepoFile(page.body, blob, markdown or page.content_type)
        query = f"?ref={quote(ref, safe='')}" if ref else ""
        response = self.api.get_json(f"/repos/{location.path}/contents/{path}{query}")
        data = response.data
        text = base64.b64decode(data.get("content") or "").decode("utf-8", errors="replace")
        return RepoFile(text, str(data.get("html_url") or response.url), markdown)

    def usage(self) -> Usage:
        return {
            **self.api.stats.as_dict(),
            "rate_remaining": self.api.core.remaining,
            "authenticated": self.api.authenticated,
            # waiting to keep to GitHub's secondary limits, summed over the workers
            "paced_seconds": round(self.api.pacer.waited, 1) if self.api.pacer else 0.0,
        }

    def close(self) -> None:
        self._fetcher.close()
        self.api.close()
