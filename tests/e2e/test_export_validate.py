"""`crawler validate`: each class of bad record is reported at its JSON path with exit 1."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crawler.cli import cli
from crawler.export import build_catalog, validate_catalog
from tests.support.export import seed_export

TODAY = date(2026, 12, 1)


def _good() -> dict[str, Any]:
    return build_catalog(seed_export())


def _run(tmp_path: Path, text: str) -> tuple[int, str]:
    path = tmp_path / "catalog.json"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(path)])
    return result.exit_code, result.output


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if value is _DELETE:
            del target[last]
        else:
            target[last] = value

    return change


_DELETE = object()


def _duplicate_platform(data: dict[str, Any]) -> None:
    data["platforms"].append(copy.deepcopy(data["platforms"][0]))


BAD = [
    ("duplicate id", _duplicate_platform, "$.platforms[5].id",
     "duplicate id 'enflame-gcu' (first at $.platforms[0]): give each record its own id, or "
     "merge the two records"),
    ("dangling platform", _set("integrations.3.platform", "biren-gpu"),
     "$.integrations[3].platform",
     "'biren-gpu' is not the id of any record in $.platforms: add that record or fix the "
     "reference"),
    ("dangling project", _set("integrations.0.project", "pytorch"), "$.integrations[0].project",
     "'pytorch' is not the id of any record in $.projects: add that record or fix the reference"),
    ("unknown status", _set("integrations.2.status", "supported"), "$.integrations[2].status",
     '"supported" is not a known support status: use one of upstream, official plugin, vendor '
     "integration, community plugin, in progress, unverified"),
    ("unknown layer", _set("integrations.2.layer", "inference"), "$.integrations[2].layer",
     '"inference" is not a known software layer: use one of framework, compiler, kernel '
     "programming, kernel library, serving, distributed serving, platform sdk"),
    ("future date", _set("projects.1.last_checked", "2027-01-02"), "$.projects[1].last_checked",
     "2027-01-02 is in the future (today is 2026-12-01): use the date the source was observed"),
    ("unparsable date", _set("integrations.0.evidence.0.date", "2026-13-01"),
     "$.integrations[0].evidence[0].date", '"2026-13-01" is not a date (YYYY-MM-DD): fix it'),
    ("non-http URL", _set("projects.0.evidence.1.url", "ftp://example.com/x"),
     "$.projects[0].evidence[1].url",
     '"ftp://example.com/x" is not a valid http(s) URL: links must start with http:// or '
     "https:// and name a host"),
    ("javascript URL", _set("projects.2.tracked_ref.url", "javascript:alert(1)"),
     "$.projects[2].tracked_ref.url",
     '"javascript:alert(1)" is not a valid http(s) URL or null: links must start with http:// '
     "or https:// and name a host"),
    ("claim without evidence", _set("integrations.4.evidence", []), "$.integrations[4].evidence",
     "an integration claim without evidence: add at least one evidence record (the source's "
     "url and the date it was observed)"),
    ("evidence missing", _set("integrations.4.evidence", _DELETE), "$.integrations[4].evidence",
     "required field 'evidence' is missing: add at least one evidence record (the source's url "
     "and date)"),
    ("wrong type", _set("projects.3.tracked_ref.prerelease", "yes"),
     "$.projects[3].tracked_ref.prerelease", '"yes" is a string, expected boolean: fix its type'),
    ("wrong type of an id", _set("audit.id", "7"), "$.audit.id",
     '"7" is a string, expected integer: fix its type'),
    ("wrong type of a list", _set("integrations.3.pins", "2.10.0"), "$.integrations[3].pins",
     '"2.10.0" is a string, expected array: fix its type'),
]  # fmt: skip


@pytest.mark.parametrize(("what", "change", "path", "message"), BAD, ids=[b[0] for b in BAD])
def test_each_bad_record_is_reported_at_its_path(
    what: str, change: Callable[[dict[str, Any]], None], path: str, message: str
) -> None:
    data = _good()
    change(data)
    problems = validate_catalog(data, today=TODAY)
    assert [(p.path, p.message) for p in problems] == [(path, message)]


def test_cli_exit_1_prints_each_problem_with_its_path(tmp_path: Path) -> None:
    data = _good()
    data["integrations"][3]["platform"] = "biren-gpu"
    data["integrations"][2]["status"] = "supported"
    code, output = _run(tmp_path, json.dumps(data))
    assert code == 1
    assert output.splitlines() == [
        '$.integrations[2].status: "supported" is not a known support status: use one of '
        "upstream, official plugin, vendor integration, community plugin, in progress, unverified",
        "$.integrations[3].platform: 'biren-gpu' is not the id of any record in $.platforms: "
        "add that record or fix the reference",
        f"{tmp_path / 'catalog.json'}: 2 problems: not a valid catalog",
    ]


def test_cli_accepts_the_export_with_exit_0(tmp_path: Path) -> None:
    from crawler.export import export_files

    code, output = _run(tmp_path, export_files(seed_export())["catalog.json"])
    assert (code, output) == (
        0,
        f"{tmp_path / 'catalog.json'}: valid catalog (11 projects, 5 platforms, 7 integrations)\n",
    )


def test_curated_extras_are_allowed(tmp_path: Path) -> None:
    data = _good()
    data["projects"][0]["notes"] = "checked by hand"
    data["platforms"].append({"id": "biren-gpu", "name": "Biren GPU", "vendor": "Biren"})
    data["integrations"].append(
        {
            "id": "curated/biren",
            "project": "vllm",
            "platform": "biren-gpu",
            "layer": "serving",
            "status": "unverified",
            "evidence": [{"url": "https://example.com/case", "date": "2026-04-28"}],
            "maturity": "vendor-reported",
        }
    )
    assert validate_catalog(data, today=TODAY) == []


def test_cli_exit_2_on_a_file_that_is_not_json(tmp_path: Path) -> None:
    code, output = _run(tmp_path, '{"projects": [\n  {"id": "x",}\n]}')
    assert code == 2
    assert output == (
        f"{tmp_path / 'catalog.json'}:2:14: not JSON: Expecting property name enclosed in double "
        "quotes: fix the syntax\n"
    )
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"name": "caf\xe9"}')
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2 and "not UTF-8 text" in result.output
