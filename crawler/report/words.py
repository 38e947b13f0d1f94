"""The presentation model: the one place where facts become words and dates. Pure.

Every output -- report.md, snapshot.md, catalog.json's labels, the Explorer, the
notifications and the terminal -- words a fact through these functions, so one fact reads the
same everywhere:

* the forge's license verdict: ``MIT per GitHub``, ``NOASSERTION per Gitee``, ``no verdict
  from GitLab``;
* the latest version, its kind and its date: a pre-release is named and dated like a release,
  marked "(release candidate)" for an rc and "(pre-release)" for another pre-release;
* a project whose facts are older than the audit: ``stale: facts of 2026-11-28``;
* dates as ``YYYY-MM-DD``, times as ISO 8601 UTC (``2026-11-30T02:00:00Z``);
* counts with their plural (``1 error``, ``3 errors``), change kinds in prose (``new release``);
* a license file with more than the license: ``MIT plus extra text in LICENSE``;
* errors by cause, one line naming the projects, ``tried and failed`` or ``not attempted``.

The strings returned are plain text: upstream parts are not escaped here; each writer escapes
for its own format (Markdown, HTML, JSON).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlsplit

import msgspec

from crawler.config import Coverage
from crawler.diff.licenses import LicenseLabelFacts
from crawler.diff.source_labels import Names, key_of, label_of
from crawler.model import Change, ChangeKind, Flag, FlagKind, LicenseAnalysis, TextSpan
from crawler.report.model import MIN_CHECKED_SHARE, PendingEntry, Report, Summary
from crawler.versions import is_release_candidate

NOASSERTION = "NOASSERTION"
NO_DATE = "—"  # a date no source gave

# -- dates and counts -----------------------------------------------------------------------------


def day(value: str | date | datetime | None) -> str | None:
    """A date as ``YYYY-MM-DD``; an ISO 8601 timestamp is cut to its (UTC) day."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        moment_ = value.astimezone(UTC) if value.tzinfo else value
        return moment_.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value[:10]


def zoned_moment(value: datetime) -> str:
    """A time in its own zone, ISO 8601, as a schedule's zone gives it
    (``2028-02-29T03:00:00+01:00``); a UTC time ends in ``Z``, as every UTC time written."""
    return value.isoformat().replace("+00:00", "Z")


def moment(value: datetime | str | None) -> str | None:
    """A time as ISO 8601 in UTC with a ``Z``: ``2026-11-30T02:00:00Z``."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.replace("+00:00", "Z")
    aware = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return aware.isoformat().replace("+00:00", "Z")


_PLURALS = {"entry": "entries", "new flag": "new flags"}


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 error``, ``0 errors``, ``3 projects`` (``many``: the plural when not ``noun + s``)."""
    return f"{count} {noun if count == 1 else many or _PLURALS.get(noun, noun + 's')}"


