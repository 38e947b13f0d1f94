"""One audit rendered through every output -- report.md, snapshot.md, catalog.json, the
Explorer and the notification -- says each fact in one wording: the forge's license verdict,
the latest version and its date, the stale state (crawler.report.words makes them all)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest
from bs4 import BeautifulSoup

from crawler.demo import run_demo
from crawler.export.catalog import build_catalog
from crawler.export.site.render import render_site
from crawler.export.snapshot_md import render_snapshot
from crawler.notify.message import comment_body, issue_body, summary_body
from crawler.report import words
from crawler.report.model import Report
from tests.support.explorer import demo_site
from tests.support.export import seed_export

# every other way the outputs used to word the forge's verdict
OTHER_VERDICT_WORDINGS = re.compile(
    r"(?:GitHub|Gitee|GitLab) (?:reports|says) |\b(?:GitHub|Gitee|GitLab): NOASSERTION"
    r"|— NOASSERTION\b(?! per)|(?<!: )\bno verdict\b(?! from)"
)


@dataclass(frozen=True)
class Outputs:
    report: Report
    report_md: str
    snapshot_md: str
    catalog: dict[str, object]
    explorer: str  # the page's visible text
    notification: str  # the chat message, the catalog issue's body and its comment

    def texts(self) -> dict[str, str]:
        return {
            "report.md": self.report_md,
            "snapshot.md": self.snapshot_md,
            "explorer": self.explorer,
            "notification": self.notification,
        }


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Outputs:
    result = run_demo(tmp_path_factory.mktemp("one-wording") / "demo")
    report_dir = result.report.parent
    report = Report.from_json((report_dir / "report.json").read_bytes())
    markdown = result.report.read_text(encoding="utf-8")
    export = result.report.parents[2] / "export"
    site = result.report.parents[2] / "site" / "index.html"
    page = BeautifulSoup(site.read_text(encoding="utf-8"), "html.parser")
    notification = "\n".join(
        [
            summary_body(report, None, str(result.report)),
            issue_body(markdown, None, str(result.report)),
            comment_body(report, None, str(result.report)),
        ]
    )
    return Outputs(
        report=report,
        report_md=markdown,
        snapshot_md=(export / "snapshot.md").read_text(encoding="utf-8"),
        catalog=json.loads((export / "catalog.json").read_text(encoding="utf-8")),
        explorer=" ".join(page.get_text(" ").split()),
        notification=notification,
    )


def _catalog_project(outputs: Outputs, name: str) -> dict[str, object]:
    projects = outputs.catalog["projects"]
    assert isinstance(projects, list)
    return next(p for p in projects if p["name"] == name)


def _plain(markdown: str) -> str:
    """Markdown's escapes and link targets off, so prose can be searched."""
    text = re.sub(r"\]\(<[^>]*>\)", "]", markdown)
    return re.sub(r"\\(.)", r"\1", text).replace("[", "").replace("]", "")


def test_the_forge_verdict_reads_the_same_in_every_output(outputs: Outputs) -> None:
    rows = {p.name: p for p in outputs.report.projects}
    tile, toolkit = rows["Tile Language"], rows["Kernel Toolkit"]
    assert (tile.forge_label, tile.forge_license) == ("GitHub", "NOASSERTION")
    assert (toolkit.forge_label, toolkit.forge_license) == ("Gitee", None)
    noassertion = words.forge_verdict(tile.forge_label, tile.forge_license)
    no_verdict = words.forge_verdict(toolkit.forge_label, toolkit.forge_license)
    assert (noassertion, no_verdict) == ("NOASSERTION per GitHub", "no verdict from Gitee")
    # catalog.json holds the fact itself, from which the words are made
    tile_license = _catalog_project(outputs, "Tile Language")["license"]
    assert isinstance(tile_license, dict) and tile_license["forge_verdict"] == "NOASSERTION"
    texts = {name: _plain(text) for name, text in outputs.texts().items()}
    for name in ("report.md", "snapshot.md", "explorer", "notification"):
        assert noassertion in texts[name], name
    for name in ("report.md", "explorer", "notification"):  # snapshot.md names no verdict
        assert no_verdict in texts[name], name
    for name, text in texts.items():
        assert OTHER_VERDICT_WORDINGS.findall(text) == [], name


