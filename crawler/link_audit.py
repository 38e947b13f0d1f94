"""The audit's link step, and ``crawler links FILE…``: which links the catalog carries, which
of them tonight's budget checks, what each answered, and what a person should hear of it.

One self-contained step (``LinkStep.run``), called once by the audit after its projects are
compared: it reads the links' history, checks the links due tonight (least recently checked
first, at most ``settings.links_per_night``; conditional requests), judges them
(``crawler.diff.links``) and records their history. A repository link of a project checked
tonight is answered by that project's forge snapshot (renamed: moved; no request).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from crawler.analysis.links import (
    catalog_links,
    checkable,
    document_links,
    excluded,
    forge_repository,
)
from crawler.config import ProjectSpec, Settings
from crawler.diff.links import (
    ANSWERING,
    LinkHistory,
    LinkTarget,
    LinkVerdict,
    due_links,
    judge,
    link_changes,
)
from crawler.model import Change, LinkAnswer, ProjectSnapshot, RepoInfo, Usage
from crawler.store import Store
from crawler.store.links import link_histories, record_links
from crawler.upstream.forge_links import ForgeLinks
from crawler.upstream.links import LinkChecker, Validators
from crawler.upstream.source import RepositoryAnswers

log = logging.getLogger(__name__)
MAX_DOCUMENT = 5 * 1024 * 1024  # bytes of one file given to `crawler links`


@dataclass(frozen=True)
class LinkNight:
    """What one night's link step found: every link judged tonight, the changes, the cost."""

    verdicts: tuple[LinkVerdict, ...]
    changes: tuple[Change, ...]
    cited: frozenset[str]  # every link the catalog carries tonight, checked tonight or not
    waiting: int  # links left for a later night by the budget
    requests: int = 0
    not_modified: int = 0
    by_forge: int = 0  # answered by a forge snapshot of tonight: no request
    by_forge_api: int = 0  # answered by a forge's API (repository links of untracked items)
    forge_requests: int = 0  # the API requests those cost (a GraphQL query answers many)
    excluded: int = 0  # cited links settings.links_exclude leaves unchecked
    histories: Mapping[str, LinkHistory] = field(default_factory=dict)  # every cited link's
    # what the forges opened for the links alone spent (the others count in their source's)
    forge_usage: Mapping[str, Usage] = field(default_factory=dict)

    def usage(self) -> Usage:
        outcomes = [v.outcome for v in self.verdicts]
        return {
            "checked": len(self.verdicts),
            "requests": self.requests,
            "not_modified": self.not_modified,
            "answered_by_forge": self.by_forge,
            "answered_by_forge_api": self.by_forge_api,
            "forge_api_requests": self.forge_requests,
            "excluded": self.excluded,
            "left_for_later": self.waiting,
            **{f"outcome_{o}": outcomes.count(o) for o in dict.fromkeys(outcomes)},
        }

    def still_bad(self) -> set[str]:
        """Cited links whose last check did not find them where cited (findings stay open)."""
        return {url for url in self.cited if self.histories.get(url, _OK).outcome not in ANSWERING}


_OK = LinkHistory("")


def project_targets(spec: ProjectSpec, snapshot: ProjectSnapshot | None) -> list[LinkTarget]:
    """A project's links: sources.yaml's (homepage, pages' ``url``) and the evidence links the
    export writes for its current state (its repository page, release, license file...)."""
    targets: list[LinkTarget] = []
    if spec.homepage:
        where = _at_line(spec.line_of("homepage"))
        targets.append(LinkTarget(spec.homepage, spec.name, f"{where} (homepage)"))
    for page in spec.pages:
        if page.url:
            where = _at_line(page.line or spec.line)
            targets.append(LinkTarget(page.url, spec.name, f"{where} (url of page {page.name!r})"))
    if snapshot is None:
        return _checkable(targets)
    # the export package loads jsonschema: only a night that checks links pays for it
    from crawler.export.from_store import evidence_of

    # the repository as sources.yaml names it is not a link of its own: a rename is already
    # repo_moved; the evidence's repository link is answered by the forge's snapshot
    repo = snapshot.repo
    for link in evidence_of(spec.name, snapshot):
        repository = (repo.forge, repo.full_name) if repo and link.url == repo.url else None
        targets.append(LinkTarget(link.url, spec.name, f"evidence: {link.about}", repository))
    return _checkable(targets)


def _at_line(line: int) -> str:
    return f"sources.yaml line {line}" if line else "sources.yaml"


def _checkable(targets: Iterable[LinkTarget]) -> list[LinkTarget]:
    """The targets with an http(s) URL, fragment dropped (as a server sees it)."""
    kept = []
    for target in targets:
        url = checkable(target.url)
        if url is not None:
            kept.append(replace(target, url=url))
    return kept


def curated_targets(curated: Mapping[str, Any] | None, name: str) -> list[LinkTarget]:
    """Every ``url`` of the curated catalog (``settings.catalog``)."""
    if curated is None:
        return []
    return [
        LinkTarget(link.url, record, f"{name}: {link.where}")
        for record, link in catalog_links(curated)
    ]