def rotation_nights(projects: int, deferred: int, untracked: int) -> str:
    """How many more nights the rotation (least recently checked first) needs to reach the
    deferred projects at the pace of this audit (a first audit larger than the rate budget):
    ``; at this audit's pace the rotation reaches them in 2 more nights``, or nothing."""
    reached = projects - deferred - untracked
    if deferred <= 0 or reached <= 0:
        return ""
    nights = -(-deferred // reached)
    return f"; at this audit's pace the rotation reaches them in {plural(nights, 'more night')}"


def line_range(start: int, end: int) -> str:
    """``line 5`` or ``lines 5–9``; never ``lines 5–5``."""
    return f"line {start}" if start == end else f"lines {start}–{end}"


# -- how an item is followed ----------------------------------------------------------------------


PART_OF = "part of"  # a riding item's label, before its host's name
NOT_TRACKABLE = "not trackable"  # an item no source follows, before its reason


def part_of(host: str) -> str:
    """A riding item's label: its facts are those of the item it ships with."""
    return f"{PART_OF} {host}"


def not_trackable(reason: str | None) -> str:
    """``not trackable: closed SDK; no version list of its own``."""
    return f"{NOT_TRACKABLE}: {reason}" if reason else NOT_TRACKABLE


NO_SOURCE = "no source can fetch it yet"  # a homepage-only item that gives no reason


def no_source_note(homepage: str | None) -> str:
    """The audit's note on a homepage-only item that gives no reason."""
    return f"listed, not checked: {NO_SOURCE}; homepage {homepage}"


def riding_count(count: int) -> str:
    """``10 part of another item`` (the report's headline)."""
    return f"{count} part of another item"


_LAYER_TITLES = {
    "framework": "Frameworks",
    "compiler": "Compilers and graph IR",
    "kernel programming": "Kernel programming",
    "kernel library": "Kernel libraries",
    "serving": "Serving engines",
    "distributed serving": "Distributed serving",
    "platform sdk": "Platform SDKs",
}


def layer_title(layer: str) -> str:
    """A layer as a heading of the Explorer's project cards (``""``: items of no layer)."""
    return _LAYER_TITLES.get(layer, layer.capitalize()) if layer else "Other items"


def item_counts(items: int, riding: int, not_trackable: int) -> str:
    """``84 items: 58 tracked, 10 part of another item, 16 not trackable``; ``11 tracked
    projects`` when every item is tracked."""
    if not (riding or not_trackable):
        return plural(items, "tracked project")
    tracked = items - riding - not_trackable
    return (
        f"{plural(items, 'item')}: {tracked} tracked, {riding_count(riding)}, "
        f"{not_trackable} {NOT_TRACKABLE}"
    )


def invalid_config(path: str, problems: Sequence[str], total: int) -> str:
    """What ``crawler check`` says of a file that does not validate: every problem listed,
    one a line (``FILE:LINE: what is wrong (did you mean …?)``), then how many in all."""
    if total == 1:
        return problems[0]
    return "\n".join([*problems, f"{path}: {plural(total, 'problem')}: fix them and run "
                      "`crawler check` again"])  # fmt: skip


def coverage_line(cov: Coverage) -> str:
    """``84 items: 58 tracked, 10 part of another item, 16 not trackable; 17 snapshot rows;
    50 pages watched, 40 give records on 8 platforms (AMD GPU, …)``."""
    parts = [f"{cov.tracked} tracked", riding_count(cov.riding),
             f"{cov.not_trackable} not trackable"]  # fmt: skip
    if cov.no_source:
        parts.append(f"{cov.no_source} with neither a source nor a reason")
    platforms = f" ({', '.join(cov.platforms)})" if cov.platforms else ""
    rows = f"{plural(cov.snapshot_rows, 'snapshot row')}; " if cov.snapshot_rows else ""
    return (
        f"{plural(cov.items, 'item')}: {', '.join(parts)}; {rows}"
        f"{plural(cov.watched_pages, 'page')} watched, {cov.evidence_pages} give records on "
        f"{plural(len(cov.platforms), 'platform')}{platforms}"
    )


# -- change kinds -------------------------------------------------------------------------------

_KIND_NAMES = {
    "new_release": "new release",
    "new_prerelease": "new pre-release",
    "release_removed": "release removed",
    "new_tag": "new tag",
    "new_commit": "new commit",
    "new_package_version": "new package version",
    "license_changed": "license changed",
    "license_text_changed": "license text changed",
    "license_files_changed": "license files changed",
    "repo_moved": "repository moved",
    "repo_archived": "repository archived",
    "project_added": "project added",
    "project_removed": "project removed",
    "table_changed": "support table changed",
    "pin_changed": "version pin changed",
    "page_changed": "page changed",
    "link_moved": "link moved",
    "link_broken": "link broken",
    "upstream_dormant": "upstream dormant",
    "upstream_superseded": "upstream superseded",
    "license_noassertion": "no license verdict (NOASSERTION)",
    "no_tagged_release": "no tagged release",
    "channel_mismatch": "package and release disagree",
    "stale": "stale",
}


def kind_name(kind: str) -> str:
    """A change or flag kind in prose: ``license_text_changed`` → ``license text changed``."""
    return _KIND_NAMES.get(kind, kind.replace("_", " "))


# -- the facts every output shows ---------------------------------------------------------------


def forge_verdict(forge_label: str | None, verdict: str | None) -> str:
    """What the forge's license detection said: ``MIT per GitHub``, ``NOASSERTION per Gitee``,
    ``no verdict from GitLab``."""
    who = forge_label or "the forge"
    return f"{verdict} per {who}" if verdict else f"no verdict from {who}"


def prerelease_mark(prerelease: bool, candidate: bool = False) -> str:
    """`` (release candidate)`` for an rc, `` (pre-release)`` for another pre-release."""
    if candidate:
        return " (release candidate)"
    return " (pre-release)" if prerelease else ""


def version_mark(name: str | None, prerelease: bool) -> str:
    """The mark beside a version a row shows, the same in every output: `` (release
    candidate)`` for ``v0.33.0rc3``, `` (pre-release)`` for ``v1.40a4`` or ``2.0.0.dev4``,
    nothing for a final release."""
    return prerelease_mark(prerelease, is_release_candidate(name or ""))


def version_date(published: str | date | datetime | None) -> str:
    """The date beside a latest version, a pre-release's too: ``2026-11-30``, or ``—``."""
    return day(published) or NO_DATE


def changed_since(since: str | date | datetime | None) -> str:
    """A card's or a matrix row's highlight: ``changed since 2026-12-04``."""
    return f"changed since {day(since)}" if since else "changed"


def changes_since_title(count: int, audit_id: int, since: str, exported: bool) -> str:
    """The Explorer's list of changes: since the previous export, or (a first export) since
    the audit before the exported one."""
    what = f"the export of audit #{audit_id}" if exported else f"audit #{audit_id}"
    return f"Changed since {what} ({since}): {plural(count, 'change')}"


def no_change_since(audit_id: int, since: str, exported: bool) -> str:
    what = f"the export of audit #{audit_id}" if exported else f"audit #{audit_id}"
    return f"No change since {what} ({since})."


EXTRA_TEXT = "plus extra text"  # a license file with text beyond the license's own
ALTERED_TEXT = "with altered text"  # a license file whose wording differs from the license's
VERDICT_WORDS = {  # our reading's verdict (crawler.model.LicenseVerdict) in a reviewer's words
    "exact": "the exact license text",
    "match_with_extra_text": f"the license text {EXTRA_TEXT}",
    "modified": "the license text with altered wording",
    "unknown": "a text it does not recognise",
}


def verdict_words(verdict: str | None) -> str:
    """``match_with_extra_text`` → ``the license text plus extra text``."""
    if verdict is None:
        return "no root license file was read"
    return VERDICT_WORDS.get(verdict, verdict)


def with_extra_text(license_: str, path: str, altered: bool = False) -> str:
    """``MIT plus extra text in LICENSE`` (``… with altered text in …``)."""
    return f"{license_} {ALTERED_TEXT if altered else EXTRA_TEXT} in {path}"


def stale_marker(checked_on: str | date | datetime | None) -> str:
    """The stale marker: facts the audit could not read, shown with the day they were read."""
    shown = day(checked_on)
    return f"stale: facts of {shown}" if shown else "not checked yet"


def followed(summary: Summary) -> int:
    """The projects a source follows: neither not trackable nor riding on another item."""
    return summary.projects - summary.untracked - summary.riding


def reached_nothing(summary: Summary) -> bool:
    """An audit that read no project at all (offline, every source unreachable): a catalog
    that also lists items no source follows reached nothing just the same."""
    return followed(summary) > 0 and not summary.checked


def summary_line(status: str, summary: Summary) -> str:
    """``complete: 3 changes, 0 flags, 1 error, 0 deferred`` (``, 2 stale`` when some are); an
    audit that reached nothing says so instead of reading like a quiet night."""
    parts = [plural(summary.changes, "change"), plural(summary.flags, "flag"),
             plural(summary.errors, "error"), f"{summary.deferred} deferred"]  # fmt: skip
    if summary.stale:
        parts.append(f"{summary.stale} stale")
    line = f"{status}: " + ", ".join(parts)
    if reached_nothing(summary):
        line += (
            f"; reached nothing: none of the {plural(followed(summary), 'project')} could be "
            f"read ({why_nothing(summary)})"
        )
    elif summary.checked_too_little():
        line += f"; {checked_too_little(summary)}"
    return line


def why_nothing(summary: Summary) -> str:
    """Why an audit read no project: every source unreachable, or every project deferred."""
    if summary.errors or not summary.deferred:
        return "offline, or every source unreachable"
    return "every one deferred: a rate limit spent, or a source that asked to wait"


def checked_too_little(summary: Summary) -> str:
    """``checked only 1 of 20 projects (fewer than a tenth): see "Not checked"``."""
    trackable = summary.projects - summary.untracked
    return (
        f"checked only {summary.checked} of {plural(trackable, 'project')} (fewer than "
        f"{MIN_CHECKED_SHARE:.0%}): see \"Not checked\""
    )


def pending_phrase(pending: Sequence[PendingEntry]) -> str | None:
    """``3 new tonight, 7 pending since 2026-11-28`` (None when nothing is pending)."""
    if not pending:
        return None
    new = sum(1 for item in pending if item.new)
    oldest = min(item.first_seen for item in pending)
    return f"{new} new tonight, {len(pending)} pending since {oldest}"


PENDING_HEADING = "Pending until the catalog takes them"


def pending_change(item: PendingEntry) -> str:
    """What a pending change says, before → after where it replaced something: ``v1.0 →
    v1.1``, ``MIT → Apache-2.0``; else what the crawl says (a first release, an edited text)."""
    return f"{item.before} → {item.value}" if item.before else item.value


def oldest_first(pending: Sequence[PendingEntry]) -> list[PendingEntry]:
    """The report lists pending changes newest first; a notification names the ones that
    have waited longest first (by the audit that first saw them, then as found)."""
    return [item for _index, item in sorted(
        enumerate(pending), key=lambda pair: (pair[1].first_audit, -pair[0])
    )]  # fmt: skip


def pending_of(report: Report) -> tuple[PendingEntry, ...]:
    return () if isinstance(report.pending, msgspec.UnsetType) else report.pending


def late_delivery(report: Report) -> str:
    """What a report delivered by a later run says first: which night it belongs to."""
    return (
        f"sent late: audit #{report.audit.id} of the night of {day(report.audit.started_at)} "
        "finished, but its run stopped before sending this"
    )


def late_mark(report: Report) -> str:
    """The mark before a late notification's title: ``[late: night of 2026-11-30]``."""
    return f"[late: night of {day(report.audit.started_at)}]"


def audit_line(report: Report, status: str | None = None) -> str:
    """The one line about an audit, on the terminal and as a notification's title:
    ``audit #7 complete: 3 changes, 0 flags, 1 error, 0 deferred; 1 new tonight, 4 pending
    since 2026-11-28``."""
    line = f"audit #{report.audit.id} {summary_line(status or report.audit.status, report.summary)}"
    phrase = pending_phrase(pending_of(report))
    return line + (f"; {phrase}" if phrase else "")


# -- license readings ---------------------------------------------------------------------------

_VERB = {
    "restriction": "adds a restriction",
    "condition": "adds a condition",
    "grant": "adds a permission",
    "other": "adds text",
}
_ALTERED_VERB = {
    "restriction": "changes the wording to a restriction",
    "condition": "changes the wording to a condition",
    "grant": "changes the wording to a permission",
    "other": "changes the wording",
}


def finding_verb(span: TextSpan, altered: bool = False) -> str:
    """What the span does, in a reviewer's words: "adds a restriction", "changes the wording"…"""
    return (_ALTERED_VERB if altered else _VERB)[span.effect or "other"]


def finding_sentence(span: TextSpan, altered: bool = False) -> str:
    """The reviewer's sentence for one span of extra text (or, with ``altered``, of text that
    replaces template words), e.g. 'adds a restriction: “This grant does not extend to
    government agencies.” (line 5)'. Plain text: the quote is upstream text, capped but not
    escaped, so a Markdown or HTML writer escapes it."""
    from crawler.analysis.license_clauses import quote  # its patterns: when a span is worded

    where = line_range(span.start_line, span.end_line)
    return f"{finding_verb(span, altered)}: “{quote(span.text)}” ({where})"


def license_findings(analysis: LicenseAnalysis) -> list[str]:
    """The reviewer's sentences for an analysis, restrictions and conditions first, then
    the other extra and altered text in file order (see ``finding_sentence``)."""
    spans = [(s, False) for s in analysis.extra_text] + [(s, True) for s in analysis.altered_text]
    spans.sort(key=lambda p: (not p[0].restriction, p[0].start_line))
    return [finding_sentence(s, altered) for s, altered in spans]


def _ranges(spans: Sequence[TextSpan]) -> str:
    return ", ".join(line_range(s.start_line, s.end_line) for s in spans)


def noassertion_explanation(
    analysis: LicenseAnalysis, forge: str = "GitHub's licensee", *, judged: bool = True
) -> str:
    """Why the forge (``forge``: who said it) answered NOASSERTION, in one or two sentences,
    with the ids; ``judged`` off: the forge gave no verdict at all (a git server)."""
    texts = [m for m in analysis.matches if m.verdict != "reference"]
    refs = [f"{m.spdx_id} (line {m.start_line})" for m in analysis.matches
            if m.verdict == "reference"]  # fmt: skip
    if analysis.verdict == "unknown":
        if refs:
            return f"No known license text found; the file only names {', '.join(refs)}."
        return "No known license text found: unknown or custom license, review the file."
    named = ", ".join(m.spdx_id for m in texts)
    several = f" ({len(texts)} licenses in one file)" if len(texts) > 1 else ""
    also = f"; it also names {', '.join(refs)}" if refs else ""
    if analysis.verdict == "modified":
        where = _ranges(analysis.altered_text)
        return (f"Modified {named} text{several}, {analysis.coverage:.0%} of the template: "
                f"altered {where or 'by omission (see notes)'}{also}.")  # fmt: skip
    if analysis.verdict == "match_with_extra_text":
        return (f"Known license {named}{several} plus extra text at "
                f"{_ranges(analysis.extra_text)}{also}.")  # fmt: skip
    missed = ("does not recognise it in this form" if judged
              else "gives no license verdict of its own")  # fmt: skip
    return (f"Standard {named} text{several}, word for word apart from title, copyright and "
            f"SPDX lines; {forge} {missed}{also}.")  # fmt: skip


def why_forge_differs(
    analysis: LicenseAnalysis, label: str, forge: str | None, ours: str | None, agree: bool
) -> str:
    """Why the forge's verdict and our reading differ, for the report's license table."""
    why = noassertion_explanation(analysis, label, judged=forge is not None)
    if forge in (None, NOASSERTION):
        return why
    if not agree:
        return f"{label} reads {forge}, the file reads {ours or 'no known license'}: {why}"
    if analysis.verdict in ("match_with_extra_text", "modified"):
        return f"{label} reads {forge} and ignores the rest: {why}"
    return why


def render_analysis(analysis: LicenseAnalysis, path: str) -> str:
    """Plain-text report of one analysis, for the ``crawler license`` command."""
    head = ", ".join(analysis.spdx_ids) or "no license found"
    out = [f"{path}: {head} — {analysis.verdict} (coverage {analysis.coverage:.1%})"]
    out += [f"  finding: {f}" for f in license_findings(analysis)]  # what a reviewer reads first
    if analysis.expression:
        out.append(f"  expression: {analysis.expression}")
    for m in analysis.matches:
        out.append(
            f"  {m.spdx_id:<24} {line_range(m.start_line, m.end_line)}  "
            f"{m.verdict}" + ("" if m.verdict == "reference" else f" {m.coverage:.1%}")
        )
    if analysis.copyright_holders:
        out.append("  copyright holders:")
        out += [f"    {h}" for h in analysis.copyright_holders]
    for title, spans in (("extra text", analysis.extra_text),
                         ("altered text", analysis.altered_text)):  # fmt: skip
        for s in spans:
            out.append(f"  {title}, {line_range(s.start_line, s.end_line)}:")
            out += [f"    | {ln}" for ln in s.text.split("\n")]
    if analysis.notes:
        out.append("  notes:")
        out += [f"    - {n}" for n in analysis.notes]
    if analysis.verdict != "exact":
        out.append(f"  why not a plain license: {noassertion_explanation(analysis)}")
    return "\n".join(out) + "\n"


# -- the catalog's license column ---------------------------------------------------------------


def license_label(facts: LicenseLabelFacts | None, names: Names) -> str | None:
    """The catalog's license column: the forge's verdict, corrected by our reading."""
    if facts is None:
        return None
    forge, ours = facts.forge, facts.detected
    if forge and forge != NOASSERTION:
        return f"{forge} {EXTRA_TEXT}" if facts.extra_text else forge
    if ours:  # the forge said NOASSERTION, or nothing: our reading names the license
        suffix = f" {EXTRA_TEXT}" if facts.extra_text else ""
        verdict = forge_verdict(label_of(names, facts.forge_name), forge)
        return f"{verdict}; text reads {ours}{suffix}"
    if forge == NOASSERTION:
        return NOASSERTION
    if not facts.license_file and facts.forge_answered:
        return "none found"
    return None


def _label(facts: Mapping[str, Any] | None, names: Names) -> str | None:
    return license_label(LicenseLabelFacts(**facts), names) if facts else None


# -- changes and flags --------------------------------------------------------------------------

MAX_LISTED = 3  # items named in a one-line summary; the rest are counted


def _listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_LISTED])
    more = len(items) - MAX_LISTED
    return f"{shown}, +{more} more" if more > 0 else shown


