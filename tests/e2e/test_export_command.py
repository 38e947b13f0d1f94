"""`crawler export` over stored audits: golden files from the demo's two nights, a re-export
that is byte-identical, a merge into a curated catalog, and facts that come from the database,
not from today's sources.yaml."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli import cli
from crawler.demo.scenario import DEMO_PROJECTS_AFTER
from crawler.store import Store
from tests.support import GOLDEN as GOLDEN_DIR

GOLDEN = GOLDEN_DIR / "demo-export"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(cli, ["demo", "--output", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _stable(text: str, today: str) -> str:
    """The demo audits today, with loopback ports the system picks: pin both for the golden
    files (upstream dates in the demo's states are fixed and stay)."""
    text = re.sub(r"http://127\.0\.0\.1:\d+", "http://127.0.0.1:PORT", text)
    return text.replace(today, "TODAY")


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def _config(demo: Path) -> Path:
    """The demo's second-night sources.yaml (row order, table mappings), on the loopback port
    its vendor site had (its homepages are in the records)."""
    catalog = json.loads((demo / "export" / "catalog.json").read_text(encoding="utf-8"))
    home = next(p["homepage"] for p in catalog["projects"] if p["name"] == "Vendor Platform")
    path = demo / "sources.yaml"
    path.write_text(DEMO_PROJECTS_AFTER.format(site=home.removesuffix("/platform/")), "utf-8")
    return path


def _export(demo: Path, out: Path, *extra: str, config: Path | None = None) -> list[str]:
    db = f"sqlite:///{demo / 'demo.sqlite'}"
    where = str(config or demo / "none.yaml")
    args = ["export", "--db", db, "--out", str(out), "--config", where, *extra]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_the_demo_export_matches_the_golden_files_and_is_byte_identical(
    demo: Path, tmp_path: Path
) -> None:
    first = demo / "export"
    today = json.loads((first / "catalog.json").read_text(encoding="utf-8"))["audit"]["date"]
    for name in ("snapshot.md", "catalog.json"):
        _golden(name, _stable((first / name).read_text(encoding="utf-8"), today))
    again = tmp_path / "again"
    lines = _export(demo, again, "--audit", "2", config=_config(demo))
    assert lines[0] == "exported audit #2 (" + lines[0].split("(")[1].split(")")[0] + "): " + (
        "17 projects, 15 checked in that audit, 1 not trackable"
    )
    for name in ("snapshot.md", "catalog.json", "catalog.schema.json"):
        assert (again / name).read_bytes() == (first / name).read_bytes(), name
    catalog = (first / "catalog.json").read_text(encoding="utf-8")
    assert catalog.endswith("}\n") and '\n  "audit": {\n' in catalog  # sorted, two-space indent


def test_an_older_audit_exports_its_own_facts(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "first-night"
    _export(demo, out, "--audit", "1", config=_config(demo))
    snapshot = (out / "snapshot.md").read_text(encoding="utf-8")
    assert (
        "| Kernel DSL | [v3.8.0](<https://github.com/demo-org/kernel-dsl/releases/tag/v3.8.0>) |"
        in snapshot
    )
    assert "| Retired Plugin |" in snapshot and "| New Accelerator Plugin |" not in snapshot
    catalog = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    assert catalog["audit"]["id"] == 1
    cambricon = next(i for i in catalog["integrations"] if i["platform"] == "cambricon-mlu")
    assert (cambricon["status"], cambricon["evidence"][0]["wording"]) == (
        "in progress",
        "in progress",
    )


def test_facts_come_from_the_database_and_sources_yaml_only_orders_and_maps(
    demo: Path, tmp_path: Path
) -> None:
    """Without any sources.yaml the export still has every observed fact (rows in stored
    order, no integration mapping); with the demo's file, rows follow it and tables map."""
    bare = tmp_path / "bare"
    _export(demo, bare, "--audit", "2")
    catalog = json.loads((bare / "catalog.json").read_text(encoding="utf-8"))
    assert catalog["integrations"] == []  # the mapping lives in sources.yaml, not the database
    names = [p["name"] for p in catalog["projects"]]
    assert names == sorted(names)  # the stored order (the database keeps a sorted name list)
    mapped = tmp_path / "mapped"
    _export(demo, mapped, "--audit", "2", config=_config(demo))
    with_config = json.loads((mapped / "catalog.json").read_text(encoding="utf-8"))
    assert [p["name"] for p in with_config["projects"]][:3] == [
        "Kernel DSL",
        "Serving Engine",
        "Tile Language",
    ]
    assert len(with_config["integrations"]) == 5
    # the observed facts are the same either way
    by_name = {p["name"]: p for p in catalog["projects"]}
    for project in with_config["projects"]:
        assert project["tracked_ref"] == by_name[project["name"]]["tracked_ref"]
        assert project["license"] == by_name[project["name"]]["license"]


def test_merge_into_a_curated_catalog_keeps_curation_and_reports_conflicts(
    demo: Path, tmp_path: Path
) -> None:
    first = tmp_path / "night1"
    _export(demo, first, "--audit", "1", "--config", str(tmp_path / "x.yaml"))
    config = tmp_path / "sources.yaml"
    config.write_text(DEMO_PROJECTS_AFTER.format(site="http://127.0.0.1:1"), encoding="utf-8")
    db = f"sqlite:///{demo / 'demo.sqlite'}"
    night1 = tmp_path / "n1"
    assert (
        CliRunner()
        .invoke(
            cli,
            ["export", "--db", db, "--out", str(night1), "--config", str(config), "--audit", "1"],
        )
        .exit_code
        == 0
    )
    curated_path = tmp_path / "curated.json"
    curated = json.loads((night1 / "catalog.json").read_text(encoding="utf-8"))
    cambricon_id = "vendor-platform/support-matrix/hardware/cambricon-mlu"
    for record in curated["integrations"]:
        if record["id"] == cambricon_id:
            record["notes"] = "vendor says upstreaming is planned for Q1"
    curated["projects"][0]["maturity"] = "production"
    curated_path.write_text(json.dumps(curated, indent=2) + "\n", encoding="utf-8")

    out = tmp_path / "night2"
    result = CliRunner().invoke(
        cli,
        [
            "export",
            "--db",
            db,
            "--out",
            str(out),
            "--config",
            str(config),
            "--audit",
            "2",
            "--into",
            str(curated_path),
        ],
    )
    assert result.exit_code == 0, result.output
    merged = json.loads(curated_path.read_text(encoding="utf-8"))
    record = next(r for r in merged["integrations"] if r["id"] == cambricon_id)
    # the curated status is kept, the page's new reading is evidence and a reported conflict
    assert record["status"] == "in progress"
    assert record["notes"] == "vendor says upstreaming is planned for Q1"
    assert record["evidence"][0]["status"] == "upstream"
    assert merged["projects"][0]["maturity"] == "production"
    assert merged["audit"]["id"] == 2
    report = json.loads((out / "merge-report.json").read_text(encoding="utf-8"))
    assert [c["path"] for c in report["conflicts"]] == [
        f"$.integrations[{merged['integrations'].index(record)}].status"
    ]
    assert {a["id"] for a in report["added"]} == {"new-accelerator-plugin"}
    assert "conflict" in result.output
    assert result.output.count(str(curated_path)) >= 1


def test_a_killed_or_missing_audit_is_refused(demo: Path, tmp_path: Path) -> None:
    db = f"sqlite:///{demo / 'demo.sqlite'}"
    result = CliRunner().invoke(
        cli, ["export", "--db", db, "--audit", "99", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "no audit 99 in the database" in result.output
    empty = f"sqlite:///{tmp_path / 'empty.sqlite'}"
    Store(empty).close()
    result = CliRunner().invoke(cli, ["export", "--db", empty, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "no finished audit in the database: run `crawler audit` first" in result.output


def test_exported_files_are_readable_like_any_file_written_under_the_umask(demo: Path) -> None:
    """Regression: written through mkstemp, the export and the site were mode 0600, which a
    web server serving the site (GitHub Pages, nginx) cannot read."""
    import os
    import stat

    mask = os.umask(0)
    os.umask(mask)
    for folder in ("export", "site"):
        for path in (demo / folder).iterdir():
            assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask, path


def test_the_explorer_is_built_from_the_stored_history_and_the_audits_changes(
    demo: Path,
) -> None:
    from datetime import date

    from crawler.audit import source_names
    from crawler.export import build_catalog
    from crawler.export.from_store import chosen_audit, export_input, site_input
    from crawler.export.site import HistoryPoint
    from crawler.store import Store

    store = Store(f"sqlite:///{demo / 'demo.sqlite'}")
    try:
        audit = chosen_audit(store, 2)
        labels = {n: names.label for n, names in source_names().items()}
        export = export_input(store, audit, None, labels)
        site = site_input(store, audit, export, build_catalog(export), None, 3)
    finally:
        store.close()
    assert site.history["Kernel DSL"] == [
        HistoryPoint(date(2026, 10, 1), "release", "v3.8.0"),
        HistoryPoint(date(2026, 10, 27), "release", "v3.9.0"),
    ]
    assert site.history["Serving Engine"][-1] == HistoryPoint(
        date(2026, 11, 2), "release", "v0.33.0rc3", prerelease=True
    )
    assert site.history["Kernel Bench"] == [
        HistoryPoint(date(2026, 8, 1), "tag", "v0.1.0"),
        HistoryPoint(date(2026, 11, 1), "tag", "v0.2.0"),
    ]
    assert [(p.kind, p.date) for p in site.history["LLM Deploy"]] == [
        ("commit", date(2026, 10, 30)),
        ("commit", date(2026, 11, 3)),
    ]
    assert len(site.changes) == 29
    assert ("Legacy Kernels", "upstream_superseded") in {(c.project, c.kind) for c in site.changes}
    assert ("Cache Store", "repo_moved") in {(c.project, c.kind) for c in site.changes}
    assert site.stale_after_days == 3
    assert (demo / "site" / "index.html").read_text(encoding="utf-8").count("v0.33.0rc3") >= 2
