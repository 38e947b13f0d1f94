"""Issue 20, defects 1, 3 and 4 (and issue 18 defect 11): nothing a reviewer must see is lost
between nights. Through the command line, against the fake GitHub and a vendor site on
loopback and a real database (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import re
import socket
import urllib.parse
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner, Result

from crawler.cli import cli
from crawler.export.snapshot_md import render_snapshot
from crawler.report.markdown import render_markdown
from crawler.report.model import (
    AuditPart,
    ChangeEntry,
    ErrorEntry,
    ProjectEntry,
    Report,
    Summary,
)
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.pages import FakePageServer
from tests.support import GOLDEN, ROOT
from tests.support.audits import a_day_passes
from tests.support.export import seed_export
from tests.support.ops import PROJECTS, TOKEN, WebhookReceiver, command_line_env, upstream
from tests.support.regression import repo

SOURCES = """\
settings: {{allow_private_addresses: true}}
projects:
  - name: Alpha
    repo: org/alpha
  - name: Vendor
    homepage: https://vendor.example
    pages:
      - name: support
        url: {site}/support.html
        tables:
          - name: hardware
            selector: table.hw
            key: [Chip]
            integrations:
              platform: Chip
              status: Status
              layer: serving
            status_map: {{supported: upstream}}
      - name: notes
        url: {site}/notes.html
        pins:
          driver: 'driver ([0-9.]+)'