def _table_summary(details: Mapping[str, Any]) -> str:
    if details.get("items"):
        return _items_summary(details)
    key_columns = tuple(details.get("key_columns") or ())

    def row_label(row: Mapping[str, str]) -> str:
        return " / ".join(row.get(c, "") for c in key_columns) or " / ".join(row.values())

    parts = []
    for what, field in (("added", "columns_added"), ("removed", "columns_removed")):
        if details.get(field):
            parts.append(f"{plural(len(details[field]), 'column')} {what} "
                         f"({_listing(details[field])})")  # fmt: skip
    for what, field in (("added", "rows_added"), ("removed", "rows_removed")):
        if details.get(field):
            labels = [row_label(r) for r in details[field]]
            parts.append(f"{plural(len(labels), 'row')} {what} ({_listing(labels)})")
    cells = details.get("cells_changed") or []
    if cells:
        labels = [
            f"{' / '.join(c['key'].values())} {c['column']}: {c['before']!r} → {c['after']!r}"
            for c in cells
        ]
        parts.append(f"{plural(len(cells), 'cell')} changed ({_listing(labels)})")
    return f"table {details.get('table')!r}: " + "; ".join(parts)


# the parts of a table's change the report lists under its line, in this order
TABLE_PARTS = ("rows_added", "rows_removed", "items_reworded", "columns_added", "columns_removed")


