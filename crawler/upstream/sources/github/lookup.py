"""Repository links answered by GitHub's API (``crawler.link_audit``): a link to
``github.com/<owner>/<name>`` of an item the audit does not track is asked of the API, which
says whether it was renamed (a move, with the new name), archived, or is gone.

With a token: one GraphQL query per ``github.graphql_batch`` repositories (GitHub resolves a
renamed repository under its old name); without one: ``GET /repos/<owner>/<name>``, conditional
(GitHub answers a renamed repository with a redirect the client follows). Either way through
the source's own client: its budget (a spent one defers the rest), pacing and retries.
"""

from __future__ import annotations

from collections.abc import Sequence

from crawler.model import RepoInfo
from crawler.upstream.source import RepositoryAnswers
from crawler.upstream.sources.github import GitHubSettings, parse, queries
from crawler.upstream.sources.github import graphql_shapes as shapes
from crawler.upstream.sources.github.api import BudgetExhausted, GitHubApi, GitHubError


def look_up(
    api: GitHubApi, settings: GitHubSettings, paths: Sequence[str], graphql: bool
) -> RepositoryAnswers:
    """What GitHub says of each ``owner/name``: found (maybe renamed or archived), None (no
    such repository), failed, or deferred (the budget is spent)."""
    found: dict[str, RepoInfo | None] = {}
    failed: dict[str, str] = {}
    unique = list(dict.fromkeys(paths))
    requests = 0
    size = settings.graphql_batch if graphql else 1
    for start in range(0, len(unique), size):
        chunk = unique[start : start + size]
        try:
            requests += 1
            if graphql:
                _by_graphql(api, chunk, found, failed)
            else:
                _by_rest(api, chunk[0], found)
        except BudgetExhausted:
            requests -= 1  # refused before it was sent
            return RepositoryAnswers(found, failed, tuple(unique[start:]), requests)
        except GitHubError as exc:
            failed.update({path: api.safe_message(str(exc), 300) for path in chunk})
    return RepositoryAnswers(found, failed, (), requests)


def _by_rest(api: GitHubApi, path: str, found: dict[str, RepoInfo | None]) -> None:
    response = api.get_json(f"/repos/{path}", allow=(404,))
    if response.status == 404:
        found[path] = None
        return
    found[path] = parse.repo_from_rest(response.data)[0]


def _by_graphql(
    api: GitHubApi, chunk: list[str], found: dict[str, RepoInfo | None], failed: dict[str, str]
) -> None:
    status, doc, message = api.post_graphql(queries.lookup_query(chunk), retry_timeouts=True)
    try:
        answer = shapes.answer(doc or {})
    except parse.ShapeError as exc:
        failed.update({path: str(exc) for path in chunk})
        return
    data = answer.data or {}
    missing = shapes.missing(answer)
    errors = shapes.errors_inside(answer)
    for index, path in enumerate(chunk):
        alias = f"l{index}"
        node = data.get(alias)
        if node is None and alias in missing:
            found[path] = None
        elif node is None or alias in errors:
            why = errors.get(alias) or f"no data for {path} (HTTP {status}: {message()})"
            failed[path] = api.safe_message(why, 300)
        else:
            try:
                found[path] = parse.repo_from_lookup(shapes.linked_repository(node))
            except parse.ShapeError as exc:
                failed[path] = str(exc)