"""

TABLE = (
    b"<html><body><table class='hw'><tr><th>Chip</th><th>Status</th></tr>"
    b"<tr><td>MLU</td><td>supported</td></tr></table></body></html>"
)
NO_TABLE = b"<html><body><p>The support matrix moved to the partner portal.</p></body></html>"


def _alpha(*tags: str) -> GitHubState:
    return GitHubState(repos=[repo("alpha", 1, tags)])


class Night:
    """``crawler …`` in a working directory, as the nightly job runs it."""

    def __init__(self, workdir: Path, github: FakeGitHub, site: FakePageServer) -> None:
        self.workdir = workdir
        self.github = github
        self.site = site

    def __call__(self, *args: str) -> Result:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    def export(self, *args: str) -> tuple[list[str], dict[str, Any], str]:
        out = self.workdir / "export"
        result = self("export", "--out", str(out), *args)
        assert result.exit_code == 0, result.output
        catalog = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
        return result.output.splitlines(), catalog, (out / "snapshot.md").read_text("utf-8")


@pytest.fixture
def night(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Night]:
    command_line_env(monkeypatch, db_url, tmp_path)
    with FakeGitHub(_alpha("v1.0"), unauth_limit=5000) as github, FakePageServer() as site:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        (tmp_path / "sources.yaml").write_text(SOURCES.format(site=site.base_url))
        site.set_page("/support.html", TABLE)
        site.set_page("/notes.html", b"<p>Tested with driver 5.10.</p>")
        yield Night(tmp_path, github, site)


def _alpha_ref(catalog: dict[str, Any]) -> str:
    return {p["name"]: p for p in catalog["projects"]}["Alpha"]["tracked_ref"]["name"]


def _support(catalog: dict[str, Any]) -> dict[str, Any]:
    (record,) = catalog["integrations"]
    (evidence,) = record["evidence"]
    return dict(evidence)


# -- defect 1: export takes the latest audit, each project's last good state marked -----------


def test_four_nights_with_a_page_that_lost_its_table_export_the_newest_facts(
    night: Night,
) -> None:
    assert night("audit").exit_code == 0  # night 1: all read
    night.site.set_page("/support.html", NO_TABLE)  # night 2 on: the vendor page has no table
    for number, tag in enumerate(("v1.1", "v1.2", "v1.3"), start=2):
        tags = ("v1.0", "v1.1", "v1.2", "v1.3")[: number]
        night.github.set_state(_alpha(*tags))
        assert night("audit").exit_code == 1  # the page's error needs a person
        lines, catalog, snapshot = night.export()
        # the newest audit, with Alpha's newest release; not night 1 (the last complete one)
        assert lines[0].startswith(f"exported audit #{number} (")
        assert catalog["audit"]["id"] == number
        assert _alpha_ref(catalog) == tag
        assert f"| Alpha | [{tag}](" in snapshot
        # the page's facts are night 1's, and say so
        support = _support(catalog)
        assert (support["status"], support["wording"], support["crawled"]) == (
            "upstream", "supported", True,
        )  # fmt: skip
        assert support["stale"] is True
        day = support["date"]
        assert lines[1:2] == [f"stale pages, kept from earlier audits: Vendor page support "
                              f"(facts of {day})"]  # fmt: skip
        vendor = {p["name"]: p for p in catalog["projects"]}["Vendor"]
        assert "stale" not in vendor  # its other page was read
    # an explicit --audit N exports exactly N
    lines, catalog, _snapshot = night.export("--audit", "1")
    assert lines[0].startswith("exported audit #1 (")
    assert _alpha_ref(catalog) == "v1.0"
    assert "stale" not in _support(catalog)
    lines, catalog, _snapshot = night.export("--audit", "3")
    assert (catalog["audit"]["id"], _alpha_ref(catalog)) == (3, "v1.2")


def test_a_project_the_latest_audit_could_not_read_is_exported_stale_with_its_date(
    night: Night, db_url: str
) -> None:
    assert night("audit").exit_code == 0
    night.github.set_state(GitHubState(repos=[]))  # Alpha answers 404 tonight
    assert night("audit").exit_code == 1
    _lines, catalog, _snapshot = night.export()  # its facts are a day old: not stale yet
    assert "stale" not in {p["name"]: p for p in catalog["projects"]}["Alpha"]
    store = Store(db_url)
    try:
        for _ in range(3):  # three days on, Alpha still unread: older than two days
            a_day_passes(store)
    finally:
        store.engine.dispose()
    assert night("audit").exit_code == 1
    lines, catalog, snapshot = night.export()
    assert lines[0].startswith("exported audit #3 (")
    alpha = {p["name"]: p for p in catalog["projects"]}["Alpha"]
    assert alpha["stale"] is True and alpha["tracked_ref"]["name"] == "v1.0"
    day = alpha["last_checked"]
    assert lines[1] == f"stale, kept from earlier audits: Alpha (facts of {day})"
    row = next(r for r in snapshot.splitlines() if r.startswith("| Alpha"))
    assert f"(stale: facts of {day})" in row
    vendor = {p["name"]: p for p in catalog["projects"]}["Vendor"]
    assert "stale" not in vendor


def test_an_export_after_audit_only_marks_no_unchecked_project_stale_until_its_facts_age(
    night: Night, db_url: str
) -> None:
    """An export after ``audit --only Alpha`` marked every other project stale (15 of 17 on the
    shipped catalog): a project's facts are its latest successful audit's, and stale means that
    check is older than ``settings.catalog_stale_after_days`` (default two days)."""
    assert night("audit").exit_code == 0  # night 1: both read
    night.github.set_state(_alpha("v1.0", "v1.1"))
    assert night("audit", "--only", "Alpha").exit_code == 0
    lines, catalog, snapshot = night.export()
    assert lines[0].startswith("exported audit #2 (")
    assert not any("stale" in line for line in lines), lines
    vendor = {p["name"]: p for p in catalog["projects"]}["Vendor"]
    assert "stale" not in vendor
    assert "stale" not in snapshot
    assert _alpha_ref(catalog) == "v1.1"

    store = Store(db_url)
    try:
        for _ in range(2):  # two days later: Vendor's facts are two days old, not stale yet
            a_day_passes(store)
        assert night("audit", "--only", "Alpha").exit_code == 0
        lines, catalog, _snapshot = night.export()
        assert not any("stale" in line for line in lines), lines
        a_day_passes(store)  # a third day: older than two days, stale, and since when
        assert night("audit", "--only", "Alpha").exit_code == 0
        lines, catalog, snapshot = night.export()
    finally:
        store.engine.dispose()
    vendor = {p["name"]: p for p in catalog["projects"]}["Vendor"]
    day = vendor["last_checked"]
    assert day < catalog["audit"]["date"]
    assert vendor["stale"] is True
    assert lines[1] == f"stale, kept from earlier audits: Vendor (facts of {day})"
    alpha = {p["name"]: p for p in catalog["projects"]}["Alpha"]
    assert "stale" not in alpha


# -- defect 3 / issue 18 defect 11: an unreached project is not added -------------------------


def test_a_failed_first_audit_adds_nothing_and_the_first_read_adds_once(
    night: Night, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = socket.getaddrinfo

    def offline(host: Any, *args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    # no network: no name resolves (loopback included, as when the resolver is unreachable)
    monkeypatch.setattr(socket, "getaddrinfo", offline)
    first = night("audit")
    second = night("audit")
    monkeypatch.setattr(socket, "getaddrinfo", real)
    for result in (first, second):
        assert result.exit_code == 1
        line = result.stdout.splitlines()[0]
        assert line.endswith(
            "reached nothing: none of the 2 projects could be read (offline, or every source "
            "unreachable)"
        ), line
    report = json.loads((night.workdir / "reports" / "latest" / "report.json").read_text())
    assert report["changes"] == []
    errors = {e["project"]: e["error"] for e in report["errors"]}
    assert errors["Alpha"] == (
        "no answer from GitHub: DNS lookup failed (ConnectionError); not retried"
    )
    assert "gave up after" not in errors["Alpha"]  # not retried like a timeout

    nothing = night("export")
    assert nothing.exit_code == 2  # no audit read anything: nothing to export, and it says so
    assert "no finished audit in the database: run `crawler audit` first" in nothing.output

    online = night("audit")
    assert online.exit_code == 0, online.output
    report = json.loads((night.workdir / "reports" / "latest" / "report.json").read_text())
    assert [(c["project"], c["kind"]) for c in report["changes"]] == [
        ("Alpha", "project_added"),
        ("Vendor", "project_added"),
    ]
    assert night("audit").exit_code == 0
    report = json.loads((night.workdir / "reports" / "latest" / "report.json").read_text())
    assert report["changes"] == []
    monkeypatch.setattr(socket, "getaddrinfo", offline)
    assert night("audit").exit_code == 1  # offline again: audit #5 fails
    monkeypatch.setattr(socket, "getaddrinfo", real)
    lines, _catalog, _snapshot = night.export()
    assert lines[0].startswith("exported audit #4 (")
    assert "newer audits failed and read nothing, so they are not exported: #5" in lines


# -- defect 4: reading commands change nothing ------------------------------------------------


def test_report_n_leaves_reports_latest_alone(night: Night) -> None:
    assert night("audit").exit_code == 0
    night.github.set_state(_alpha("v1.0", "v1.1"))
    assert night("audit").exit_code == 0
    latest = night.workdir / "reports" / "latest" / "report.json"
    before = latest.read_bytes()
    assert json.loads(before)["audit"]["id"] == 2
    result = night("report", "1")
    assert result.exit_code == 0, result.output
    written = Path(result.output.split("report: ", 1)[1].strip())
    assert json.loads((written.parent / "report.json").read_text())["audit"]["id"] == 1
    assert latest.read_bytes() == before


@pytest.mark.parametrize("command", [["history", "Alpha"], ["report"], ["diff", "1", "2"],
                                     ["export"]])  # fmt: skip
def test_a_reading_command_in_an_empty_folder_creates_no_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CRAWLER_DB_URL", raising=False)
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 2
    assert (
        "no database at db/crawler.sqlite: run `crawler audit` first (or point --db / "
        "CRAWLER_DB_URL at an existing one)"
    ) in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# -- defect 2: changes pending until the catalog takes them ---------------------------------


NOTIFY = """\
notify:
  when: always
  github_issue: {repo: org/catalog, labels: [catalog-audit]}
