"""`crawler demo` is the newcomer's first contact: it must show every change kind from every
source (GitHub, Gitee, GitLab, a PyPI channel, a vendor page), offline, and the export."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from click.testing import CliRunner

from crawler.cli import cli
from crawler.export import validate_catalog
from crawler.model import ChangeKind
from crawler.report.json_report import validate_report

SOURCES = {  # project → the web host every link of its changes must point at
    "Kernel DSL": "https://github.com/",
    "Serving Engine": "https://github.com/",
    "Accel Plugin": "https://gitee.example/",
    "Kernel Toolkit": "https://gitee.example/",
    "Compiler Toolkit": "https://gitlab.example/",
    "Runtime Shim": "https://gitlab.example/",
}


def test_demo_shows_every_change_kind_flag_and_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--output", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    latest = tmp_path / "demo" / "reports" / "latest"
    report = json.loads((latest / "report.json").read_text())
    validate_report(report)
    # delivery.json beside the report, as after any audit (the demo has no channel)
    assert sorted(p.name for p in latest.iterdir()) == ["delivery.json", "report.json", "report.md"]
    assert json.loads((latest / "delivery.json").read_text())["reason"] == (
        "no notify channels configured"
    )
    # not link_broken and upstream_dormant: they are judged over real nights (a 404 must repeat
    # on the next one, dormancy begins on a date), and the demo's nights run seconds apart:
    # tests/integration/test_audit_links.py and test_upstream_health.py show them on loopback
    over_nights = {"link_broken", "upstream_dormant"}
    assert set(report["summary"]["changes_by_kind"]) == {k.value for k in ChangeKind} - over_nights
    kinds: dict[str, set[str]] = defaultdict(set)
    for change in report["changes"]:
        kinds[change["project"]].add(change["kind"])
    assert kinds["Serving Engine"] == {"new_prerelease", "release_removed", "new_package_version"}
    assert kinds["Cache Store"] == {"repo_moved"}
    # archived, its description naming the project that carries on
    assert kinds["Legacy Kernels"] == {"repo_archived", "upstream_superseded"}
    # Gitee: releases, a release candidate, a tag, an archive, a README pin read through its API
    assert kinds["Accel Plugin"] == {"new_release", "new_prerelease", "pin_changed"}
    assert kinds["Kernel Toolkit"] == {"new_tag", "repo_archived"}
    # GitLab: a release, an upcoming release (pre-release), a transfer to another group
    assert kinds["Compiler Toolkit"] == {"new_release", "new_prerelease"}
    assert kinds["Runtime Shim"] == {"new_tag", "repo_moved", "repo_archived"}
    # PyPI: new versions beside the forge's release
    assert kinds["Kernel DSL"] == {"new_release", "new_package_version"}
    for change in report["changes"]:
        host = SOURCES.get(change["project"])
        url = change["evidence_url"]
        if change["kind"] == "new_package_version":
            assert url.startswith("https://pypi.example/project/")
        elif host is not None and url is not None:
            assert url.startswith(host), (change["project"], change["kind"], url)
    assert {(f["project"], f["kind"], f["new"]) for f in report["flags"]} == {
        ("Tile Language", "license_noassertion", False),
        ("Kernel Bench", "no_tagged_release", False),
        ("LLM Deploy", "no_tagged_release", False),
        ("Kernel Toolkit", "no_tagged_release", False),
        ("Runtime Shim", "no_tagged_release", False),
        ("Kernel DSL", "channel_mismatch", True),
    }
    mismatch = next(f for f in report["flags"] if f["kind"] == "channel_mismatch")
    assert mismatch["detail"] == (
        "PyPI has 3.10.0 but the newest GitHub release is v3.9.0 (published without a release?)"
    )
    assert [(e["project"], e["source"]) for e in report["errors"]] == [
        ("Vanished Operators", "github-graphql")
    ]
    rows = {p["name"]: p for p in report["projects"]}
    # the vanished repository keeps its last good state: no "release removed"
    assert (rows["Vanished Operators"]["status"], rows["Vanished Operators"]["version"]) == (
        "error",
        "v5.4.0",
    )
    serving = rows["Serving Engine"]  # the catalog page's convention: the rc is the row
    assert (serving["version"], serving["prerelease"], serving["newest_prerelease"]) == (
        "v0.33.0rc3",
        True,
        None,
    )
    assert (rows["Closed SDK"]["status"], rows["Closed SDK"]["version"]) == ("untracked", None)
    vendor = rows["Vendor Platform"]["license_analysis"]
    assert (rows["Vendor Platform"]["forge_license"], vendor["verdict"]) == (
        "Apache-2.0",
        "match_with_extra_text",
    )
    assert vendor["why"].startswith("GitHub reads Apache-2.0 and ignores the rest: ")
    assert "weights/ are NOT covered" in vendor["extra_text"][0]["text"]
    assert (vendor["restricts"], vendor["extra_text"][0]["finding"]) == (True, "adds a restriction")
    markdown = (latest / "report.md").read_text()
    # the link checks, on the vendor site's links only (the fakes' public hosts are excluded:
    # no request leaves loopback): its platform home moved for good, a guide is failing
    site = next(c["before"] for c in report["changes"] if c["kind"] == "link_moved")
    site = site.removesuffix("/platform/")
    assert site.startswith("http://127.0.0.1:")
    assert [(c["project"], c["kind"], c["before"], c["after"]) for c in report["changes"]
            if c["section"] == "links"] == [
        ("Legacy Kernels", "upstream_superseded", "demo-org/legacy-kernels",
         "demo-org/kernel-dsl"),
        ("Vendor Platform", "link_moved", f"{site}/platform/", f"{site}/platform/v2/"),
    ]  # fmt: skip
    assert [(e["project"], e["url"], e["status"]) for e in report["links"]] == [
        ("Serving Engine", f"{site}/docs/serving/", 404)
    ]
    cost = report["requests"]["sources"]["links"]
    # every link not answered by a forge's snapshot (no request) is one of the site's three
    assert cost["checked"] - cost["answered_by_forge"] == 3 and cost["excluded"] > 0
    # the restriction is said in plain words, in the heading and before the quote
    assert "Adds a restriction (line 203):" in markdown
    assert (
        "| Serving Engine | [v0.33.0rc3](<https://github.com/demo-org/serving-engine/releases/tag/"
        "v0.33.0rc3>) | GitHub release (release candidate) | 2026-11-02 | Apache-2.0 |"
    ) in markdown
    assert (
        "### Vendor Platform — the license text adds a restriction or condition" in markdown
    )
    # the hostile release name is shown, escaped, on one line
    assert "“v3.9.0 \\| \\<b>pwned\\</b> `[click](https://evil.example)` second line”" in markdown
    assert markdown.count("<b>") == markdown.count("\\<b>")  # every one escaped, none raw HTML
    output = result.output.splitlines()
    assert output[0] == f"demo report: {latest.parent}/{Path(output[0]).parent.name}/report.md"
    assert output[1:] == [
        *(
            f"demo export: {tmp_path / 'demo' / 'export' / name}"
            for name in ("snapshot.md", "catalog.json", "catalog.schema.json")
        ),
        f"demo site: {tmp_path / 'demo' / 'site' / 'index.html'}",
        f"demo site: {tmp_path / 'demo' / 'site' / 'catalog.json'}",
    ]


def test_demo_export_is_the_catalog_a_newcomer_can_read(tmp_path: Path) -> None:
    assert CliRunner().invoke(cli, ["demo", "--output", str(tmp_path / "demo")]).exit_code == 0
    export = tmp_path / "demo" / "export"
    catalog = json.loads((export / "catalog.json").read_text())
    assert validate_catalog(catalog) == []
    snapshot = (export / "snapshot.md").read_text()
    assert "| Serving Engine | [v0.33.0rc3](<https://github.com/demo-org/serving-engine/releases/tag/v0.33.0rc3>) (release candidate) | 2026-11-02 | Apache-2.0 |" in snapshot  # noqa: E501
    assert "| Kernel Toolkit | no Gitee release; tracked by tag [v1.1.0](<https://gitee.example/demo-vendor/kernel-toolkit/tree/v1.1.0>) |" in snapshot  # noqa: E501
    assert "| Transfer Library | [v1.5.1](<https://github.com/demo-org/transfer-lib/releases/tag/v1.5.1>) | 2026-10-15 | Apache-2.0 base; bundled examples/device/ep/LICENSE-DeepEP has a separate license |" in snapshot  # noqa: E501
    assert "| Tile Language | [v0.1.14](<https://github.com/demo-org/tile-lang/releases/tag/v0.1.14>) | 2026-09-01 | MIT plus extra text in LICENSE |" in snapshot  # noqa: E501
    integrations = {i["id"]: i for i in catalog["integrations"]}
    cambricon = integrations["vendor-platform/support-matrix/hardware/cambricon-mlu"]
    assert (cambricon["platform"], cambricon["status"], cambricon["version_range"]) == (
        "cambricon-mlu",
        "upstream",
        "v0.33",
    )
    assert cambricon["evidence"][0]["wording"] == "yes supported"
    plugin = integrations["accel-plugin/readme-pins"]
    assert (plugin["project"], plugin["status"], plugin["version_range"]) == (
        "serving-engine",
        "community plugin",
        ">=0.27.1,<0.29.0",
    )
