"""Judging links: tonight's answer against the link's history → an outcome, and the changes
worth a person's time. Pure: no I/O, no clock but the one handed in.

* ``ok``: it answered (a temporary redirect followed is ok);
* ``moved``: every redirect was permanent (301/308), or the forge says the repository was
  renamed: reported at once, with the final URL;
* ``archived``: the forge's API says the repository the link names is archived: reported once
  (``repo_archived``), as for a repository the audit tracks;
* ``broken``: 404/410, or a name that no longer resolves, on two nights in a row (one night is
  a deploy gone wrong; the check on the same night again does not count twice);
* ``unreachable``: a timeout, a 5xx, a TLS or connection error that has lasted
  ``settings.link_grace_days``;
* ``failing``: failed tonight, not (yet) reported;
* ``error``: our own rules refused it (a redirect loop, a private address, the size cap): an
  error with its reason, never a finding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Literal

from crawler.model import Change, ChangeKind, LinkAnswer

LinkOutcome = Literal["ok", "moved", "archived", "broken", "unreachable", "failing", "error"]
LINK_OUTCOMES: tuple[LinkOutcome, ...] = (
    "ok", "moved", "archived", "broken", "unreachable", "failing", "error"
)  # fmt: skip
ANSWERING: frozenset[LinkOutcome] = frozenset({"ok", "archived"})  # answers where it is cited
LINK_KINDS = frozenset({ChangeKind.LINK_MOVED, ChangeKind.LINK_BROKEN})
# two checks less than this apart are one night's (a re-run), not two nights in a row
SAME_NIGHT = timedelta(hours=12)
MAX_PLACES = 10  # places a finding names (a link cited everywhere is named a few times)


@dataclass(frozen=True)
class LinkTarget:
    """A link to check and where it is cited: ``project`` (a sources.yaml project, or the
    catalog record naming it) and ``where`` (``sources.yaml line 12 (homepage)``, ``catalog:
    projects[3].evidence[0]``…)."""

    url: str
    project: str
    where: str
    repository: tuple[str, str] | None = None  # (forge, full name) when it is a repository page


@dataclass(frozen=True)
class LinkHistory:
    """What the store keeps of one link between nights."""

    url: str
    outcome: LinkOutcome = "ok"
    last_checked: datetime | None = None
    last_ok: datetime | None = None  # the last night it answered (moved included)
    failing_since: datetime | None = None  # the first check of the failures running now
    gone_nights: int = 0  # nights in a row it answered 404/410 or did not resolve
    status: int | None = None
    moved_to: str | None = None
    reason: str = ""
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True)
class LinkVerdict:
    """One link judged: its new history (outcome included) and where it is cited."""

    target: LinkTarget
    history: LinkHistory
    places: tuple[str, ...] = field(default=())

    @property
    def outcome(self) -> LinkOutcome:
        return self.history.outcome


def judge(
    answer: LinkAnswer, before: LinkHistory | None, now: datetime, grace: timedelta
) -> LinkHistory:
    """The link's history after tonight's answer; its ``outcome`` says what to report."""
    before = before or LinkHistory(answer.url)
    checked = replace(
        before, last_checked=now, status=answer.status, reason=answer.reason, moved_to=None
    )
    if answer.failure is None:
        return replace(
            checked,
            outcome="moved" if answer.moved_to else "archived" if answer.archived else "ok",
            last_ok=now,
            failing_since=None,
            gone_nights=0,
            moved_to=answer.moved_to,
            etag=answer.etag or (before.etag if answer.status == 304 else None),
            last_modified=answer.last_modified
            or (before.last_modified if answer.status == 304 else None),
        )
    if answer.failure == "refused":
        return replace(checked, outcome="error")
    since = before.failing_since if before.failing_since is not None else now
    failing = replace(checked, failing_since=since, etag=None, last_modified=None)
    if answer.failure in ("not_found", "unresolved"):
        again = before.last_checked is not None and now - before.last_checked < SAME_NIGHT
        nights = before.gone_nights if again else before.gone_nights + 1
        return replace(
            failing, gone_nights=max(nights, 1), outcome="broken" if nights >= 2 else "failing"
        )
    lasted = now - since >= grace
    return replace(failing, gone_nights=0, outcome="unreachable" if lasted else "failing")


def link_changes(
    verdicts: Iterable[LinkVerdict], before: Mapping[str, LinkHistory]
) -> list[Change]:
    """The changes of tonight's verdicts: a link newly moved (or moved elsewhere), newly broken
    or unreachable. A finding already reported stays pending; it is not a change again."""
    changes = []
    for verdict in verdicts:
        history, target = verdict.history, verdict.target
        earlier = before.get(target.url)
        was = earlier.outcome if earlier is not None else None
        details = {
            "url": target.url,
            "outcome": history.outcome,
            "status": history.status,
            "reason": history.reason,
            "where": list(verdict.places or (target.where,))[:MAX_PLACES],
            "last_ok": _iso(history.last_ok),
            "failing_since": _iso(history.failing_since),
            "repository": list(target.repository) if target.repository else None,
        }
        if history.outcome == "moved" and (
            was != "moved" or (earlier is not None and earlier.moved_to != history.moved_to)
        ):
            changes.append(
                Change(
                    target.project, ChangeKind.LINK_MOVED, before=target.url,
                    after=history.moved_to, evidence_url=target.url,
                    details={**details, "moved_to": history.moved_to},
                )
            )  # fmt: skip
        elif history.outcome in ("broken", "unreachable") and was not in ("broken", "unreachable"):
            changes.append(
                Change(
                    target.project, ChangeKind.LINK_BROKEN, before=target.url,
                    after=history.outcome, evidence_url=target.url, details=details,
                )
            )  # fmt: skip
        elif history.outcome == "archived" and was != "archived" and target.repository:
            changes.append(
                Change(
                    target.project, ChangeKind.REPO_ARCHIVED, before=False, after=True,
                    evidence_url=target.url, details={**details, "repo": target.repository[1]},
                )
            )  # fmt: skip
    return changes


def fixed_links(histories: Iterable[LinkHistory]) -> set[str]:
    """The links that answer where they were cited: a finding about them is over."""
    return {h.url for h in histories if h.outcome in ANSWERING}


def due_links(
    targets: Sequence[LinkTarget], history: Mapping[str, LinkHistory], budget: int
) -> list[LinkTarget]:
    """At most ``budget`` distinct links, least recently checked first (never-checked ones
    lead, in the order given), so a catalog with more links than a night's budget is checked
    over several nights, as the project rotation does."""
    epoch = datetime.min
    first: dict[str, LinkTarget] = {}
    for target in targets:
        first.setdefault(target.url, target)  # a link cited twice is checked once
    unique = list(first.values())

    def key(item: tuple[int, LinkTarget]) -> tuple[datetime, int]:
        last = history.get(item[1].url)
        when = last.last_checked if last is not None else None
        return (when.replace(tzinfo=None) if when is not None else epoch, item[0])

    return [t for _, t in sorted(enumerate(unique), key=key)][:budget]


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment is not None else None
