"""The notification's list of what waits: oldest first across nights, before → after, the day
first seen, capped with "and N more" and where the rest is; hostile names escaped.

Guards the defect where the message named only the three newest pending changes ("newest: …"),
so the changes that had waited longest were never named."""

from __future__ import annotations

from crawler.notify.message import MAX_LISTED, comment_body, summary_body
from crawler.report.markdown import escape, render_markdown
from crawler.report.model import AuditPart, PendingEntry, Report, Summary


def _pending(project: str, audit: int, before: str | None, value: str) -> PendingEntry:
    day = f"2026-11-{audit:02d}"
    return PendingEntry(
        project=project, kind="new_release", value=value, summary=f"{value} published {day}",
        evidence_url=None, first_audit=audit, first_seen=day, new=audit == 9, before=before,
    )  # fmt: skip


def _report(pending: tuple[PendingEntry, ...]) -> Report:
    return Report(
        schema_version=2,
        crawler_version="test",
        audit=AuditPart(9, "2026-11-09T03:00:00Z", None, "complete", 8),
        summary=Summary(projects=1, checked=1, checked_in_part=1, errors=0,
                        projects_with_errors=0, deferred=0, untracked=0, stale=0, changes=0,
                        flags=0, changes_by_kind={}),
        changes=(), flags=(), errors=(), projects=(), requests={}, pending=pending,
    )  # fmt: skip


def test_pending_changes_are_listed_oldest_first_with_before_and_after() -> None:
    # as the report holds them: newest first (night 9's, night 5's, then night 2's two)
    report = _report(
        (
            _pending("Gamma", 9, "v3.0", "v3.1"),
            _pending("Beta", 5, None, "v0.1.0"),  # a first release: nothing before it
            _pending("Alpha <b>", 2, "v1.1", "v1.2"),  # found after Alpha's, that night
            _pending("Alpha", 2, "v1.0", "v1.1"),
        )
    )
    body = summary_body(report, None, "reports/x/report.md")
    assert body.splitlines()[2:] == [
        "**Pending until the catalog takes them** (1 new tonight, 4 pending since 2026-11-02), "
        "oldest first:",
        "- **Alpha** new release: v1.0 → v1.1 (first seen 2026-11-02)",
        f"- **{escape('Alpha <b>')}** new release: v1.1 → v1.2 (first seen 2026-11-02)",
        "- **Beta** new release: v0.1.0 (first seen 2026-11-05)",
        "- **Gamma** new release: v3.0 → v3.1 (first seen 2026-11-09)",
        "",
        "full report: `reports/x/report.md`",
    ]
    # the catalog issue's comment says the same; its body (the report) lists every one
    assert "- **Alpha** new release: v1.0 → v1.1 (first seen 2026-11-02)" in comment_body(
        report, None, "reports/x/report.md"
    )
    markdown = render_markdown(report)
    assert "| 2026-11-02 | Alpha | new release | v1.0 → v1.1 | — |" in markdown
    assert "| 2026-11-05 | Beta | new release | v0.1.0 published 2026-11-05 | — |" in markdown


def test_past_the_cap_the_rest_are_counted_with_the_reports_link() -> None:
    count = MAX_LISTED + 3
    pending = tuple(
        _pending(f"P{n:02d}", 2 + n // 4, f"v{n}.0", f"v{n}.1") for n in reversed(range(count))
    )
    link = "https://ci.example/reports/9/report.md"
    lines = summary_body(_report(pending), link, "reports/x/report.md").splitlines()
    listed = [line for line in lines if line.startswith("- **P")]
    assert [line.split("**")[1] for line in listed] == [f"P{n:02d}" for n in range(MAX_LISTED)]
    assert lines[-3:] == [
        f"- … and 3 more: [full report](<{link}>)",
        "",
        f"[full report](<{link}>)",
    ]
