"""What a notification says: whether to send, a short summary, the catalog issue's body. Pure.

Upstream strings (project names, change summaries) reach chat rooms and issues: they are
capped and escaped with the Markdown report's own helpers.
"""

from __future__ import annotations

from typing import Literal

from crawler.report.markdown import escape, link
from crawler.report.model import Report
from crawler.report.words import (
    KEPT,
    PENDING_HEADING,
    audit_line,
    checked_too_little,
    error_group_line,
    error_groups,
    kind_name,
    late_delivery,
    late_mark,
    oldest_first,
    pending_change,
    pending_of,
    pending_phrase,
    plural,
)

When = Literal["always", "changes", "errors"]
ISSUE_BODY_LIMIT = 65536  # GitHub refuses an issue or comment body longer than this
ISSUE_MARKER = "<!-- crawler:catalog-issue -->"  # finds the issue again whatever its title
MAX_LISTED = 10  # changes (and pending changes) listed in a chat message; the report has all
MAX_NAMED = 20  # projects named in one line of errors; the report names more


def should_notify(report: Report, when: When) -> tuple[bool, str]:
    """``always``; ``errors``: any error; ``changes``: any change, error or new flag. A flag
    raised by the previous audit too (a NOASSERTION seen every night, a project tracked by tag)
    does not send again, or ``changes`` would send every night; a stale project is new each
    night it stays unchecked."""
    errors = report.summary.errors
    if when == "always":
        return True, "notify.when is 'always'"
    if report.summary.checked_too_little():  # a night lost to a limit is not a quiet night
        return True, checked_too_little(report.summary)
    if when == "errors":
        if errors:
            return True, plural(errors, "error")
        return False, "no errors (notify.when is 'errors')"
    new_flags = sum(1 for f in report.flags if f.new)
    found = [
        text
        for n, text in (
            (report.summary.changes, plural(report.summary.changes, "change")),
            (new_flags, "1 new flag" if new_flags == 1 else f"{new_flags} new flags"),
            (errors, plural(errors, "error")),
        )
        if n
    ]
    if found:
        return True, ", ".join(found)
    standing = len(report.flags) - new_flags
    also = f"; {plural(standing, 'flag')} raised before" if standing else ""
    return False, f"no changes, new flags or errors (notify.when is 'changes'{also})"


def headline(report: Report, *, late: bool = False) -> str:
    """``crawler audit #7 complete: …``; a report a later run delivers says which night."""
    return f"crawler {late_mark(report) + ' ' if late else ''}{audit_line(report)}"


def summary_body(
    report: Report, report_link: str | None, report_path: str, *, late: bool = False
) -> str:
    """A short Markdown message: the headline's details, the first changes, where the report is."""
    lines: list[str] = [f"_{escape(late_delivery(report))}_", ""] if late else []
    for change in report.changes[:MAX_LISTED]:
        lines.append(
            f"- **{escape(change.project)}** {escape(kind_name(change.kind))}: "
            f"{escape(change.summary, 160)}"
        )
    more = len(report.changes) - MAX_LISTED
    if more > 0:
        lines.append(f"- … and {plural(more, 'more change')}")
    groups = error_groups((e.project, e.url, e.error) for e in report.errors)
    for group in groups[:MAX_LISTED]:
        lines.append(f"- {escape(error_group_line(group, MAX_NAMED), 2000)}; {KEPT}")
    if len(groups) > MAX_LISTED:
        lines.append(f"- … and {plural(len(groups) - MAX_LISTED, 'more error')} (other causes)")
    if not lines or lines[-1] == "":
        lines.append("- no changes")
    where = link("full report", report_link) if report_link else f"full report: `{report_path}`"
    return "\n".join([*lines, *_pending_lines(report, where), "", where])


def _pending_lines(report: Report, where: str) -> list[str]:
    """What waits, oldest first: project, kind, before → after, the day first seen; up to
    the message's cap, then how many more and where they are (the catalog issue and the
    report list them all)."""
    pending = oldest_first(pending_of(report))
    if not pending:
        return []
    lines = ["", f"**{PENDING_HEADING}** ({pending_phrase(pending)}), oldest first:"]
    for item in pending[:MAX_LISTED]:
        lines.append(
            f"- **{escape(item.project)}** {escape(kind_name(item.kind))}: "
            f"{escape(pending_change(item), 160)} (first seen {item.first_seen})"
        )
    more = len(pending) - MAX_LISTED
    if more > 0:
        lines.append(f"- … and {more} more: {where}")
    return lines


def issue_body(markdown_report: str, report_link: str | None, report_path: str) -> str:
    """The catalog issue's body: the Markdown report, cut at a section boundary when GitHub's
    limit would refuse it, with a link (or the path) to the full report."""
    head = f"{ISSUE_MARKER}\n"
    where = link("the full report", report_link) if report_link else f"`{report_path}`"
    body = head + markdown_report
    if len(body) <= ISSUE_BODY_LIMIT:
        return body
    notice = (
        f"\n\n---\n_This report is longer than GitHub allows in an issue "
        f"({ISSUE_BODY_LIMIT:,} characters): the sections below were left out; read {where}._\n"
    )
    room = ISSUE_BODY_LIMIT - len(head) - len(notice)
    cut = markdown_report.rfind("\n## ", 0, room + 1)
    if cut <= 0:  # not even the first section fits: cut at a line
        cut = max(markdown_report.rfind("\n", 0, room + 1), 0)
    return head + markdown_report[:cut].rstrip() + notice


def comment_body(
    report: Report, report_link: str | None, report_path: str, *, late: bool = False
) -> str:
    return f"**{headline(report, late=late)}**\n\n" + summary_body(
        report, report_link, report_path, late=late
    )