def test_the_latest_version_and_its_date_read_the_same_in_every_output(outputs: Outputs) -> None:
    rows = {p.name: p for p in outputs.report.projects}
    vanished = rows["Vanished Operators"]
    day = words.version_date(vanished.published_at)
    assert (vanished.version, day) == ("v5.4.0", "2026-09-28")
    report_row = next(
        line for line in outputs.report_md.splitlines() if line.startswith("| Vanished Operators")
    )
    snapshot_row = next(
        line for line in outputs.snapshot_md.splitlines() if line.startswith("| Vanished Operators")
    )
    for row in (report_row, snapshot_row):
        assert "[v5.4.0]" in row and f"| {day} |" in row
    ref = _catalog_project(outputs, "Vanished Operators")["tracked_ref"]
    assert isinstance(ref, dict) and (ref["name"], ref["date"]) == ("v5.4.0", day)
    assert f"Latest release v5.4.0 · {day}" in outputs.explorer
    # no output shows a bare timestamp where a date belongs
    for name, text in (("report.md", report_row), ("snapshot.md", snapshot_row)):
        assert "T00:00" not in text and "—" not in text.split("|")[3], name


def test_change_kinds_counts_and_line_ranges_read_as_prose(outputs: Outputs) -> None:
    for name, text in outputs.texts().items():
        plain = _plain(text)
        for internal in ("license_text_changed", "match_with_extra_text ", "project_added"):
            assert internal not in plain, (name, internal)
        assert re.search(r"\b1 (?:changes|flags|errors|projects)\b", plain) is None, name
        assert "project(s)" not in plain, name
        assert re.search(r"lines (\d+)[-–]\1\b", plain) is None, name
    assert words.kind_name("license_text_changed") in outputs.explorer
    assert words.kind_name("repo_archived") in outputs.explorer


def test_a_project_not_read_this_audit_carries_the_day_of_its_facts(outputs: Outputs) -> None:
    rows = {p.name: p for p in outputs.report.projects}
    assert rows["Vanished Operators"].status == "error"
    # the demo's first night was today: its facts are current, not stale (a record is stale when
    # its latest successful check is older than settings.catalog_stale_after_days)
    record = _catalog_project(outputs, "Vanished Operators")
    assert "stale" not in record and "last_checked" not in record
    # a project whose facts are older says so with their day, in the same words everywhere
    seed = {p["name"]: p for p in build_catalog(seed_export())["projects"]}["SGLang"]
    checked = seed["last_checked"]
    assert (checked, seed["stale"]) == ("2026-10-30", True)
    marker = words.stale_marker(checked)
    assert marker == f"stale: facts of {checked}"
    snapshot_row = next(
        line for line in render_snapshot(seed_export()).splitlines() if line.startswith("| SGLang")
    )
    assert f"({marker})" in snapshot_row
    page = BeautifulSoup(str(render_site(demo_site())["index.html"]), "html.parser")
    assert f"SGLang {marker}" in " ".join(page.get_text(" ").split())
    for name, text in outputs.texts().items():  # the old wordings of the same fact
        assert re.search(r"\(as of \d{4}-\d{2}-\d{2}\)", text) is None, name


def test_words_dates_and_plurals() -> None:
    from datetime import UTC, datetime

    moment = datetime(2026, 11, 30, 2, 0, tzinfo=UTC)
    assert words.day(moment) == "2026-11-30"
    assert words.day("2026-11-30T23:59:59Z") == "2026-11-30"
    assert words.moment(moment) == "2026-11-30T02:00:00Z"
    assert [words.plural(n, "error") for n in (0, 1, 2)] == ["0 errors", "1 error", "2 errors"]
    assert words.line_range(203, 203) == "line 203"
    assert words.line_range(4, 5) == "lines 4–5"
    assert words.version_date(None) == "—"


def test_facts_are_worded_only_by_the_presentation_model() -> None:
    """No function of the analysis, the diff or the sources returns a sentence: the changes
    and flags they return carry facts, and the words come from crawler.report.words."""
    import dataclasses

    import grimp

    import crawler.analysis.license_clauses as clauses
    import crawler.analysis.licenses as licenses
    import crawler.diff.licenses as diff_licenses
    import crawler.diff.pages as diff_pages
    import crawler.upstream.pages as pages
    from crawler.model import Change, Flag

    graph = grimp.build_graph("crawler", cache_dir=None)
    for below in ("crawler.analysis", "crawler.diff", "crawler.upstream", "crawler.model"):
        for module in graph.find_descendants(below) | {below}:
            assert not graph.find_shortest_chains(importer=module, imported="crawler.report")
    moved = {
        licenses: ("render_text", "noassertion_explanation", "license_findings"),
        clauses: ("finding_sentence", "finding_verb"),
        diff_licenses: ("license_label", "license_reading"),
        diff_pages: ("_table_summary",),
        pages: ("preview_page",),
    }
    for module, names in moved.items():
        assert [n for n in names if hasattr(module, n)] == [], module.__name__
    assert "summary" not in {f.name for f in dataclasses.fields(Change)}
    assert "detail" not in {f.name for f in dataclasses.fields(Flag)}


