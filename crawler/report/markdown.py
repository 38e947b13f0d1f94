"""The morning report for a human reviewer, rendered from the JSON report. Pure.

Every upstream string (release names, tags, license text, page cells) is untrusted: it is
capped, stripped of control characters and escaped so it cannot break a table or inject
markup or links, while the raw Markdown still reads like prose (``2026-11-30``, ``llama.cpp``,
``project_added`` stay as they are):

* only what CommonMark/GFM would read as markup where the text stands is backslash-escaped:
  ``\\ ` * [ ] < ~ | $`` always (``$`` opens GitHub's math), ``_`` unless it sits inside a
  word, ``&`` before an entity-like run, and a block marker where the text starts (it may start
  a line): ``>``, ``# ``, ``- ``, ``+ ``, ``1. ``, a line of ``-`` or ``=``;
* a word that a renderer would turn into a link (``http://…``, ``www.…``, anything with an
  ``@``, ``mailto:``/``xmpp:``, a bare domain such as ``evil.com`` that linkify-it recognises,
  also after NFKC, full-width dots and percent-decoding) is shown as a code span, where neither
  GitHub's autolinker nor markdown-it's linkify creates a link. The crawler's own links are
  made by ``link()`` only.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any, TextIO
from urllib.parse import quote, unquote

from linkify_it import LinkifyIt

from crawler.report import words
from crawler.report.model import (
    ChangeEntry,
    ErrorEntry,
    LinkEntry,
    PendingEntry,
    ProjectEntry,
    Report,
    Requests,
)
from crawler.untrusted import INVISIBLE, MAX_CELL, one_line

MAX_QUOTE = 1200
# control characters but tab and newline; zero-width, bidi, tag and other invisible characters:
# the one rule of every output (crawler.untrusted)
_CONTROL = INVISIBLE
# Markdown specials outside code spans: see the module docstring
_PLAIN_SPECIAL = re.compile(r"[\\`*\[\]<~|$]|&(?=#?[0-9A-Za-z]+;)|_(?![^\W_])|(?<![^\W_])_")
# what opens a block where the text starts a line: quote, heading, list item, break, underline
_LINE_START = re.compile(
    r"^(?:>|(?:#{1,6}|[+-])(?: |$)|-[- ]*$|=[= ]*$|(?P<number>\d{1,9})[.)](?: |$))"
)
_WORDS = re.compile(r"([ |])")
# a text with none of these is its own escape but for its line start: nothing to escape, no
# word a linker could take (no dot, "@" or ":"; no "%" that unquotes to one; ASCII, so NFKC
# makes none)
_NOTHING_TO_ESCAPE = re.compile(r"[^\\`*\[\]<~|$&_.@:%]*", re.ASCII)
_LINK_HINT = re.compile(r"://|www\.|@|mailto:|xmpp:", re.IGNORECASE)
_DOT_LIKE = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
# What linkify-it needs to find a link without "@" or "mailto:": a scheme's "//", or a host
# ending in a dot and a top-level domain, which begins with a letter (its list, "xn--", two
# letters). A word with neither ("v1.2.0", "Apache-2.0", "Inc.") is not asked: the first
# question compiles linkify-it's patterns (15 ms of an unchanged night's report).
_MAY_LINK = re.compile(r"//|\.[^\W\d_]")
_HTTP = re.compile(r"https?://", re.IGNORECASE)  # a link's target, matched at its start


def quoted(value: Any, limit: int = MAX_CELL) -> str:
    """Untrusted text (an error message, an exception's words) quoted whole as one code span:
    read as it was, never as markup or a link, never cut into several spans."""
    text = one_line(value, limit)
    runs = [len(run) for run in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# An API endpoint is evidence for a machine: the page a person opens instead.
_API_PAGES = (
    (re.compile(r"^(https?://)api\.github\.com/repos/([^/?#]+/[^/?#]+)"), r"\1github.com/\2"),
    (re.compile(r"^(https?://[^/]+)/api/v3/repos/([^/?#]+/[^/?#]+)"), r"\1/\2"),
    (re.compile(r"^(https?://[^/]+)/api/v5/repos/([^/?#]+/[^/?#]+)"), r"\1/\2"),
    (re.compile(r"^(https?://[^/]+)/api/v4/projects/([^/?#]+)"), r"\1/\2"),
    (re.compile(r"^(https?://[^/]+)/pypi/([^/?#]+)/json"), r"\1/project/\2/"),
)


def page_for(url: str | None) -> str | None:
    """The web page for an API URL (GitHub, GitHub Enterprise, Gitee, GitLab, PyPI), the URL
    itself when it is not an API endpoint, None when it is one of an unknown shape."""
    if not url:
        return None
    for pattern, page in _API_PAGES:
        if pattern.match(url):
            return unquote(pattern.sub(page, url, count=1).split("?")[0])
    if "/api/" in url or "/graphql" in url or "/repos/" in url:
        return None
    return url


@lru_cache(maxsize=1)
def _linkifier() -> LinkifyIt:
    return LinkifyIt()  # fuzzy links and e-mails on, as markdown-it's linkify has them


@lru_cache(maxsize=4096)
def _would_link(word: str) -> bool:
    """True when a GFM autolinker or linkify could make a link of (part of) ``word``."""
    probe = unquote(unicodedata.normalize("NFKC", word)).translate(_DOT_LIKE)
    if _LINK_HINT.search(probe):
        return True
    if "." not in probe or not (_MAY_LINK.search(word) or _MAY_LINK.search(probe)):
        return False
    return bool(_linkifier().test(word) or _linkifier().test(probe))


def _code_span(word: str) -> str:
    fence = "`" * (max((len(run) for run in re.findall(r"`+", word)), default=0) + 1)
    pad = " " if word.startswith("`") or word.endswith("`") else ""
    return f"{fence}{pad}{word}{pad}{fence}"


def escape(value: Any, limit: int = MAX_CELL) -> str:
    """Plain text safe inside Markdown, a table cell and HTML: one line, capped, escaped only
    where CommonMark needs it, link-like words in code spans (see the module docstring)."""
    if type(value) is str and len(value) <= 4 * MAX_CELL:
        return _escape_text(value, limit)  # a report repeats its dates, licenses, kinds
    return _escape(value, limit)


@lru_cache(maxsize=8192)  # repeated cells; a catalog's names are not kept
def _escape_text(value: str, limit: int) -> str:
    return _escape(value, limit)


def _escape(value: Any, limit: int) -> str:
    text = one_line(value, limit)
    if text == "—":
        return text
    plain = text.isascii() and _NOTHING_TO_ESCAPE.fullmatch(text)
    escaped = text if plain else _escape_words(text)
    start = _LINE_START.match(escaped)
    if start is None:
        return escaped
    number = start["number"] or ""  # "1." → "1\.", "# x" → "\# x"
    return f"{number}\\{escaped[len(number) :]}"


def _escape_words(text: str) -> str:
    out: list[str] = []
    for word in _WORDS.split(text):  # words never hold a space or a "|" (a table cell's end)
        if word in (" ", ""):
            out.append(word)
        elif word == "|":
            out.append("\\|")
        elif _would_link(word):
            out.append(_code_span(word))
        else:
            out.append(_PLAIN_SPECIAL.sub(lambda m: "\\" + m.group(0), word))
    return "".join(out)


def link(text: Any, url: str | None) -> str:
    """A link only to http(s) URLs, with the target percent-encoded; else plain text."""
    label = escape(text)
    if not url or not _HTTP.match(url):
        return label
    safe = quote(url[:2048], safe=":/?#=&%~@!$'*+,;")
    return f"[{label}](<{safe}>)"


def _quote_block(text: str) -> list[str]:
    lines = [escape(line, MAX_QUOTE) if line.strip() else "" for line in text.splitlines()[:20]]
    return ["> " + line if line else ">" for line in lines] or ["> —"]


def _table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    return list(_rows(header, rows))


def _rows(header: list[str], rows: Iterable[list[str]]) -> Iterator[str]:
    """A table a line at a time (a large catalog's table is never held)."""
    yield "| " + " | ".join(header) + " |"
    yield "|" + "---|" * len(header)
    for row in rows:
        yield "| " + " | ".join(row) + " |"


def _section(title: str, body: Iterable[str], empty: str) -> Iterator[str]:
    yield f"## {title}"
    yield ""
    said = False
    for line in body:
        said = True
        yield line
    if not said:
        yield empty
    yield ""


def _release_detail(change: ChangeEntry) -> str:
    details = change.details
    if not details.get("published_at"):
        return escape(change.summary)
    name = details.get("name")
    named = f" · “{escape(name, 80)}”" if name and name != change.after else ""
    return f"{escape(words.day(details['published_at']))}{named}"


def _ref(change: ChangeEntry, value: Any) -> str:
    """A release or tag as named; a commit by its first 12 hex digits (the link has it whole)."""
    if change.kind == "new_commit" and isinstance(value, str):
        value = value[:12]
    return escape(value)


def _release_lines(changes: Iterable[ChangeEntry]) -> Iterator[str]:
    rows = (
        [
            escape(c.project),
            escape(words.kind_name(c.kind)),
            f"{_ref(c, c.before)} → {_ref(c, c.after)}",
            _release_detail(c),
            link("evidence", c.evidence_url),
        ]
        for c in changes
    )
    return _table_if_any(["Project", "Kind", "Previous → new", "Date / detail", "Link"], rows)


def _table_if_any(header: list[str], rows: Iterator[list[str]]) -> Iterator[str]:
    """The table of ``rows``, or nothing when there are none."""
    first = next(rows, None)
    if first is not None:
        yield from _rows(header, itertools.chain([first], rows))


def _license_lines(report: Report) -> Iterator[str]:
    """The forge's verdict beside ours for every project where they differ, the text that
    makes the difference quoted, then the license changes. The projects are read by index
    from the report (its rows may wait on disk): only their indices are held."""
    noassertion = {f.project: f.new for f in report.flags if f.kind == "license_noassertion"}
    restricts: dict[int, bool] = {}
    for index, p in enumerate(report.projects):
        if (p.license_analysis is not None and p.license_analysis.differs_from_forge) or (
            p.name in noassertion
        ):
            restricts[index] = bool(p.license_analysis and p.license_analysis.restricts)
    # texts that add a restriction or a condition first: they change what users may do
    order = sorted(restricts, key=lambda index: not restricts[index])

    def differing() -> Iterator[ProjectEntry]:
        return (report.projects[index] for index in order)

    if order:
        yield from _rows(
            ["Project", "The forge says", "Our reading", "Verdict", "Why they differ"],
            (
                [
                    escape(p.name),
                    escape(words.forge_verdict(p.forge_label, p.forge_license)),
                    escape(p.detected_license),
                    escape(
                        words.verdict_words(p.license_analysis.verdict)
                        if p.license_analysis
                        else None
                    ),
                    escape(p.license_analysis.why if p.license_analysis else None, 400),
                ]
                for p in differing()
            ),
        )
        yield ""
    for project in differing():
        reading = project.license_analysis
        new = noassertion.get(project.name)
        status = ""
        if new is not None:
            # a first audit has no baseline: nothing there is "new since" anything
            since = new and report.audit.baseline_audit_id is not None
            verdict = words.forge_verdict(project.forge_label, words.NOASSERTION)
            status = f" — {verdict}" + (", new since the baseline" if since else "")
        evidence = link(reading.path, reading.url) if reading else link("license file", None)
        if reading is not None and reading.restricts:
            status += " — the license text adds a restriction or condition"
        yield from [f"### {escape(project.name)}{status}", "", f"File: {evidence}", ""]
        if reading is None:
            continue
        spans = [*reading.extra_text[:5], *reading.altered_text[:5]]
        spans.sort(key=lambda s: (s.effect not in ("restriction", "condition"), s.start_line))
        for span in spans:
            where = words.line_range(span.start_line, span.end_line)
            what = span.finding or "extra text"
            yield f"{what[:1].upper()}{what[1:]} ({where}):"
            yield from [*_quote_block(span.text), ""]
        if reading.notes:
            yield from [*(f"- note: {escape(note, 300)}" for note in reading.notes[:5]), ""]
    for change in report.changes:
        if change.section != "licenses":
            continue
        yield (
            f"- **{escape(change.project)}** {escape(words.kind_name(change.kind))}: "
            f"{escape(change.summary, 400)} ({link('evidence', change.evidence_url)})"
        )
        diff = change.details.get("word_diff")
        if diff:
            rendered = " ".join(
                f"~~{escape(text, 300)}~~"
                if op == "delete"
                else f"**{escape(text, 300)}**"
                if op == "insert"
                else escape(text, 300)
                for op, text in diff[:40]
            )
            yield f"  - word diff: {rendered}"


def _package_lines(changes: Iterable[ChangeEntry]) -> Iterator[str]:
    rows = (
        [
            escape(c.project),
            escape(f"{c.details.get('package', '')}"),
            f"{escape(c.before)} → {escape(c.after)}",
            escape(words.day(c.details.get("uploaded_at")))
            + (" (pre-release)" if c.details.get("prerelease") else ""),
            link("evidence", c.evidence_url),
        ]
        for c in changes
    )
    return _table_if_any(["Project", "Package", "Previous → new", "Uploaded", "Link"], rows)


def _headline(report: Report) -> list[str]:
    """The first lines a reviewer reads: never all-clear while anything went unchecked."""
    audit, summary = report.audit, report.summary
    baseline = audit.baseline_audit_id
    since = f"since audit #{baseline}" if baseline else "(first audit: no baseline)"
    in_part = summary.checked_in_part
    left_out = summary.not_selected
    checked = f"{summary.checked} checked" + (f" ({in_part} only in part)" if in_part else "")
    lines = [
        f"**{audit.status}**: {words.plural(summary.projects, 'project')}, {checked}, "
        f"{summary.deferred} deferred, {summary.untracked} not trackable"
        + (f", {words.riding_count(summary.riding)}" if summary.riding else "")
        + "; "
        f"{words.plural(summary.changes, 'change')} {since}, "
        f"{words.plural(summary.flags, 'flag')}, {words.plural(summary.errors, 'error')}"
        + (f"; {words.plural(left_out, 'other project')} not selected (--only)" if left_out else "")
        + ".",
        "",
    ]
    if words.reached_nothing(summary):
        lines[0] = lines[0][:-1] + (
            f"; **reached nothing**: no project could be read ({words.why_nothing(summary)})."
        )
    elif summary.checked_too_little():
        lines[0] = lines[0][:-1] + f"; **{words.checked_too_little(summary)}**."
    gaps = []
    if summary.deferred:
        were = "was" if summary.deferred == 1 else "were"
        gaps.append(
            f"{words.plural(summary.deferred, 'project')} {were} not checked (deferred)"
            + words.rotation_nights(
                summary.projects, summary.deferred, summary.untracked + summary.riding
            )
        )
    if summary.stale:
        have = "has" if summary.stale == 1 else "have"
        gaps.append(
            f"{words.plural(summary.stale, 'project')} {have} gone unchecked too long (stale)"
        )
    if summary.projects_with_errors:
        gaps.append(f"{words.plural(summary.projects_with_errors, 'project')} had errors")
    if gaps:
        lines += [
            "**Not all clear:** " + "; ".join(gaps) + ". Their last good state is shown; see "
            "“Not checked, or only in part” and “Errors”.",
            "",
        ]
    return lines


def _page_lines(changes: Iterable[ChangeEntry]) -> list[str]:
    lines: list[str] = []  # page changes are few: a handful of vendor pages
    for change in changes:
        lines.append(
            f"- **{escape(change.project)}** {escape(words.kind_name(change.kind))}: "
            f"{escape(change.summary, 400)} ({link('page', change.evidence_url)})"
        )
        details = change.details
        cells = details.get("cells_changed") or []
        if cells:
            lines.append("")
            lines += _table(
                ["Row", "Column", "Before", "After"],
                [
                    [
                        escape(", ".join(f"{v}" for v in (c.get("key") or {}).values())),
                        escape(c.get("column")),
                        escape(c.get("before")),
                        escape(c.get("after")),
                    ]
                    for c in cells[:50]
                ],
            )
            lines.append("")
        for part in words.TABLE_PARTS:
            items = details.get(part) or []
            if items:
                shown = "; ".join(
                    escape(words.table_part_entry(part, item, details), 120) for item in items[:20]
                )
                lines.append(f"  - {words.table_part_name(part, details)}: {shown}")
    return lines


def _link_lines(
    changes: Iterable[ChangeEntry], links: Sequence[LinkEntry], requests: Requests
) -> Iterator[str]:
    """Tonight's link findings and dormant upstreams, then the links failing but not reported
    yet and those that could not be checked, then what the checks cost; a line at a time (a
    first audit may find most of a catalog dormant: its entries are never held at once)."""
    for c in changes:
        kind = escape(words.kind_name(c.kind))
        yield f"- **{escape(c.project)}** {kind}: {escape(c.summary, 600)}"
    for entry in links:
        what = words.link_not_reported(entry.outcome, entry.reason, entry.failing_since)
        where = "; ".join(entry.where[:5])
        yield (
            f"- **{escape(entry.project)}** {escape(entry.url, 300)}: {escape(what, 400)}"
            f" ({escape(where, 300)})"
        )
    cost = requests.get("sources", {}).get("links")
    if cost is not None:
        yield ""
        yield escape(words.link_cost(cost), 400)


def _pending_lines(pending: Sequence[PendingEntry]) -> Iterator[str]:
    """The pending table a line at a time: a first audit has one item per project, and its
    lines held at once were the night's peak of memory."""
    phrase = words.pending_phrase(pending)
    if phrase is None:
        return
    yield (
        f"{phrase}. Newest first; an item leaves this list when the curated catalog takes it "
        "(`crawler export --into`) or when acknowledged (`crawler ack`)."
    )
    yield ""
    rows = (
        [
            escape(item.first_seen) + (" (new)" if item.new else ""),
            escape(item.project),
            words.kind_name(item.kind),
            escape(words.pending_change(item) if item.before else item.summary, 300),
            link("evidence", item.evidence_url) if item.evidence_url else "—",
        ]
        for item in pending
    )
    yield from _rows(["First seen", "Project", "Change", "What", "Link"], rows)


def render_markdown(report: Report) -> str:
    return "\n".join(markdown_lines(report)).rstrip() + "\n"


def write_markdown(report: Report, out: TextIO) -> None:
    """``render_markdown``'s text, written a line at a time (a large catalog's report is
    never one string, nor one list of lines)."""
    last: str | None = None  # written when the next line comes: the last one is trimmed
    blanks: list[str] = []  # blank lines after it: none is written at the end of the file
    for line in markdown_lines(report):
        if not line.strip():
            blanks.append(line)
            continue
        for held in ([] if last is None else [last]) + blanks:
            out.write(held + "\n")
        last, blanks = line, []
    out.write(("" if last is None else last.rstrip()) + "\n")


def markdown_lines(report: Report) -> Iterator[str]:
    audit = report.audit
    changes = report.changes
    yield f"# Upstream audit #{audit.id} — {escape(words.moment(audit.started_at))}"
    yield ""
    yield from _headline(report)
    pending = words.pending_of(report)
    if pending:
        yield from _section(words.PENDING_HEADING, _pending_lines(pending), "")

    def section(name: str) -> Iterator[ChangeEntry]:
        return (c for c in changes if c.section == name)

    yield from _section("New releases", _release_lines(section("releases")), "No new releases.")
    if any(section("packages")) or any(p.packages for p in report.projects):
        yield from _section(
            "New package versions", _package_lines(section("packages")), "No new package versions."
        )
    yield from _section("License findings", _license_lines(report), "No license findings.")
    yield from _section(
        "Support tables and pins", _page_lines(section("pages")), "No page changes."
    )
    links = report.links if isinstance(report.links, tuple) else None
    if links is not None or any(section("links")):
        yield from _section(
            "Links and upstream health",
            _link_lines(section("links"), links or (), report.requests),
            "No link moved or broke, and no upstream went dormant.",
        )
    other_lines = itertools.chain(
        (
            f"- **{escape(c.project)}** {escape(words.kind_name(c.kind))}: {escape(c.summary, 400)}"
            + (f" ({link('evidence', c.evidence_url)})" if c.evidence_url else "")
            for c in section("other")
        ),
        (
            f"- **{escape(f.project)}** {escape(words.kind_name(f.kind))}"
            f"{' (new)' if f.new else ''}: {escape(f.detail, 400)}"
            + (f" ({link('evidence', f.evidence_url)})" if f.evidence_url else "")
            for f in report.flags
            if f.kind != "license_noassertion"
        ),
    )
    yield from _section("Other changes and flags", other_lines, "No other changes.")
    with_errors = {e.project for e in report.errors}
    repo_pages = (  # read only when there are errors: a pass over every row otherwise
        {p.name: p.repo_url for p in report.projects if p.name in with_errors}
        if with_errors
        else {}
    )

    def error_page(error: ErrorEntry) -> str | None:
        page = page_for(error.url)
        if page is None or error.source in ("github", "gitee", "gitlab"):
            return repo_pages.get(error.project) or page
        return page

    yield from _section("Errors", _error_lines(report, error_page), "No errors.")
    unchecked: Iterable[str] = _unchecked_lines(report, with_errors)
    not_selected = report.summary.not_selected
    if not_selected:  # an --only run: "every project" would claim the whole catalog
        were = "was" if not_selected == 1 else "were"
        unchecked = itertools.chain(
            unchecked,
            [
                f"- {words.plural(not_selected, 'other project')} of sources.yaml {were} not "
                "selected for this audit (--only)"
            ],
        )
    yield from _section("Not checked, or only in part", unchecked, "Every project was checked.")
    rows = (
        [
            escape(p.name),
            link(p.version or "—", p.url),
            escape(_tracked_by(p)),
            escape(words.version_date(p.published_at)),
            escape(p.license),
        ]
        for p in report.projects
    )
    yield from _section(
        "Release and license snapshot",
        _rows(["Project", "Latest checked", "Tracked by", "Date", "License"], rows),
        "No projects.",
    )


def _error_lines(
    report: Report, error_page: Callable[[ErrorEntry], str | None]
) -> Iterator[str]:
    """One line per cause (crawler.report.words.error_groups): an error of its own is shown
    whole, with its page; errors that share a cause, as one line naming their projects."""
    for group in words.error_groups((e.project, e.url, e.error) for e in report.errors):
        if len(group.projects) == 1:
            e = next(x for x in report.errors if x.project == group.projects[0]
                     and x.error == group.first_message)  # fmt: skip
            yield (
                f"- **{escape(e.project)}** ({escape(e.source)}): {quoted(e.error, 400)}"
                + (f" — {link('page', error_page(e))}" if error_page(e) else "")
                + f"; {words.KEPT}"
            )
        else:
            line = words.error_group_line(group, words.NAMED_IN_A_LINE)
            yield f"- {escape(line, 4 * MAX_CELL)}; {words.KEPT}"


def _unchecked_lines(report: Report, with_errors: set[str]) -> Iterator[str]:
    """A project with a note on its own line; the others one line per state, naming them."""
    plain: dict[str, list[str]] = {}
    for p in report.projects:
        if p.status == "riding" or (p.status == "ok" and not p.note and p.name not in with_errors):
            continue
        state = _status_text(p, p.name in with_errors)
        if p.note:
            yield f"- **{escape(p.name)}** {escape(state)}: {escape(p.note, 300)}"
        else:
            plain.setdefault(state, []).append(p.name)
    for state, names in plain.items():
        if len(names) == 1:
            yield f"- **{escape(names[0])}** {escape(state)}"
        else:
            listed = words.named(names, words.NAMED_IN_A_LINE)
            yield f"- {escape(state)}: {escape(listed, 4 * MAX_CELL)}"


def _status_text(project: ProjectEntry, has_errors: bool) -> str:
    if project.status == "ok":
        return "checked in part" if has_errors else "checked"
    return {"error": "not checked (error)", "deferred": "not checked (deferred)"}.get(
        project.status, "not trackable"
    )


def _tracked_by(project: ProjectEntry) -> str | None:
    if project.status == "untracked":
        return words.not_trackable(project.note)
    riding = f"{words.part_of(project.part_of)}: " if project.part_of else ""
    source = project.version_source
    if source is None:
        return riding[:-2] or None
    where = riding + (f"{project.forge_label} " if project.forge_label else "")
    pre = words.version_mark(project.version, project.prerelease)
    newer = project.newest_prerelease
    ahead = f"; pre-release {newer} is newer" if newer else ""
    return f"{where}{source}{pre}{ahead}"
