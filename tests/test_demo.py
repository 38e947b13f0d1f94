"""`crawler demo` is the newcomer's first contact: it must show every change kind, offline."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from crawler.cli import cli
from crawler.model import ChangeKind
from crawler.report.json_report import validate_report


def test_demo_shows_every_change_kind_flag_and_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--output", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    latest = tmp_path / "demo" / "reports" / "latest"
    report = json.loads((latest / "report.json").read_text())
    validate_report(report)
    without_channels = set(ChangeKind) - {ChangeKind.NEW_PACKAGE_VERSION}  # no PyPI source yet
    assert report["summary"]["changes_by_kind"] == {kind.value: 1 for kind in without_channels}
    kinds = {(c["project"], c["kind"]) for c in report["changes"]}
    assert ("Serving Engine", "new_prerelease") in kinds
    assert ("Cache Store", "repo_moved") in kinds
    assert {(f["project"], f["kind"], f["new"]) for f in report["flags"]} == {
        ("Tile Language", "license_noassertion", False),
        ("Kernel Bench", "no_tagged_release", False),
        ("LLM Deploy", "no_tagged_release", False),
    }
    assert [(e["project"], e["source"]) for e in report["errors"]] == [
        ("Vanished Operators", "github-graphql")
    ]
    rows = {p["name"]: p for p in report["projects"]}
    # the vanished repository keeps its last good state: no "release removed"
    assert (rows["Vanished Operators"]["status"], rows["Vanished Operators"]["version"]) == (
        "error",
        "v5.4.0",
    )
    assert (rows["Serving Engine"]["version"], rows["Serving Engine"]["prerelease"]) == (
        "v0.33.0rc3",
        True,
    )
    vendor = rows["Vendor Platform"]["license_analysis"]
    assert (rows["Vendor Platform"]["forge_license"], vendor["verdict"]) == (
        "Apache-2.0",
        "match_with_extra_text",
    )
    assert vendor["why"].startswith("GitHub reads Apache-2.0 and ignores the rest: ")
    assert "weights/ are NOT covered" in vendor["extra_text"][0]["text"]
    markdown = (latest / "report.md").read_text()
    assert result.output.strip() == f"demo report: {tmp_path / 'demo' / 'reports'}/" + (
        f"{Path(result.output.split('reports/')[1].strip()).parent}/report.md"
    )
    # the hostile release name is shown, escaped, on one line
    assert "“v3.9.0 \\| \\<b>pwned\\</b> `[click](https://evil.example)` second line”" in markdown
    assert markdown.count("<b>") == markdown.count("\\<b>")  # every one escaped, none raw HTML