def table_part_name(part: str, details: Mapping[str, Any]) -> str:
    """``rows added``; for a list read as a table, ``items added``, ``items reworded``."""
    name = part.replace("_", " ")
    return name.replace("rows ", "items ") if details.get("items") else name


def table_part_entry(part: str, entry: Any, details: Mapping[str, Any]) -> str:
    """One entry of a part: a row as its cells; an item as its text and label, a reworded
    item as ``old → new``."""
    if part == "items_reworded" and isinstance(entry, Mapping):
        return f"{entry.get('before')} → {entry.get('after')}"
    if details.get("items") and isinstance(entry, Mapping):
        label = entry.get("Label")
        return f"{entry.get('Item')}" + (f" (under {label})" if label else "")
    return str(entry)


def _items_summary(details: Mapping[str, Any]) -> str:
    """A list read as a table, in the words of a list: items added, removed, reworded."""

    def item(row: Mapping[str, str]) -> str:
        label = row.get("Label")
        return f"{row.get('Item', '')!r}" + (f" under {label!r}" if label else "")

    parts = []
    for what, field in (("added", "rows_added"), ("removed", "rows_removed")):
        if details.get(field):
            shown = [item(r) for r in details[field]]
            parts.append(f"{plural(len(shown), 'item')} {what} ({_listing(shown)})")
    reworded = details.get("items_reworded") or []
    if reworded:
        shown = [f"{r['before']!r} → {r['after']!r}" for r in reworded]
        parts.append(f"{plural(len(shown), 'item')} reworded ({_listing(shown)})")
    cells = details.get("cells_changed") or []
    if cells:
        shown = [
            f"{' / '.join(c['key'].values())!r} {c['column'].lower()}: "
            f"{c['before']!r} → {c['after']!r}"
            for c in cells
        ]
        parts.append(f"{plural(len(cells), 'item')} changed ({_listing(shown)})")
    return f"list {details.get('table')!r}: " + "; ".join(parts)