def forge_answers(
    targets: Iterable[LinkTarget], repos: Mapping[tuple[str, str], RepoInfo]
) -> dict[str, LinkAnswer]:
    """Repository links answered by a forge snapshot of tonight: renamed is moved."""
    answers = {}
    for target in targets:
        if target.repository is None:
            continue
        forge, name = target.repository
        repo = repos.get((forge, name.lower()))
        if repo is None:
            continue
        moved = repo.url if repo.full_name.lower() != name.lower() else None
        answers[target.url] = LinkAnswer(target.url, 200, moved_to=moved, via="forge")
    return answers


def forge_entries(
    spec: ProjectSpec, snapshot: ProjectSnapshot
) -> list[tuple[tuple[str, str], RepoInfo]]:
    """The repository a project checked tonight answered with, keyed (registry, lower-case
    name) under its current name and under the name sources.yaml gives it."""
    repo = snapshot.repo
    if repo is None:
        return []
    entries = [((repo.forge, repo.full_name.lower()), repo)]
    if spec.forge is not None:
        entries.append(((repo.forge, spec.forge.path.lower()), repo))
    return entries


class LinkStep:
    """The audit's link step: ``run`` once per audit (see the module docstring)."""

    def __init__(self, settings: Settings, store: Store, *, now: datetime) -> None:
        self._settings = settings
        self._store = store
        self._now = now

    def run(
        self,
        targets: Sequence[LinkTarget],
        repos: Mapping[tuple[str, str], RepoInfo],
        should_stop: Callable[[], bool] = lambda: False,
        *,
        forges: ForgeLinks | None = None,
        tracked: AbstractSet[tuple[str, str]] = frozenset(),
    ) -> LinkNight:
        """``repos``: the forge snapshots of tonight (see ``forge_entries``); ``forges``: the
        forges' APIs, for the other repository links (None: those are asked over HTTP);
        ``tracked``: (forge, lower-case path) of every project tonight's audit selected."""
        locate = forges.repository if forges is not None else forge_repository
        targets = [t if t.repository else replace(t, repository=locate(t.url)) for t in targets]
        cited = frozenset(t.url for t in targets)
        history = link_histories(self._store, cited)
        by_forge = forge_answers(targets, repos)
        # a repository of a project tonight selected but could not check: no request (its
        # error says enough); a later night checks it
        exclude = self._settings.links_exclude
        skipped = {t.url for t in targets if exclude and excluded(t.url, exclude)}
        rest = [
            t for t in targets
            if t.url not in by_forge and t.url not in skipped and not _of_tracked(t, tracked)
        ]  # fmt: skip
        due = due_links(rest, history, self._settings.links_per_night)
        asked = [t for t in due if forges is not None and t.repository is not None]
        web = [t for t in due if forges is None or t.repository is None]
        answers: dict[str, LinkAnswer] = {}
        api = ForgeAnswers({}, 0, 0)
        if due and not should_stop():
            if forges is not None and asked:
                api = ask_forges(forges, asked)
                answers.update(api.answers)
            if web:
                with LinkChecker(self._settings) as checker:
                    answers.update(
                        checker.check_many((t.url, _validators(history.get(t.url))) for t in web)
                    )
        waiting = len({t.url for t in rest}) - len(due) + api.deferred
        answers.update(by_forge)
        first: dict[str, LinkTarget] = {}
        places: dict[str, list[str]] = {}
        for target in targets:
            first.setdefault(target.url, target)
            places.setdefault(target.url, []).append(target.where)
        grace = timedelta(days=self._settings.link_grace_days)
        verdicts = tuple(
            LinkVerdict(
                first[url],
                judge(answer, history.get(url), self._now, grace),
                tuple(dict.fromkeys(places[url])),
            )
            for url, answer in answers.items()
        )
        record_links(self._store, [v.history for v in verdicts])
        after = {**history, **{v.target.url: v.history for v in verdicts}}
        return LinkNight(
            verdicts=verdicts,
            changes=tuple(link_changes(verdicts, history)),
            cited=cited,
            waiting=max(waiting, 0),
            requests=sum(a.requests for a in answers.values()),
            not_modified=sum(a.status == 304 for a in answers.values()),
            by_forge=len(by_forge),
            by_forge_api=len(api.answers),
            excluded=len(skipped),
            forge_requests=api.requests,
            histories=after,
        )


def _of_tracked(target: LinkTarget, tracked: AbstractSet[tuple[str, str]]) -> bool:
    if target.repository is None:
        return False
    forge, path = target.repository
    return (forge, path.lower()) in tracked


@dataclass(frozen=True)
class ForgeAnswers:
    """Links answered by the forges' APIs, and what it took."""

    answers: dict[str, LinkAnswer]
    deferred: int  # links not asked: a forge's budget is spent (a later night asks)
    requests: int


