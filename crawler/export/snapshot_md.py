"""``snapshot.md``: the catalog's "Release and license snapshot", in the seed's shape. Pure.

Heading, the dated sentence, the four-column table (one row per item ``sources.yaml`` marks
``snapshot: true``, in its order; every item when it marks none), the license caution
paragraph, and the note on projects tracked by tag or commit.
Every upstream string is escaped for a Markdown table cell; links only to http(s) URLs.
"""

from __future__ import annotations

from crawler.export.catalog import ordered_projects
from crawler.export.export_input import ExportInput, ProjectInput
from crawler.export.labels import (
    Cell,
    caution_sentences,
    item_license_cell,
    item_ref_cell,
    ref_date,
)
from crawler.report import words
from crawler.report.markdown import escape, link

MAX_CELL = 400  # a composed cell (several escaped parts) may exceed one part's cap
HEADER = (
    "| Project | Latest GitHub release checked | Release date | Repository-level license |",
    "|---|---|---|---|",
)
# when a row comes from Gitee, GitLab or a vendor page, the seed's "GitHub" would be untrue
MIXED_HEADER = (
    "| Project | Latest release checked | Release date | Repository-level license |",
    "|---|---|---|---|",
)


def header(projects: list[ProjectInput]) -> tuple[str, str]:
    """The seed's header when every row is from GitHub, else one that is true of every row."""
    return HEADER if projects and all(p.forge == "GitHub" for p in projects) else MIXED_HEADER
CLOSING = (
    "A repository-level label is not a substitute for reviewing individual files and "
    "dependencies before redistribution."
)


def render_cell(cell: Cell) -> str:
    parts = []
    for segment in cell:
        if segment.url is not None:
            parts.append(link(segment.text, segment.url))
        elif segment.untrusted:
            parts.append(escape(segment.text, MAX_CELL))
        else:
            parts.append(segment.text)
    return "".join(parts)


def _row(project: ProjectInput) -> str:
    release = render_cell(item_ref_cell(project))
    if project.stale and project.last_checked is not None:
        release += f" ({words.stale_marker(project.last_checked)})"
    date = ref_date(project.ref)
    license = render_cell(item_license_cell(project))
    cells = [escape(project.name), release, date or words.NO_DATE, license]
    return "| " + " | ".join(cells) + " |"


def _caution(projects: list[ProjectInput]) -> str:
    own = [p for p in projects if p.part_of is None]  # a riding item's are its host's
    sentences = [render_cell(s) for p in own for s in caution_sentences(p)]
    if not sentences:
        sentences = [
            "the checked files show no NOASSERTION verdict, extra license text or separately "
            "licensed bundled file."
        ]
    return "License caution: " + " ".join(sentences) + " " + CLOSING


def _tracked_note(projects: list[ProjectInput]) -> str | None:
    names = [
        escape(p.name)
        for p in projects
        if p.ref is not None and p.ref.kind in ("tag", "commit") and p.part_of is None
    ]
    if not names:
        return None
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return (
        f"Projects without a release at the audit date ({listed}) are tracked by tag or "
        "commit rather than assigned an invented version."
    )


def snapshot_rows(export: ExportInput) -> list[ProjectInput]:
    """The rows sources.yaml marks (``snapshot: true``), in its order; every item when it
    marks none."""
    projects = ordered_projects(export)
    marked = [p for p in projects if p.snapshot]
    return marked or projects


def render_snapshot(export: ExportInput) -> str:
    projects = snapshot_rows(export)
    lines = [
        "## Release and license snapshot",
        "",
        "The following is a dated snapshot of selected upstream releases checked on "
        f"{export.audit_date.isoformat()}. It is not a compatibility guarantee; pin the exact "
        "device, framework, driver, and runtime versions before deployment.",
        "",
        *header(projects),
        *(_row(p) for p in projects),
        "",
        _caution(projects),
    ]
    note = _tracked_note(projects)
    if note:
        lines += ["", note]
    return "\n".join(lines) + "\n"