def change_summary(change: Change, names: Names) -> str:
    """One line saying what changed, from the change's facts."""
    kind, details = change.kind, change.details
    if kind in (ChangeKind.NEW_RELEASE, ChangeKind.NEW_PRERELEASE):
        pre = version_mark(str(change.after), kind is ChangeKind.NEW_PRERELEASE)
        return f"{change.after}{pre} published {details.get('published_at') or 'undated'}"
    if kind is ChangeKind.RELEASE_REMOVED:
        return f"{change.before} is no longer listed as a release"
    if kind is ChangeKind.NEW_TAG:
        sha = str(details.get("sha") or "")[:12]
        return f"tag {change.after} ({sha}) {details.get('date') or ''}".strip()
    if kind is ChangeKind.NEW_COMMIT:
        when = f" ({details['date']})" if details.get("date") else ""
        return f"default branch moved to {str(change.after)[:12]}{when}"
    if kind is ChangeKind.NEW_PACKAGE_VERSION:
        pre = " (pre-release)" if details.get("prerelease") else ""
        when = f" uploaded {details['uploaded_at']}" if details.get("uploaded_at") else ""
        label = label_of(names, details.get("registry"))
        return f"{label} {details.get('package')} {change.after}{pre}{when}"
    if kind is ChangeKind.LICENSE_CHANGED:
        before = _label(details.get("label_before"), names)
        after = _label(details.get("label_after"), names)
        return f"license {before} → {after}"
    if kind is ChangeKind.LICENSE_TEXT_CHANGED:
        still = _label(details.get("label_after"), names)
        return f"{details.get('path')} text changed; license still {still}"
    if kind is ChangeKind.LICENSE_FILES_CHANGED:
        parts = [f"{what} {', '.join(details[what])}" for what in ("added", "removed", "changed")
                 if details.get(what)]  # fmt: skip
        return "license files " + "; ".join(parts)
    if kind is ChangeKind.REPO_MOVED:
        what = f"{change.before} → {change.after}" if details.get("moved") else str(change.after)
        note = (" (a different repository id: deleted and re-created?)"
                if details.get("replaced") else "")  # fmt: skip
        key = key_of(names, details.get("forge"))
        line = details.get("line")
        place = f"at sources.yaml line {line}" if line else "in sources.yaml"
        return f"repository moved {what}{note}; update '{key}' {place}"
    if kind is ChangeKind.REPO_ARCHIVED:  # a tracked repository, or one a link names
        return f"{details.get('repo')} is archived (read-only upstream){_places(details)}"
    if kind in _HEALTH_KINDS:
        return _link_summary(change)
    if kind is ChangeKind.PROJECT_ADDED:
        return f"now tracking {change.after}" if change.after else "now tracked"
    if kind is ChangeKind.PROJECT_REMOVED:
        return "no longer listed in sources.yaml"
    page = details.get("page")
    if kind is ChangeKind.TABLE_CHANGED:
        return f"{page}: {_table_summary(details)}"
    if kind is ChangeKind.PIN_CHANGED:
        return f"{page}: pin {details.get('pin')!r} {change.before!r} → {change.after!r}"
    return f"{page}: watched text changed: {str(details.get('diff') or '')[:200]}"


