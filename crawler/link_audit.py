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
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from crawler.analysis.links import catalog_links, checkable, document_links, forge_repository
from crawler.config import ProjectSpec, Settings
from crawler.diff.links import (
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
from crawler.upstream.links import LinkChecker, Validators

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
    by_forge: int = 0
    histories: Mapping[str, LinkHistory] = field(default_factory=dict)  # every cited link's

    def usage(self) -> Usage:
        outcomes = [v.outcome for v in self.verdicts]
        return {
            "checked": len(self.verdicts),
            "requests": self.requests,
            "not_modified": self.not_modified,
            "answered_by_forge": self.by_forge,
            "left_for_later": self.waiting,
            **{f"outcome_{o}": outcomes.count(o) for o in dict.fromkeys(outcomes)},
        }

    def still_bad(self) -> set[str]:
        """Cited links whose last check did not find them where cited (findings stay open)."""
        return {url for url in self.cited if self.histories.get(url, _OK).outcome != "ok"}


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
        LinkTarget(link.url, record, f"{name}: {link.where}", forge_repository(link.url))
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
    ) -> LinkNight:
        cited = frozenset(t.url for t in targets)
        history = link_histories(self._store, cited)
        by_forge = forge_answers(targets, repos)
        web = [t for t in targets if t.url not in by_forge]
        due = due_links(web, history, self._settings.links_per_night)
        waiting = len({t.url for t in web}) - len(due)
        answers: dict[str, LinkAnswer] = {}
        if due and not should_stop():
            with LinkChecker(self._settings) as checker:
                answers = checker.check_many((t.url, _validators(history.get(t.url))) for t in due)
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
            histories=after,
        )


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


def check_files(paths: Sequence[Path], settings: Settings) -> list[tuple[LinkVerdict, LinkAnswer]]:
    """Each link of the files checked once, in the order first cited, with its answer. One
    run has no history: a failure is ``failing`` (``crawler audit`` waits for a second
    night before it calls a link broken; a CI job wants to hear of it at once)."""
    first: dict[str, LinkTarget] = {}
    places: dict[str, list[str]] = {}
    for target in file_targets(paths):
        first.setdefault(target.url, target)
        places.setdefault(target.url, []).append(target.where)
    with LinkChecker(settings) as checker:
        answers = checker.check_many((url, Validators()) for url in first)
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
    summary = {o: outcomes.count(o) for o in ("ok", "moved", "failing", "error")}
    return {"links": links, "summary": {"checked": len(links), **summary}}
