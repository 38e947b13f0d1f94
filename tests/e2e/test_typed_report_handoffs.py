"""The hand-offs are typed: the report is built once as msgspec structures and serialised once
(report.md, the notifications, the terminal and the exit status read those structures), and a
stored license analysis is decoded once with its snapshot, never rebuilt from a dict."""

from __future__ import annotations

import io
import json
from pathlib import Path

import msgspec
import pytest

from crawler.analysis.license_texts import reference_text
from crawler.analysis.licenses import ENGINE_VERSION, analyze_license
from crawler.demo import run_demo
from crawler.diff.licenses import analysis_of
from crawler.model import LicenseAnalysis, LicenseFile, ProjectSnapshot, TextSpan
from crawler.report.json_report import validate_report
from crawler.report.markdown import render_markdown
from crawler.report.model import Report
from crawler.store import Store


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_demo(tmp_path_factory.mktemp("typed") / "demo").report.parent


def test_report_json_is_the_typed_report_serialised_once(demo: Path) -> None:
    raw = (demo / "report.json").read_bytes()
    report = Report.from_json(raw)
    assert report.to_json() == raw  # one serialisation: read back, written again, same bytes
    validate_report(report)
    assert json.loads(raw) == report.as_json()
    assert (demo / "report.md").read_text(encoding="utf-8") == render_markdown(report)
    assert report.needs_attention is True  # the demo has an error: the exit status is 1
    assert {p.status for p in report.projects} == {"ok", "error", "untracked"}


def test_report_json_is_written_a_few_rows_at_a_time_with_the_same_bytes(demo: Path) -> None:
    """A large catalog's report.json is streamed (rows a chunk at a time), byte for byte the
    file one serialisation gives, whatever the chunk and whatever an upstream string holds."""
    report = Report.from_json((demo / "report.json").read_bytes())
    hostile = msgspec.structs.replace(report.projects[0], name='x\n  "projects": []\n]')
    for case in (report, msgspec.structs.replace(report, projects=(hostile, *report.projects)),
                 msgspec.structs.replace(report, projects=())):  # fmt: skip
        for chunk in (1, 2, 200):
            out = io.BytesIO()
            case.write_json(out, chunk)
            assert out.getvalue() == case.to_json()
            assert Report.from_json(out.getvalue()) == Report.from_json(case.to_json())


def test_a_stored_license_analysis_is_decoded_once_with_its_snapshot(demo: Path) -> None:
    store = Store(f"sqlite:///{demo.parents[1] / 'demo.sqlite'}")
    try:
        latest = store.latest_audit()
        assert latest is not None
        states = store.states_as_of(latest.id, include_own=True)
    finally:
        store.close()
    tile = states["Tile Language"].snapshot
    assert tile.license_file is not None
    analysis = tile.license_file.analysis
    assert isinstance(analysis, LicenseAnalysis) and analysis.engine == ENGINE_VERSION
    assert analysis_of(tile) is analysis  # read as stored, not rebuilt
    assert analysis.verdict == "match_with_extra_text"
    assert [s.effect for s in analysis.extra_text] == ["condition"]
    # snapshots sharing a license text share its analysis
    analyses = [
        s.snapshot.license_file.analysis for s in states.values() if s.snapshot.license_file
    ]
    assert all(isinstance(a, LicenseAnalysis) for a in analyses)


def test_the_stored_form_keeps_its_bytes() -> None:
    """The analysis is stored as the dict form held before (fields in order, each span with
    its effect, the engine last), so stored snapshots keep their hash."""
    found = analyze_license(reference_text("MIT") + "\n\nCommercial use is forbidden.\n")
    analysis = LicenseAnalysis(**{**vars_of(found), "engine": ENGINE_VERSION})
    snapshot = ProjectSnapshot("x", license_file=LicenseFile("LICENSE", "b", "u", analysis))
    stored = json.loads(snapshot.to_json())["license_file"]["analysis"]
    assert list(stored) == [
        "spdx_ids", "expression", "verdict", "coverage", "matches", "copyright_holders",
        "extra_text", "altered_text", "notes", "engine",
    ]  # fmt: skip
    assert stored["extra_text"] == [
        {"start_line": 25, "end_line": 25, "text": "Commercial use is forbidden.",
         "effect": "restriction"}
    ]  # fmt: skip
    again = ProjectSnapshot.from_json(snapshot.to_json())
    assert again == snapshot and again.to_json() == snapshot.to_json()
    assert again.license_file is not None and again.license_file.analysis is not None
    assert again.license_file.analysis.extra_text == (
        TextSpan(25, 25, "Commercial use is forbidden."),
    )


def vars_of(analysis: LicenseAnalysis) -> dict[str, object]:
    return {name: getattr(analysis, name) for name in analysis.__dataclass_fields__}
