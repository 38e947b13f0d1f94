"""A nightly ``crawler export --into`` is quiet when nothing changed.

Each record's evidence carried the audit's number and date (``"audit": N, "date": …``) and
each project its ``last_checked``, so an unchanged night rewrote every record and every catalog
pull request was a diff of the whole file. An unchanged night changes only the catalog-level
"checked on" date (the snapshot's sentence, ``catalog.json``'s ``audit`` block); a change
touches only its own record. Through the command line, against the fake GitHub and a vendor
site on loopback, on both databases; the nights are days apart (the test clock moves the
stored audits one day back, as ``tests.support.audits.a_day_passes`` does).
"""

from __future__ import annotations

import difflib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli import cli
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.pages import FakePageServer
from tests.support.audits import a_day_passes
from tests.support.ops import command_line_env
from tests.support.regression import repo

SOURCES = """\
settings: {{allow_private_addresses: true}}
projects:
  - name: Alpha
    repo: org/alpha
  - name: Beta
    repo: org/beta
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
            status_map: {{supported: upstream, experimental: in progress}}
"""

TABLE = (
    b"<html><body><table class='hw'><tr><th>Chip</th><th>Status</th></tr>"
    b"<tr><td>MLU</td><td>supported</td></tr>"
    b"<tr><td>NPU</td><td>experimental</td></tr></table></body></html>"
)


def _state(*alpha: str) -> GitHubState:
    return GitHubState(repos=[repo("alpha", 1, alpha), repo("beta", 2, ("v2.0",))])


class Nights:
    def __init__(self, workdir: Path, github: FakeGitHub, db_url: str) -> None:
        self.workdir = workdir
        self.github = github
        self.db_url = db_url

    def run(self, *args: str) -> str:
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    def a_day_passes(self) -> None:
        store = Store(self.db_url)
        try:
            a_day_passes(store)
        finally:
            store.engine.dispose()

    def audit_then_export_the_next_day(self) -> dict[str, list[str]]:
        """Tonight's audit; a day later, the export of it into the curated catalog (so the
        next night's audit, today, is a day after this one): the files as written."""
        self.run("audit")
        self.a_day_passes()
        self.run("export", "--out", "export", "--into", "catalog.json")
        return self.files()

    def audit_then_export(self) -> dict[str, list[str]]:
        self.run("audit")
        self.run("export", "--out", "export", "--into", "catalog.json")
        return self.files()

    def files(self) -> dict[str, list[str]]:
        return {
            "catalog.json": (self.workdir / "catalog.json").read_text("utf-8").splitlines(),
            "snapshot.md": (self.workdir / "export" / "snapshot.md").read_text().splitlines(),
        }


@pytest.fixture
def nights(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Nights]:
    command_line_env(monkeypatch, db_url, tmp_path)
    with FakeGitHub(_state("v1.0"), unauth_limit=5000) as github, FakePageServer() as site:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        (tmp_path / "sources.yaml").write_text(SOURCES.format(site=site.base_url))
        site.set_page("/support.html", TABLE)
        found = Nights(tmp_path, github, db_url)
        found.run("audit")  # night 1: the curated catalog is made from it
        found.run("export", "--out", "first")
        shutil.copy(tmp_path / "first" / "catalog.json", tmp_path / "catalog.json")
        found.a_day_passes()
        yield found