_HEALTH_KINDS = (
    ChangeKind.LINK_MOVED, ChangeKind.LINK_BROKEN, ChangeKind.UPSTREAM_DORMANT,
    ChangeKind.UPSTREAM_SUPERSEDED,
)  # fmt: skip


def _places(details: Mapping[str, Any]) -> str:
    where = [str(w) for w in details.get("where") or ()]
    return f" (cited in {_listing(where)})" if where else ""


def _link_summary(change: Change) -> str:
    """A link finding or a dormant upstream, and what to do about it."""
    details = change.details
    if change.kind is ChangeKind.UPSTREAM_DORMANT:
        released = details.get("last_release")
        release = f"newest release or tag {day_of(released)}" if released else "no release or tag"
        return (
            f"{details.get('repo') or 'the repository'}: no commit since "
            f"{day_of(details.get('last_commit'))} and {release} "
            f"({plural(details.get('days') or 0, 'day')}): suggested maturity 'dormant'"
        )
    if change.kind is ChangeKind.UPSTREAM_SUPERSEDED:
        url = details.get("successor_url")
        page = f" — page {url}" if url and url != change.after else ""
        then = (
            "suggested maturity 'superseded'"
            if details.get("stopped")
            else "point the catalog at its new home"
        )  # a URL stands between spaces: a renderer's code span takes no punctuation with it
        said = "its README says" if details.get("said_in") == "readme" else "its description says"
        return (
            f"{details.get('repo')}: {said}: {details.get('phrase')} "
            f"{change.after}{page} — {then}"
        )
    if change.kind is ChangeKind.LINK_MOVED:
        where = _places(details)
        return f"{change.before} moved permanently to {change.after}{where}: cite the new URL"
    since = day_of(details.get("failing_since"))
    seen = details.get("last_ok")
    working = f"; last seen working {day_of(seen)}" if seen else "; never seen working"
    if details.get("outcome") == "unreachable":
        what = f"unreachable since {since}: {details.get('reason') or 'no answer'}"
    else:
        what = f"broken since {since}: {details.get('reason') or 'not found'}"
    return f"{change.before} {what}{working}{_places(details)}"


def day_of(stamp: Any) -> str:
    """``day`` of a stored timestamp, or ``an unknown day``."""
    return (day(stamp) if isinstance(stamp, str) else None) or "an unknown day"


def link_not_reported(outcome: str, reason: str, since: str | None) -> str:
    """A link that failed tonight without being a finding, or could not be checked."""
    if outcome == "error":
        return f"could not be checked: {reason}"
    return f"failing since {since or 'tonight'}, not reported yet: {reason}"


def link_check_line(item: Mapping[str, Any]) -> str:
    """One link of ``crawler links``: where it is cited, the URL, what it answered."""
    where = ", ".join(item.get("where") or ())
    outcome = item.get("outcome")
    if outcome == "moved":
        said = f"moved permanently to {item.get('moved_to')}"
    elif outcome == "archived":
        said = "the repository is archived (read-only upstream)"
    elif outcome == "ok":
        said = "ok"
    elif outcome == "error":
        said = f"could not be checked: {item.get('reason')}"
    else:
        said = f"failed: {item.get('reason')}"
    return f"{where}: {item.get('url')}: {said}"


def link_check_summary(summary: Mapping[str, int]) -> str:
    """``12 links checked: 10 ok, 1 moved, 1 failed, 0 could not be checked``."""
    archived = f"{summary['archived']} archived, " if summary.get("archived") else ""
    return (
        f"{plural(summary.get('checked', 0), 'link')} checked: {summary.get('ok', 0)} ok, "
        f"{summary.get('moved', 0)} moved, {archived}{summary.get('failing', 0)} failed, "
        f"{summary.get('error', 0)} could not be checked"
    )


def link_cost(usage: Mapping[str, Any]) -> str:
    """What tonight's link checks cost: ``12 links checked (9 requests, 7 unchanged (304), 3
    answered by the forge, 2 by the forges' APIs in 1 request); 40 left for later nights``."""
    by_api = int(usage.get("answered_by_forge_api") or 0)
    api = (
        f", {by_api} by the forges' APIs in "
        f"{plural(int(usage.get('forge_api_requests') or 0), 'request')}"
        if by_api
        else ""
    )
    said = (
        f"{plural(int(usage.get('checked') or 0), 'link')} checked "
        f"({plural(int(usage.get('requests') or 0), 'request')}, "
        f"{usage.get('not_modified') or 0} unchanged (304), "
        f"{usage.get('answered_by_forge') or 0} answered by the forge{api})"
    )
    waiting = int(usage.get("left_for_later") or 0)
    skipped = int(usage.get("excluded") or 0)
    return (
        said
        + (f"; {waiting} left for later nights" if waiting else "")
        + (f"; {skipped} excluded (settings.links_exclude)" if skipped else "")
    )


def last_checked(since: datetime | None, now: datetime) -> str:
    """``last checked 2026-11-20 (10 days ago)``."""
    if since is None:
        return "never checked yet"
    days = (now - since).days
    ago = "today" if days == 0 else f"{plural(days, 'day')} ago"
    return f"last checked {day(since)} ({ago})"


