"""Projects through GitHub's GraphQL API (with a token), in rounds that each send few requests:

1. one aliased query per batch of repositories: releases, tags, head, license verdict, and the
   root license file's blob id (at its known path, or the root entries when none is known);
2. for repositories whose license file moved away from its known path: their root entries;
3. for repositories whose license blob is new: its text, many repositories per query;
4. for repositories whose head moved: the tree, by REST (GraphQL has no recursive tree);
5. for repositories whose README.md the audit wants (archived or dormant, read again only after
   a commit: ``SourceContext.wants_readme``): its text at the head, many repositories per query
   (the queries of round 3), none when no repository wants one.

A batch that times out is halved and retried (as Renovate does); a missing repository loses
only itself. Rounds 1 and 4 run on worker threads, round 4 as round 1 answers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

from crawler.analysis.successor import README_READ
from crawler.config import ProjectSpec
from crawler.model import Commit, InventoryEntry, LicenseFile, ProjectSnapshot, Provenance
from crawler.upstream.guard import carried
from crawler.upstream.root_license import choose_root_license, forge_pick_in_doubt
from crawler.upstream.source import README, RepoFile, SourceDeferred, SourceError
from crawler.upstream.sources.github import DEFAULT_API_URL, GitHubSettings, parse, queries
from crawler.upstream.sources.github import graphql_shapes as shapes
from crawler.upstream.sources.github.api import BudgetExhausted, GitHubApi, GitHubError

log = logging.getLogger(__name__)
Clock = Callable[[], str]
FILES_PER_QUERY = 25  # license texts per follow-up query: small answers, few requests


@dataclass
class Answered:
    """A repository the batch answered, waiting for its follow-ups."""

    spec: ProjectSpec
    snapshot: ProjectSnapshot
    provenance: list[tuple[str, Provenance]]
    license_path: str | None = None
    license_oid: str | None = None
    discover: bool = False  # the known license path is gone: read the root entries


@dataclass
class Outcome:
    """What the rounds produced: facts, or why not (an error or a deferral), per project."""

    answered: list[Answered] = field(default_factory=list)
    failed: dict[str, tuple[str, Exception]] = field(default_factory=dict)  # name → (source, exc)
    deferred: dict[str, str] = field(default_factory=dict)  # name → why
    # name → its README.md (round 5), or why not: status 404 when it has none, else an error
    # or a deferral that concerns the README alone (the project's facts stand)
    readmes: dict[str, RepoFile | SourceError] = field(default_factory=dict)


# what becomes of repositories a files query could not answer: (them, why deferred, the error)
Lost = Callable[[list[Answered], str | None, GitHubError | None], None]


class GraphQLRounds:
    def __init__(
        self,
        api: GitHubApi,
        settings: GitHubSettings,
        clock: Clock,
        repo_of: Callable[[ProjectSpec], str],
        halted: Callable[[], str | None],
        halt: Callable[[str], None],
        wants_readme: Callable[[ProjectSnapshot, ProjectSnapshot | None], bool] = (
            lambda _snapshot, _prior: False
        ),
    ) -> None:
        self.wants_readme = wants_readme
        self.api = api
        self.settings = settings
        self.clock = clock
        self.repo_of = repo_of
        self.halted = halted  # why the source stopped calling GitHub, if it did
        self.halt = halt

    def run(
        self,
        specs: Sequence[ProjectSpec],
        prior: dict[str, ProjectSnapshot],
        queries: Executor,
        on_answered: Callable[[list[Answered]], None] = lambda _answered: None,
    ) -> Outcome:
        """The rounds; round 1 on ``queries`` (threads of its own: a query waiting for a slot
        never holds a worker a tree could use). ``on_answered`` hears each round-1 batch as it
        is answered (in this thread), so that the trees it needs are read while the other
        queries run."""
        outcome = Outcome()
        size = self.settings.graphql_batch
        batches = [list(specs[i : i + size]) for i in range(0, len(specs), size)]
        running = [queries.submit(self._batch, batch, prior) for batch in batches]
        for future in as_completed(running):
            on_answered(future.result().answered)
        for future in running:  # in the order asked: the outcome does not depend on timing
            part = future.result()
            outcome.answered += part.answered
            outcome.failed.update(part.failed)
            outcome.deferred.update(part.deferred)
        self._discover(outcome)
        self._texts(outcome, prior)
        self._readmes(outcome, prior)
        return outcome

    # -- round 1 ---------------------------------------------------------------------------

    def _batch(self, batch: list[ProjectSpec], prior: dict[str, ProjectSnapshot]) -> Outcome:
        outcome = Outcome()
        why = self.halted()
        if why is not None:
            outcome.deferred.update({spec.name: why for spec in batch})
            return outcome
        paths = [self._known_path(prior.get(s.name)) for s in batch]
        query = queries.batch_query([self.repo_of(s) for s in batch], paths, self.settings)
        try:
            status, doc, message = self.api.post_graphql(query, retry_timeouts=len(batch) == 1)
        except BudgetExhausted as exc:
            self.halt(str(exc))
            outcome.deferred.update({spec.name: str(exc) for spec in batch})
            return outcome
        except GitHubError as exc:
            outcome.failed.update({spec.name: ("github-graphql", exc) for spec in batch})
            return outcome
        if queries.is_timeout(status, doc) and len(batch) > 1:
            size = len(batch) // 2  # shrink, like Renovate, and retry at half the size
            log.info("GraphQL batch of %d timed out; retrying %d at a time", len(batch), size)
            for start in range(0, len(batch), size):
                part = self._batch(batch[start : start + size], prior)
                outcome.answered += part.answered
                outcome.failed.update(part.failed)
                outcome.deferred.update(part.deferred)
            return outcome
        self._read_batch(batch, paths, doc, message, outcome, prior)
        return outcome

    @staticmethod
    def _known_path(prior: ProjectSnapshot | None) -> str | None:
        return prior.license_file.path if prior and prior.license_file else None

    def _read_batch(
        self,
        batch: list[ProjectSpec],
        paths: list[str | None],
        doc: dict[str, Any] | None,
        message: Callable[[], str],
        outcome: Outcome,
        prior: dict[str, ProjectSnapshot],
    ) -> None:
        url = self.api.graphql_url
        try:
            found = shapes.answer(doc or {})
        except parse.ShapeError as exc:
            outcome.failed.update(
                {s.name: ("github-graphql", GitHubError(str(exc), url)) for s in batch}
            )
            return
        data = found.data or {}
        errors = shapes.errors_inside(found)
        again: list[ProjectSpec] = []
        for index, spec in enumerate(batch):
            alias = f"r{index}"
            node = data.get(alias)
            if node is not None and alias in errors and len(batch) > 1:
                again.append(spec)  # a field of it failed: ask again for it alone
                continue
            if node is None or alias in errors:
                # a repository that is missing or partly answered: its facts are unknown
                why = errors.get(alias) or f"no data for {self.repo_of(spec)} ({message()})"
                error = GitHubError(self.api.safe_message(why), url)  # it may echo the token
                outcome.failed[spec.name] = ("github-graphql", error)
                continue
            try:
                seen = self._answered(spec, shapes.repository(node), paths[index])
                # what did not change is kept once: the stored state's objects
                seen.snapshot = seen.snapshot.sharing(prior.get(spec.name))
                outcome.answered.append(seen)
            except (parse.ShapeError, ValueError) as exc:
                outcome.failed[spec.name] = ("github", GitHubError(str(exc), url))
        for spec in again:
            part = self._batch([spec], prior)
            outcome.answered += part.answered
            outcome.failed.update(part.failed)
            outcome.deferred.update(part.deferred)

    def _answered(
        self, spec: ProjectSpec, node: shapes.RepositoryNode, path: str | None
    ) -> Answered:
        repo, forge_license = parse.repo_from_graphql(node)
        snapshot = ProjectSnapshot(
            project=spec.name,
            tracking=spec.tracking,
            repo=repo,
            releases=parse.releases_from_graphql(node),
            tags=parse.tags_from_graphql(node.refs, repo.url),
            head=parse.head_from_graphql(node),
            forge_license=forge_license,
        )
        seen = Answered(spec, snapshot, [("repo", Provenance(self.api.graphql_url, self.clock()))])
        if path is not None:
            oid = node.licenseBlob.oid if node.licenseBlob else None
            if forge_pick_in_doubt(forge_license, path):
                # GitHub reads the LGPL, the known path is not its .LESSER file: a pair may
                # have formed beside it; the root's entries decide, by the shared rule
                seen.discover = snapshot.head is not None
            elif oid:
                seen.license_path, seen.license_oid = path, oid
            else:
                seen.discover = snapshot.head is not None  # moved or removed: look again
        else:
            entries = node.rootEntries.entries if node.rootEntries else None
            seen.license_path, seen.license_oid = _root_license(entries)
        return seen

    # -- rounds 2 and 3 --------------------------------------------------------------------

    def _files(
        self,
        wanted: list[tuple[Answered, str | None]],
        outcome: Outcome,
        lost: Lost | None = None,
    ) -> list[tuple[Answered, shapes.FileObject]]:
        """Ask for root entries (path None) or file texts at each repository's head, in few
        queries; projects whose query fails leave the answered list for failed/deferred (or
        go to ``lost``, when the file is not one of the project's facts)."""

        def drop(dropped: list[Answered], deferred: str | None, error: GitHubError | None) -> None:
            self._drop(outcome, dropped, deferred=deferred, error=error)

        found: list[tuple[Answered, shapes.FileObject]] = []
        for start in range(0, len(wanted), FILES_PER_QUERY):
            chunk = wanted[start : start + FILES_PER_QUERY]
            live = [(seen, path) for seen, path in chunk if seen.spec.name not in outcome.failed]
            if live:
                found += self._files_query(live, lost or drop)
        return found

    def _files_query(
        self, live: list[tuple[Answered, str | None]], lost: Lost
    ) -> list[tuple[Answered, shapes.FileObject]]:
        why = self.halted()
        if why is not None:
            lost([seen for seen, _ in live], why, None)
            return []
        requests = [
            (seen.snapshot.repo.full_name, seen.snapshot.head.sha, path)  # type: ignore[union-attr]
            for seen, path in live
        ]
        try:
            status, doc, _message = self.api.post_graphql(
                queries.files_query(requests), retry_timeouts=len(live) == 1
            )
        except BudgetExhausted as exc:
            self.halt(str(exc))
            lost([seen for seen, _ in live], str(exc), None)
            return []
        except GitHubError as exc:
            lost([seen for seen, _ in live], None, exc)
            return []
        if queries.is_timeout(status, doc) and len(live) > 1:
            size = len(live) // 2
            return [
                found
                for start in range(0, len(live), size)
                for found in self._files_query(live[start : start + size], lost)
            ]
        url = self.api.graphql_url
        try:
            found = shapes.answer(doc or {})
        except parse.ShapeError as exc:
            lost([seen for seen, _ in live], None, GitHubError(str(exc), url))
            return []
        data = found.data or {}
        errors = shapes.errors_inside(found)
        answered: list[tuple[Answered, shapes.FileObject]] = []
        for index, (seen, _path) in enumerate(live):
            alias = f"f{index}"
            try:
                if alias in errors or data.get(alias) is None:
                    # failed or missing: not "no license file"
                    why = errors.get(alias) or f"no data for {seen.snapshot.repo.full_name}"  # type: ignore[union-attr]
                    raise GitHubError(self.api.safe_message(why), url)
                node = shapes.files(data[alias])
            except parse.ShapeError as exc:
                lost([seen], None, GitHubError(str(exc), url))
                continue
            except GitHubError as exc:
                lost([seen], None, exc)
                continue
            answered.append((seen, node.object or shapes.FileObject()))
        return answered

    @staticmethod
    def _drop(
        outcome: Outcome,
        dropped: list[Answered],
        *,
        deferred: str | None = None,
        error: GitHubError | None = None,
    ) -> None:
        for seen in dropped:
            if error is not None:
                outcome.failed[seen.spec.name] = ("github-graphql", error)
            else:
                outcome.deferred[seen.spec.name] = deferred or "not checked"
        names = {seen.spec.name for seen in dropped}
        outcome.answered = [seen for seen in outcome.answered if seen.spec.name not in names]

    def _discover(self, outcome: Outcome) -> None:
        wanted: list[tuple[Answered, str | None]] = [
            (s, None) for s in outcome.answered if s.discover
        ]
        for seen, tree in self._files(wanted, outcome):
            seen.license_path, seen.license_oid = _root_license(tree.entries)

    def _texts(self, outcome: Outcome, prior: dict[str, ProjectSnapshot]) -> None:
        wanted: list[tuple[Answered, str | None]] = []
        for seen in outcome.answered:
            before = prior.get(seen.spec.name)
            earlier = before.license_file if before else None
            if seen.license_path is None or seen.license_oid is None:
                continue  # no license file found at the root
            if earlier is not None and earlier.blob_sha == seen.license_oid:
                seen.snapshot = replace(seen.snapshot, license_file=earlier)
                seen.provenance += carried(before, "license")
            else:
                wanted.append((seen, seen.license_path))
        for seen, blob in self._distinct_blobs(wanted, outcome):
            repo = seen.snapshot.repo
            assert repo is not None and seen.license_path is not None
            url = parse.file_url(repo.url, repo.default_branch or "HEAD", seen.license_path)
            if blob.isTruncated or blob.isBinary or blob.text is None:
                try:  # too big or odd for GraphQL's text: REST has it
                    license_file = self._rest_license(seen)
                except BudgetExhausted as exc:
                    self.halt(str(exc))
                    self._drop(outcome, [seen], deferred=str(exc))
                    continue
                except (GitHubError, parse.ShapeError) as exc:
                    error = exc if isinstance(exc, GitHubError) else GitHubError(str(exc), url)
                    self._drop(outcome, [seen], error=error)
                    continue
            else:
                license_file = LicenseFile(
                    path=seen.license_path,
                    blob_sha=blob.oid or str(seen.license_oid),
                    url=url,
                    text=parse.license_text(blob.text),
                )
            seen.snapshot = replace(seen.snapshot, license_file=license_file)
            seen.provenance.append(("license", Provenance(url, self.clock())))

    def _distinct_blobs(
        self, wanted: list[tuple[Answered, str | None]], outcome: Outcome
    ) -> list[tuple[Answered, shapes.FileObject]]:
        """The license blobs of ``wanted``, each distinct blob asked for once: Git names a blob
        by its content, so repositories sharing a blob id share its text (a thousand
        repositories with thirty distinct texts cost two queries, not forty). A repository
        whose blob's query failed for another repository asks for its own."""
        asking: dict[str, Answered] = {}
        for seen, _path in wanted:
            asking.setdefault(str(seen.license_oid), seen)
        answered = self._files([(seen, seen.license_path) for seen in asking.values()], outcome)
        blobs = {str(seen.license_oid): blob for seen, blob in answered}
        found = list(answered)
        again: list[tuple[Answered, str | None]] = []
        for seen, path in wanted:
            oid = str(seen.license_oid)
            if asking[oid] is seen:
                continue
            if oid in blobs:
                found.append((seen, blobs[oid]))
            else:
                again.append((seen, path))
        return found + self._files(again, outcome)

    def _rest_license(self, seen: Answered) -> LicenseFile | None:
        """The chosen license file by REST's contents API (up to 1 MB; GraphQL cuts a blob's
        text at 512,000 bytes): the file at ``seen.license_path``, which the shared rule
        chose -- not /license's, which may name another (COPYING beside COPYING.LESSER)."""
        repo, head = seen.snapshot.repo, seen.snapshot.head
        assert repo is not None and seen.license_path is not None
        ref = quote(head.sha if head is not None else repo.default_branch or "HEAD", safe="")
        url = f"/repos/{repo.full_name}/contents/{quote(seen.license_path)}?ref={ref}"
        response = self.api.get_json(url, allow=(404,))
        if response.status != 200:
            return None
        return parse.license_file_from_rest(response.data)[0]

    # -- round 5 ---------------------------------------------------------------------------

    def _readmes(self, outcome: Outcome, prior: dict[str, ProjectSnapshot]) -> None:
        """README.md at the head of each repository the audit wants it of, in round 3's files
        queries (FILES_PER_QUERY a query; none when no repository wants one). A query
        that fails, or a spent budget, concerns the READMEs alone: each keeps its last reading
        (crawler.gather.ReadmeReader), the project's facts stand."""
        wanted: list[tuple[Answered, str | None]] = [
            (seen, README)
            for seen in outcome.answered
            if seen.snapshot.head is not None
            and seen.snapshot.repo is not None
            and self.wants_readme(seen.snapshot, prior.get(seen.spec.name))
        ]
        url = self.api.graphql_url

        def lost(dropped: list[Answered], deferred: str | None, error: GitHubError | None) -> None:
            for seen in dropped:
                why = error or SourceDeferred(deferred or "not checked", url)
                outcome.readmes[seen.spec.name] = why

        for seen, found in self._files(wanted, outcome, lost):
            outcome.readmes[seen.spec.name] = self._readme(seen, found)

    def _readme(self, seen: Answered, found: shapes.FileObject) -> RepoFile | SourceError:
        """The README as ``read_file`` gives it, with the same link: github.com's names HEAD
        (read from its raw host), an Enterprise server's the default branch (its contents
        API's ``html_url``); only the top is read (``readme_top``), so only that much is kept.
        No object at that path (or a directory) is the 404 of "no README.md"."""
        repo = seen.snapshot.repo
        assert repo is not None
        ref = "HEAD" if self.api.api_url == DEFAULT_API_URL else repo.default_branch or "HEAD"
        url = parse.file_url(repo.url, ref, README)
        if found.oid is None or found.entries is not None:
            return GitHubError(f"{repo.full_name} has no {README}", url, status=404)
        # a binary blob has no text: nothing in it reads as a notice
        return RepoFile((found.text or "")[:README_READ], url, "text/markdown")

    # -- round 4 ---------------------------------------------------------------------------

    def needs_tree(self, seen: Answered, prior: ProjectSnapshot | None) -> bool:
        """Whether ``inventory`` sends a request: the head moved, or no inventory is kept."""
        head: Commit | None = seen.snapshot.head
        kept = prior.license_inventory if prior else None
        unmoved = prior is not None and prior.head is not None and prior.head == head
        return not (self.settings.inventory == "never" or head is None or
                    (unmoved and kept is not None))  # fmt: skip

    def inventory(self, seen: Answered, prior: ProjectSnapshot | None) -> None:
        """The tree scan, when the head moved since the last good audit (REST)."""
        if not self.needs_tree(seen, prior):
            seen.snapshot = replace(
                seen.snapshot, license_inventory=prior.license_inventory if prior else None
            )
            seen.provenance += carried(prior, "license_inventory")
            return
        self.apply_tree(seen, self.read_tree(seen))

    def read_tree(self, seen: Answered) -> TreeRead | None:
        """The head's tree (REST), read without touching ``seen`` (a worker reads it while
        the later rounds complete ``seen``); None when GitHub has none (404, 409)."""
        head: Commit | None = seen.snapshot.head
        repo = seen.snapshot.repo
        assert repo is not None and head is not None
        response = self.api.get_json(
            f"/repos/{repo.full_name}/git/trees/{head.sha}?recursive=1",
            allow=(404, 409),
            immutable=True,  # a commit's tree: asked again only when the head moves
            decode=parse.decode_tree,
        )
        if response.status != 200:
            return None
        inventory = parse.inventory_from_tree(response.data, repo.url, repo.default_branch)
        return TreeRead(inventory, Provenance(response.url, self.clock()))

    @staticmethod
    def apply_tree(seen: Answered, read: TreeRead | None) -> None:
        if read is not None:
            seen.snapshot = replace(seen.snapshot, license_inventory=read.inventory)
            seen.provenance.append(("license_inventory", read.provenance))


@dataclass(frozen=True)
class TreeRead:
    inventory: tuple[InventoryEntry, ...]
    provenance: Provenance


def _root_license(entries: list[shapes.TreeEntry] | None) -> tuple[str | None, str | None]:
    """(path, blob id) of the root license file among a tree's entries."""
    blobs = {e.name: e.oid or "" for e in entries or [] if e.type == "blob" and e.name}
    chosen = choose_root_license(blobs)
    return chosen if chosen is not None else (None, None)