"""


@pytest.fixture
def nightly(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRAWLER_DB_URL", db_url)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    for name in ("GH_TOKEN", "CRAWLER_NOTIFY", "CRAWLER_ISSUE_REPO", "CRAWLER_REPORT_URL"):
        monkeypatch.delenv(name, raising=False)
    with FakeGitHub(upstream("v1.0"), token=TOKEN) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        yield github


def _audit(hook: WebhookReceiver) -> tuple[dict[str, Any], str]:
    result = CliRunner().invoke(cli, ["audit"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(Path("reports/latest/report.json").read_text())
    return report, hook.json_bodies()[-1]["title"]


def _pending(report: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    return [(p["project"], p["kind"], p["value"], p["first_audit"]) for p in report["pending"]]


def test_a_new_release_stays_pending_until_the_curated_catalog_takes_it(
    nightly: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    Path("catalog").mkdir()
    Path("sources.yaml").write_text(
        "settings: {catalog: catalog/compatibility.json}\n" + NOTIFY + PROJECTS
    )
    with WebhookReceiver() as hook:
        monkeypatch.setenv("CRAWLER_NOTIFY", f"json://127.0.0.1:{hook.port}/")
        _audit(hook)  # night 0: the catalog is made from it
        made = CliRunner().invoke(cli, ["export", "--out", "first"])
        assert made.exit_code == 0, made.output
        Path("catalog/compatibility.json").write_bytes(Path("first/catalog.json").read_bytes())

        nightly.set_state(upstream("v1.0", "v1.1"))  # night 1: a new release
        report, title = _audit(hook)
        assert _pending(report) == [("Alpha", "new_release", "v1.1", 2)]
        since = report["pending"][0]["first_seen"]
        assert title.endswith(f"; 1 new tonight, 1 pending since {since}")
        for _night in (2, 3, 4):  # nothing new, but nothing taken either
            report, title = _audit(hook)
        assert report["changes"] == []
        assert _pending(report) == [("Alpha", "new_release", "v1.1", 2)]
        assert report["pending"][0]["new"] is False
        assert title == (
            "crawler audit #5 complete: 0 changes, 0 flags, 0 errors, 0 deferred; "
            f"0 new tonight, 1 pending since {since}"
        )
        (issue,) = nightly.issues.issues("org/catalog")
        body = issue.body
        assert "## Pending until the catalog takes them" in body
        row = next(line for line in body.splitlines() if line.startswith(f"| {since} | Alpha"))
        assert "| new release |" in row and "v1.1" in row

        merged = CliRunner().invoke(
            cli, ["export", "--out", "second", "--into", "catalog/compatibility.json"]
        )
        assert merged.exit_code == 0, merged.output
        assert (
            f"no longer pending (the catalog holds them): Alpha new release v1.1 "
            f"(since {since})"
        ) in merged.output
        report, title = _audit(hook)
        assert report["pending"] == []
        assert "pending" not in title
        (issue,) = nightly.issues.issues("org/catalog")
        assert "Pending until the catalog takes them" not in issue.body


def test_without_a_curated_catalog_a_change_is_pending_until_acknowledged(
    nightly: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    Path("sources.yaml").write_text(NOTIFY + PROJECTS)
    with WebhookReceiver() as hook:
        monkeypatch.setenv("CRAWLER_NOTIFY", f"json://127.0.0.1:{hook.port}/")
        _audit(hook)
        nightly.set_state(upstream("v1.0", "v1.1"))
        _audit(hook)
        nightly.set_state(upstream("v1.0", "v1.1", "v1.2"))
        report, title = _audit(hook)
        assert _pending(report) == [
            ("Alpha", "new_release", "v1.2", 3),
            ("Alpha", "new_release", "v1.1", 2),
        ]  # newest first
        since = report["pending"][1]["first_seen"]
        assert title.endswith(f"; 1 new tonight, 2 pending since {since}")

        nothing = CliRunner().invoke(cli, ["ack"])
        assert nothing.exit_code == 2
        assert "name the projects to acknowledge, give --kind, or --all" in nothing.output
        other = CliRunner().invoke(cli, ["ack", "Beta"])
        assert other.output == "nothing pending matched: nothing acknowledged\n"
        acked = CliRunner().invoke(cli, ["ack", "Alpha", "--kind", "new_release"])
        assert acked.exit_code == 0, acked.output
        assert acked.output == (
            f"acknowledged 2 pending changes: Alpha new release v1.2 (since {since}); "
            f"Alpha new release v1.1 (since {since})\n"
        )
        report, title = _audit(hook)
        assert report["pending"] == [] and "pending" not in title
        (issue,) = nightly.issues.issues("org/catalog")
        assert "Pending until the catalog takes them" not in issue.body


# -- wording: one fact, one wording ------------------------------------------------------------


def test_the_snapshot_header_names_github_only_when_every_row_is_from_github() -> None:
    export = seed_export()  # as the seed page: vLLM Iluvatar plugin is on Gitee
    assert {p.forge for p in export.projects} == {"GitHub", "Gitee"}
    assert render_snapshot(export).splitlines()[4] == (
        "| Project | Latest release checked | Release date | Repository-level license |"
    )
    github = tuple(replace(p, forge="GitHub") for p in export.projects)
    assert render_snapshot(replace(export, projects=github)).splitlines()[4] == (
        "| Project | Latest GitHub release checked | Release date | Repository-level license |"
    )


def test_report_prose_has_no_internal_names_and_quotes_an_error_whole() -> None:
    report = Report(
        schema_version=2,
        crawler_version="test",
        audit=AuditPart(2, "2026-11-30T03:00:00Z", None, "partial", 1),
        summary=Summary(projects=1, checked=1, checked_in_part=1, errors=1,
                        projects_with_errors=1, deferred=0, untracked=0, stale=0, changes=1,
                        flags=0, changes_by_kind={"license_text_changed": 1}),
        changes=(ChangeEntry("Alpha", "license_text_changed", "licenses",
                             "same license, text edited", None, None,
                             "https://github.com/org/alpha/blob/main/LICENSE", {}),),
        flags=(),
        errors=(ErrorEntry("Alpha", "pypi", "https://pypi.org/pypi/alpha/json",
                           "no answer from PyPI: ConnectError on pypi.org | `x`"),),
        projects=(ProjectEntry(
            name="Alpha", repo="org/alpha", forge="github", forge_label="GitHub",
            repo_url="https://github.com/org/alpha", status="ok", note=None,
            version_source=None, version=None, published_at=None, prerelease=False,
            newest_prerelease=None, license=None, forge_license=None, detected_license=None,
            license_analysis=None, packages=(), url=None),),
        requests={},
    )  # fmt: skip
    markdown = render_markdown(report)
    assert "license_text_changed" not in markdown
    assert "- **Alpha** license text changed: same license, text edited" in markdown
    assert "1 change since audit #1, 0 flags, 1 error." in markdown
    assert (
        "- **Alpha** (pypi): `` no answer from PyPI: ConnectError on pypi.org | `x` `` — "
        "[page](<https://pypi.org/project/alpha/>); the last good state, if any, is kept"
    ) in markdown


# -- the Explorer for the person reading it --------------------------------------------------


def test_the_explorer_puts_the_matrix_first_and_marks_what_the_audit_could_not_read(
    night: Night, db_url: str
) -> None:
    assert night("audit").exit_code == 0
    store = Store(db_url)
    try:
        for _ in range(3):  # Alpha's facts are three days old when it cannot be read
            a_day_passes(store)
    finally:
        store.engine.dispose()
    night.site.set_page("/support.html", NO_TABLE)
    night.github.set_state(GitHubState(repos=[]))  # Alpha answers 404 tonight
    assert night("audit").exit_code == 1
    result = night("export", "--out", "export", "--site", "site")
    assert result.exit_code == 0, result.output
    soup = BeautifulSoup((night.workdir / "site" / "index.html").read_text("utf-8"), "html.parser")
    catalog = json.loads((night.workdir / "export" / "catalog.json").read_text("utf-8"))
    day = {p["name"]: p for p in catalog["projects"]}["Alpha"]["last_checked"]
    page_day = _support(catalog)["date"]
    # the matrix is the first section; the changes (if any) come after it, folded
    main = soup.find("main")
    assert main.find(["section", "details"])["class"] == ["matrix-section"]
    # Alpha could not be read: its card says so, with the date of its facts
    card = soup.find("article", attrs={"data-project": "Alpha"})
    assert "stale" in card["class"]
    assert card.h4.find(class_="stale").get_text() == f"stale: facts of {day}"
    # Vendor was read, but not its support page: the record in the matrix says so
    (record,) = soup.select('#matrix tr[data-project="Vendor"] td p')
    assert record["class"] == ["stale"]
    assert record.find(class_="stale").get_text() == f"stale: page facts of {page_day}"
    assert "stale" not in soup.find("article", attrs={"data-project": "Vendor"})["class"]


def test_the_readme_filter_link_matches_the_demos_data() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    (example,) = re.findall(r"demo-output/site/index\.html#([^`\s]+)", readme)
    wanted = dict(urllib.parse.parse_qsl(example))
    golden = GOLDEN / "demo-export" / "catalog.json"
    demo = json.loads(golden.read_text("utf-8"))
    platforms = {p["id"]: p["name"] for p in demo["platforms"]}
    matching = [
        i["project"]
        for i in demo["integrations"]
        if platforms[i["platform"]] == wanted["platform"] and i["status"] == wanted["status"]
    ]
    assert sorted(wanted) == ["platform", "status"] and matching, (wanted, matching)


def test_history_dates_its_lines_in_iso_8601_utc(night: Night) -> None:
    assert night("audit").exit_code == 0
    result = night("history", "Alpha")
    assert result.exit_code == 0, result.output
    (line,) = result.output.splitlines()
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  audit #1  v1\.0 \(release, 2026-10-01T10:00:00Z\)  "
        r"license: MIT",
        line,
    ), line
    (row,) = json.loads(night("history", "Alpha", "--json").output)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row["date"]), row