def ask_forges(forges: ForgeLinks, targets: Sequence[LinkTarget]) -> ForgeAnswers:
    """Each repository link asked of its forge's API, all of a forge's at once (batched where
    the forge allows): renamed is ``moved`` (to the page under its new name), archived is
    ``archived``, no such repository is ``not_found`` (broken on the second night)."""
    wanted: dict[str, dict[str, list[str]]] = {}  # forge → path → the links naming it
    for target in targets:
        assert target.repository is not None
        forge, path = target.repository
        wanted.setdefault(forge, {}).setdefault(path, []).append(target.url)
    answers: dict[str, LinkAnswer] = {}
    deferred = requests = 0
    for forge, paths in wanted.items():
        said = forges.look_up(forge, list(paths))
        requests += said.requests
        for path, urls in paths.items():
            for url in urls:
                answer = _forge_answer(url, path, said)
                if answer is None:
                    deferred += 1
                else:
                    answers[url] = answer
    return ForgeAnswers(answers, deferred, requests)


def _forge_answer(url: str, path: str, said: RepositoryAnswers) -> LinkAnswer | None:
    if path in said.found:
        repo = said.found[path]
        if repo is None:
            why = f"the forge's API has no repository {path}"
            return LinkAnswer(url, 404, failure="not_found", reason=why, via="forge")
        moved = repo.url if repo.full_name.lower() != path.lower() else None
        return LinkAnswer(url, 200, moved_to=moved, via="forge", archived=repo.archived)
    if path in said.failed:
        return LinkAnswer(url, None, failure="unreachable", reason=said.failed[path], via="forge")
    return None  # deferred: not asked tonight


def _validators(history: LinkHistory | None) -> Validators:
    if history is None:
        return Validators()
    return Validators(history.etag, history.last_modified)


# -- `crawler links FILE…` -------------------------------------------------------------------


class DocumentError(Exception):
    """A file given to ``crawler links`` cannot be read (the message says which and why)."""


def file_targets(paths: Sequence[Path]) -> list[LinkTarget]:
    """The links of each Markdown or HTML file, cited at their line."""
    targets = []
    for path in paths:
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_DOCUMENT + 1)
        except OSError as exc:
            raise DocumentError(f"{path}: cannot read it: {exc.strerror or exc}") from None
        if len(data) > MAX_DOCUMENT:
            raise DocumentError(f"{path}: larger than {MAX_DOCUMENT} bytes: not a catalog page")
        text = data.decode("utf-8", "replace")
        for link in document_links(text, name=path.name):
            targets.append(LinkTarget(link.url, str(path), f"{path}:{link.line or 1}"))
    return targets


def check_files(
    paths: Sequence[Path], settings: Settings, forges: ForgeLinks | None = None
) -> list[tuple[LinkVerdict, LinkAnswer]]:
    """Each link of the files checked once, in the order first cited, with its answer; a
    repository page on a forge asked of its API (``forges``). One run has no history: a
    failure is ``failing`` (``crawler audit`` waits for a second night before it calls a link
    broken; a CI job wants to hear of it at once)."""
    first: dict[str, LinkTarget] = {}
    places: dict[str, list[str]] = {}
    for target in file_targets(paths):
        if settings.links_exclude and excluded(target.url, settings.links_exclude):
            continue
        repository = forges.repository(target.url) if forges is not None else None
        first.setdefault(target.url, replace(target, repository=repository))
        places.setdefault(target.url, []).append(target.where)
    asked = [t for t in first.values() if t.repository is not None]
    answers = ask_forges(forges, asked).answers if forges is not None and asked else {}
    for target in asked:
        if target.url not in answers:  # the forge's budget is spent: not asked
            why = "not asked: the forge's rate budget is spent (set its token)"
            answers[target.url] = LinkAnswer(target.url, None, failure="refused", reason=why)
    web = [url for url in first if url not in answers]
    with LinkChecker(settings) as checker:
        answers.update(checker.check_many((url, Validators()) for url in web))
    now = datetime.now(UTC).replace(microsecond=0)
    grace = timedelta(days=settings.link_grace_days)
    return [
        (
            LinkVerdict(first[url], judge(answers[url], None, now, grace), tuple(places[url])),
            answers[url],
        )
        for url in first
    ]


def links_json(checked: Sequence[tuple[LinkVerdict, LinkAnswer]]) -> dict[str, Any]:
    """What ``crawler links --json`` prints (its shape is documented in docs/links.md)."""
    links = [
        {
            "url": verdict.target.url,
            "outcome": verdict.outcome,
            "status": answer.status,
            "moved_to": answer.moved_to,
            "reason": answer.reason,
            "where": list(verdict.places or (verdict.target.where,)),
        }
        for verdict, answer in checked
    ]
    outcomes = [item["outcome"] for item in links]
    summary = {o: outcomes.count(o) for o in ("ok", "moved", "archived", "failing", "error")}
    return {"links": links, "summary": {"checked": len(links), **summary}}