def _changed(before: list[str], after: list[str]) -> list[tuple[list[str], list[str]]]:
    """Each hunk of the diff: (the lines it removes, the lines it adds)."""
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    return [
        (before[i1:i2], after[j1:j2])
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _hunks(before: list[str], after: list[str]) -> list[list[str]]:
    """The unified diff's hunks (three lines of context, as git shows them), each its lines."""
    found: list[list[str]] = []
    for line in difflib.unified_diff(before, after, lineterm="", n=3):
        if line.startswith("@@"):
            found.append([])
        elif found:
            found[-1].append(line)
    return found


def _record_span(lines: list[str], ident: str) -> tuple[int, int]:
    """Where one record of catalog.json is: its first and past-its-last line (two-space
    indent: a record opens with ``    {`` and closes with ``    }``)."""
    start = lines.index(f'      "id": "{ident}",')
    first = max(i for i in range(start) if lines[i] == "    {")
    last = next(i for i in range(start, len(lines)) if lines[i].startswith("    }"))
    return first, last + 1


def test_two_unchanged_nights_differ_only_in_the_catalog_level_date(nights: Nights) -> None:
    second = nights.audit_then_export_the_next_day()  # night 2
    second_catalog = json.loads("\n".join(second["catalog.json"]))
    third = nights.audit_then_export()  # night 3: nothing upstream changed
    third_catalog = json.loads("\n".join(third["catalog.json"]))
    day2, day3 = second_catalog["audit"]["date"], third_catalog["audit"]["date"]
    assert day2 < day3
    id2, id3 = second_catalog["audit"]["id"], third_catalog["audit"]["id"]
    assert (id2, id3) == (2, 3)

    # catalog.json: the audit block, and nothing else
    assert _changed(second["catalog.json"], third["catalog.json"]) == [
        (
            [f'    "date": "{day2}",', f'    "id": {id2}'],
            [f'    "date": "{day3}",', f'    "id": {id3}'],
        )
    ]
    # snapshot.md: the "checked on" sentence, and nothing else
    [(removed, added)] = _changed(second["snapshot.md"], third["snapshot.md"])
    assert [line.replace(day2, day3) for line in removed] == added
    assert len(added) == 1 and f"checked on {day3}." in added[0]
    # no record carries tonight's date or audit where it says nothing
    for record in third_catalog["projects"]:
        assert "last_checked" not in record, record
        assert all(set(e) == {"about", "url", "crawled"} for e in record["evidence"]), record
    for record in third_catalog["integrations"]:
        for evidence in record["evidence"]:
            # read tonight: no date of its own (not its state's fetch day, which the store
            # keeps from the night the project last changed)
            assert evidence["crawled"] is True and "audit" not in evidence, evidence
            assert "date" not in evidence, evidence


def test_a_new_release_changes_only_its_record_and_the_catalog_date(nights: Nights) -> None:
    before = nights.audit_then_export_the_next_day()
    nights.github.set_state(_state("v1.0", "v1.1"))  # Alpha publishes v1.1
    after = nights.audit_then_export()
    old = json.loads("\n".join(before["catalog.json"]))
    new = json.loads("\n".join(after["catalog.json"]))
    hunks = _hunks(before["catalog.json"], after["catalog.json"])
    # as git shows it: one hunk for the audit block, one for the change, inside Alpha's record
    assert len(hunks) == 2, hunks
    assert [line for line in hunks[0] if line[0] in "+-"] == [
        f'-    "date": "{old["audit"]["date"]}",', f'-    "id": {old["audit"]["id"]}',
        f'+    "date": "{new["audit"]["date"]}",', f'+    "id": {new["audit"]["id"]}',
    ]  # fmt: skip
    edited = [line[1:] for line in hunks[1] if line[0] in "+-"]
    assert any("v1.1" in line for line in edited) and any("v1.0" in line for line in edited)
    was, now = (
        _record_span(before["catalog.json"], "alpha"),
        _record_span(after["catalog.json"], "alpha"),
    )
    matcher = difflib.SequenceMatcher(
        a=before["catalog.json"], b=after["catalog.json"], autojunk=False
    )
    edits = [op for op in matcher.get_opcodes() if op[0] != "equal"][1:]  # past the audit block
    assert edits and all(
        was[0] <= i1 <= i2 <= was[1] and now[0] <= j1 <= j2 <= now[1]
        for _tag, i1, i2, j1, j2 in edits
    ), edits
    # everything else is as it was: every other record, byte for byte
    old_records = {r["id"]: r for r in old["projects"] + old["integrations"]}
    new_records = {r["id"]: r for r in new["projects"] + new["integrations"]}
    assert [i for i in new_records if new_records[i] != old_records[i]] == ["alpha"]
    assert new_records["alpha"]["tracked_ref"]["name"] == "v1.1"
    # snapshot.md: the "checked on" sentence and Alpha's row
    snapshot_hunks = _changed(before["snapshot.md"], after["snapshot.md"])
    changed_lines = [line for _removed, added in snapshot_hunks for line in added]
    assert len(changed_lines) == 2, snapshot_hunks
    assert "checked on" in changed_lines[0] and changed_lines[1].startswith("| Alpha | [v1.1](")