# -- one word per thing in every output and in the docs ----------------------------------------

from tests.support import ROOT  # noqa: E402

# the other ways the outputs worded "the license file has text beyond the license's own"
OTHER_EXTRA_TEXT_WORDINGS = re.compile(
    r"\+ extra text|file has extra text|with extra text|see the extra text|match_with_extra_text"
)


def test_a_change_kind_has_one_name_in_the_docs_and_every_output(outputs: Outputs) -> None:
    """README said "license text changed", the outputs "license text edited"."""
    name = words.kind_name("license_text_changed")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"(`{name}`;" in readme  # the README's example of a kind in prose
    for where, text in {**outputs.texts(), "README.md": readme}.items():
        assert "text edited" not in text, where
    for where in ("report.md", "explorer"):
        assert name in _plain(outputs.texts()[where]), where


def test_the_extra_text_fact_reads_one_way_in_every_output(outputs: Outputs) -> None:
    """Report, snapshot and Explorer said "MIT + extra text", "MIT; see the extra text in
    LICENSE", "the license text with extra text" and match_with_extra_text."""
    for where, text in outputs.texts().items():
        assert OTHER_EXTRA_TEXT_WORDINGS.findall(_plain(text)) == [], where
    shown = words.with_extra_text("MIT", "LICENSE")
    assert shown == "MIT plus extra text in LICENSE"
    for where in ("snapshot.md", "explorer"):
        assert shown in _plain(outputs.texts()[where]), where
    assert f"MIT {words.EXTRA_TEXT}" in _plain(outputs.report_md)  # the path is in its table
    tile = _catalog_project(outputs, "Tile Language")["license"]
    assert isinstance(tile, dict) and tile["label"] == shown


def test_counts_have_their_plural() -> None:
    """"1 requests" in the progress lines, "problem(s)" from validate, "attempt(s)" in a
    source's error."""
    import logging
    import tempfile
    from pathlib import Path

    from crawler.export.validate import validate_file
    from crawler.logs import Output
    from crawler.progress import LogProgress

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger("crawler.progress")
    handler, level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        progress = LogProgress(Output())
        progress.start(2)
        progress.project_done("Alpha", "ok", 1, None)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert records[-1] == "[1/2] Alpha: ok, 1 request, rate budget left unknown"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "catalog.json"
        path.write_text('{"schema_version": 1}')
        _status, lines = validate_file(path)
    assert re.search(r"\(s\)", lines[-1]) is None and re.search(r": \d+ problems?: ", lines[-1])
    for module in ("upstream/json_api.py", "upstream/sources/github/api.py",
                   "export/validate.py", "progress.py", "report/words.py"):  # fmt: skip
        source = (ROOT / "crawler" / module).read_text(encoding="utf-8")
        assert re.findall(r"[a-z]\(s\)", source.replace("http(s)", "")) == [], module


def test_utc_times_are_written_one_way_in_the_logs() -> None:
    """Log lines said 2026-12-01T03:00:02.123+00:00 where every report says ...Z."""
    import json
    import logging

    from crawler.logs import JsonFormatter, _Redacting

    record = logging.LogRecord("crawler", logging.INFO, __file__, 1, "hello", None, None)
    record.created = 1764558002.123  # 2025-12-01T03:00:02.123Z
    text = _Redacting([], "%(asctime)s %(message)s").format(record)
    assert text == "2025-12-01T03:00:02.123Z hello"
    line = json.loads(JsonFormatter([]).format(record))
    assert line["time"] == "2025-12-01T03:00:02.123000Z"
    assert words.moment("2025-12-01T03:00:02+00:00") == "2025-12-01T03:00:02Z"
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        assert re.findall(r"\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\+00:00", text) == [], doc.name