def flag_detail(flag: Flag, names: Names, analysis: LicenseAnalysis | None = None) -> str:
    """One line saying what the flag is about, from its facts (``analysis``: the project's
    reading of its license file, for a NOASSERTION)."""
    details = flag.details
    if flag.kind is FlagKind.LICENSE_NOASSERTION:
        label = label_of(names, details.get("source"))
        detail = forge_verdict(label, NOASSERTION)
        if analysis is not None:
            detail += f"; {noassertion_explanation(analysis, label)}"
        return detail
    if flag.kind is FlagKind.NO_TAGGED_RELEASE:
        forge = label_of(names, details.get("forge"))
        ref = details.get("ref")
        when = f" ({details['date']})" if details.get("date") else ""
        configured = f" (track: {details.get('track')}; releases not checked)"
        asked = bool(details.get("releases_checked"))
        if details.get("tracked_by") == "tag":
            if asked:
                return f"no {forge} release; tracked by tag {ref}{when}"
            return f"tracked by tag {ref}{when}{configured}"
        if details.get("tracked_by") == "commit":
            if asked:
                return f"no {forge} release or tag; tracked by commit {ref}{when}"
            return f"tracked by commit {ref}{when}{configured}"
        return f"no {forge} release, tag or commit found"
    if flag.kind is FlagKind.CHANNEL_MISMATCH:
        label = label_of(names, details.get("registry"))
        forge = label_of(names, details.get("forge"))
        problem = details.get("problem")
        if problem == "version_ahead":
            return (
                f"{label} has {details.get('package_version')} but the newest {forge} "
                f"release is {details.get('release')} (published without a release?)"
            )
        if problem == "release_without_package":
            return (f"{forge} release {details.get('release')} "
                    f"({day(details.get('published_at'))}) has no {label} upload after "
                    f"{plural(int(details.get('days') or 0), 'day')}; newest there is "
                    f"{details.get('package_version')}")  # fmt: skip
        return (f"{label} declares license {details.get('declared')}, the repository's "
                f"license file reads {details.get('detected')}")  # fmt: skip
    since = details.get("last_checked")
    ago = (f"last checked {day(since)} ({plural(int(details.get('days') or 0), 'day')} ago)"
           if since else "never checked yet")  # fmt: skip
    return (
        f"not checked for {plural(int(details.get('days') or 0), 'day')}: {ago}; the "
        "catalog shows its last good state"
    )


# -- the terminal ------------------------------------------------------------------------------


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def page_preview(
    data: Mapping[str, Any], source: str, table_selector: str | None, heading: str | None
) -> str:
    """``crawler page`` on a terminal: the tables found (``preview_page_json``'s answer), a
    KEY=VALUE file's keys, or the table (or list) selected as an aligned table, and the pins."""
    lines: list[str] = []
    form = data.get("form")
    if "keys" in data:
        keys: Mapping[str, str] = data["keys"]
        lines.append(f"{plural(len(keys), 'key')} in {source} (read as {form}):")
        lines += [f"  {name} = {value}" for name, value in keys.items()]
        if keys:
            lines.append("Watch them with 'pins: all', or a list of keys: 'pins: [KEY, ...]'.")
    elif "tables" in data:
        tables = data["tables"]
        found = f"{plural(len(tables), 'table')} in {source} (read as {form}):"
        lines.append(found if tables else f"No table in {source} (read as {form}).")
        for info in tables:
            under = f'under "{info["heading"]}"' if info["heading"] else "before any heading"
            under = "the file's one table" if form in ("csv", "tsv") else under
            rows = "too many rows" if info["row_count"] < 0 else plural(info["row_count"], "row")
            lines.append(f"  [{info['index']}] {under}, {rows}: {' | '.join(info['columns'])}")
            if info["selector"]:
                lines.append(f"      selector: {info['selector']}")
        if tables and form in ("csv", "tsv"):
            lines.append("Choose the columns that identify a row with --key COLUMN.")
        elif tables:
            lines.append("Choose one with --heading TEXT or --table SELECTOR, and --key COLUMN.")
        if form == "text":
            lines.append("A text file is read for pattern pins: 'pins: {name: regex}'.")
        elif form not in ("csv", "tsv"):
            lines.append(
                "Or read the lists under a heading as a table: --heading TEXT --items list "
                "(a 'Label: a, b and c.' sentence: --items enumeration --label Label)."
            )
    if "table" in data:
        lines += _preview_table(data["table"], source, table_selector, heading)
    for name, value in (data.get("pins") or {}).items():
        lines.append(f"pin {name}: {value if value is not None else '(not found)'}")
    return "\n".join(lines)


def _preview_table(
    table: Mapping[str, Any], source: str, table_selector: str | None, heading: str | None
) -> list[str]:
    lines: list[str] = []
    where = (
        f"selector `{table_selector}`" if table_selector
        else f"heading {heading!r}" if heading else "the page"
    )  # fmt: skip
    if table.get("items"):
        labels = f" labelled {', '.join(map(repr, table['labels']))}" if table["labels"] else ""
        count = plural(len(table["rows"]), "item")
        lines.append(f"{table['items'].capitalize()} items at {where}{labels} in {source}: {count}")
    else:
        keyed = f", keyed by {', '.join(table['key_columns'])}" if table["key_columns"] else ""
        lines.append(f"Table at {where} in {source}: {plural(len(table['rows']), 'row')}{keyed}")
    columns: list[str] = table["columns"]
    cells = [columns] + [[row[c] for c in columns] for row in table["rows"]]
    widths = [min(60, max(len(r[i]) for r in cells)) for i in range(len(columns))]
    for n, row in enumerate(cells):
        padded = (_clip(v, w).ljust(w) for v, w in zip(row, widths, strict=True))
        lines.append(" | ".join(padded).rstrip())
        if n == 0:
            lines.append("-+-".join("-" * w for w in widths))
    return lines


# -- crawler prune ------------------------------------------------------------------------------

_PRUNED = {
    "audits": ("audit", "audits"),
    "observations": ("observation", "observations"),
    "fetch_errors": ("fetch error", "fetch errors"),
    "snapshots": ("snapshot", "snapshots"),
    "project_sets": ("project list", "project lists"),
    "http_cache": ("HTTP cache entry", "HTTP cache entries"),
}


def prune_lines(
    removed: Mapping[str, int], kept: Sequence[int], keep_days: int, cutoff: datetime,
    dry_run: bool,
) -> list[str]:  # fmt: skip
    """What ``crawler prune`` removed (or would) and the audits it kept, e.g. ``removed what
    is older than 7 days (started before 2026-11-23T03:00:00Z) and nothing still needs: 1
    audit, 3 observations, …`` then ``kept 3 audits (recent or still needed): #1, #3, #4``.
    ``--keep-days 0`` is "older than now": everything but what is still needed."""
    verb = "would remove" if dry_run else "removed"
    when = moment(cutoff.replace(microsecond=0))
    if keep_days == 0:
        age = f"everything older than now ({when}) that nothing still needs"
    else:
        days = plural(keep_days, "day")
        age = f"what is older than {days} (before {when}) and nothing still needs"
    counts = ", ".join(
        plural(n, *_PRUNED.get(name, (name, name))) for name, n in removed.items()
    )
    why = "still needed" if keep_days == 0 else "recent or still needed"
    shown = ", ".join(f"#{i}" for i in kept[:20]) + (", …" if len(kept) > 20 else "")
    kept_line = f"kept {plural(len(kept), 'audit')} ({why})" + (f": {shown}" if kept else "")
    return [f"{verb} {age}: {counts}", kept_line]


# -- errors grouped by cause: an offline night is one line, not one per project ---------------

KEPT = "the last good state, if any, is kept"  # after an error, in every output
NAMED_IN_A_LINE = 50  # projects named in one grouped line; the rest are counted
NOT_ATTEMPTED = "not attempted"  # a project the audit did not try: its source was unreachable
TRIED = "tried and failed"  # a project the audit tried, whose requests got no usable answer
_NOT_ATTEMPTED_PREFIX = NOT_ATTEMPTED + ": "
_RETRY_TAIL = re.compile(r" \(gave up after \d+ attempts?, [\d.]+s of waiting\)")
_NO_ANSWER = re.compile(r"^no answer from [^:]+: (?P<reason>.*?)(?: \((?:[A-Za-z]+)\))?$")
_UNREACHABLE = re.compile(
    r"^[^()]+ unreachable \(\d+ (?:requests|projects) in a row got no answer\)$"
)


@dataclass(frozen=True)
class ErrorGroup:
    """The projects whose errors share one cause, and whether the audit tried them."""

    cause: str
    attempted: bool
    projects: tuple[str, ...]
    first_message: str  # the first project's own message (shown when the group is of one)


def error_cause(message: str, url: str) -> tuple[str, bool]:
    """An error message → its cause, without what differs from project to project (the
    seconds waited, the retries), and whether the project was tried at all:
    ``no answer from GitHub: connection refused (ConnectionError) (gave up after 4 attempts,
    8.7s of waiting)`` → ``could not reach api.github.com: connection refused``, tried."""
    attempted = not message.startswith(_NOT_ATTEMPTED_PREFIX)
    text = message if attempted else message[len(_NOT_ATTEMPTED_PREFIX) :]
    if not attempted and "; last: " in text and text.endswith(")"):
        text = text.split("; last: ", 1)[1][:-1]  # the answer the last tried project got
    text = _RETRY_TAIL.sub("", text)
    host = urlsplit(url).hostname if url else None
    found = _NO_ANSWER.match(text)
    if found and host:
        return f"could not reach {host}: {found['reason']}", attempted
    if _UNREACHABLE.match(text) and host:
        return f"could not reach {host}: no answer", attempted
    return text, attempted


def error_groups(errors: Iterable[tuple[str, str, str]]) -> list[ErrorGroup]:
    """(project, url, message) → the groups by cause, in the order first met; a project is
    named once in a group."""
    groups: dict[tuple[str, bool], tuple[list[str], str]] = {}
    for project, url, message in errors:
        key = error_cause(message, url)
        names, _first = groups.setdefault(key, ([], message))
        if project not in names:
            names.append(project)
    return [
        ErrorGroup(cause, attempted, tuple(names), first)
        for (cause, attempted), (names, first) in groups.items()
    ]


def named(projects: Sequence[str], cap: int | None = None) -> str:
    """``A, B, C`` (``A, B and 3 more`` past ``cap``)."""
    if cap is None or len(projects) <= cap:
        return ", ".join(projects)
    return ", ".join(projects[:cap]) + f" and {len(projects) - cap} more"


def error_group_line(group: ErrorGroup, cap: int | None = None) -> str:
    """``20 projects tried and failed: could not reach api.github.com: connection refused —
    P1, P2, …`` (``not attempted`` for the projects the audit did not try)."""
    state = TRIED if group.attempted else NOT_ATTEMPTED
    count = plural(len(group.projects), "project")
    return f"{count} {state}: {group.cause} — {named(group.projects, cap)}"


def read_state(groups: Sequence[ErrorGroup]) -> dict[str, str]:
    """project → ``tried and failed`` or ``not attempted`` (tried wins: a project with one
    error of each was tried)."""
    states: dict[str, str] = {}
    for group in groups:
        for project in group.projects:
            if group.attempted or project not in states:
                states[project] = TRIED if group.attempted else NOT_ATTEMPTED
    return states


def not_read_mark(state: str) -> str:
    """A card's mark when the last audit did not read its project."""
    return f"{state or 'not read'} in the last audit"
