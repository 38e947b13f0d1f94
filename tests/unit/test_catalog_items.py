"""Items no source reads on their own (``part_of``, ``not_trackable``), the page's layers and
snapshot rows in ``sources.yaml``: what is refused (with file, line and what to do), what
``crawler check`` counts and what it warns about."""

from __future__ import annotations

import pytest

from crawler.config import (
    ConfigError,
    coverage,
    item_warnings,
    load_config,
    parse_config,
    standing,
)
from crawler.report.words import coverage_line
from tests.support import ROOT

HOST = "  - name: PyTorch\n    repo: pytorch/pytorch\n"


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "sources.yaml")
    return str(info.value)


def test_a_riding_item_needs_no_source_and_shows_as_riding() -> None:
    config = parse_config(
        f"projects:\n{HOST}  - name: TorchInductor\n    part_of: PyTorch\n    layer: compiler\n"
    )
    inductor = config.project("TorchInductor")
    assert (inductor.part_of, inductor.forge, inductor.channels, inductor.layer) == (
        "PyTorch", None, (), "compiler"
    )
    assert [standing(p) for p in config.projects] == ["tracked", "riding"]


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ("    repo: pytorch/other\n", "'repo'"),
        ("    pypi: torch-inductor\n", "'pypi'"),
        ("    pages:\n      - {name: p, url: 'https://x.example/', pins: {v: 'v(\\d)'}}\n",
         "'pages'"),
    ],
)  # fmt: skip
def test_a_riding_item_that_names_a_source_is_refused(extra: str, named: str) -> None:
    text = f"projects:\n{HOST}  - name: TorchInductor\n    part_of: PyTorch\n{extra}"
    assert _error(text) == (
        f"sources.yaml:4: project 'TorchInductor': rides on 'PyTorch' (part_of) but also names "
        f"{named}: a riding item has no source of its own; remove them, or drop part_of to "
        "track it on its own"
    )


def test_part_of_an_unknown_item_is_refused_with_the_closest_name() -> None:
    text = f"projects:\n{HOST}  - name: TorchInductor\n    part_of: Pytorch\n"
    assert _error(text) == (
        "sources.yaml:5: project 'TorchInductor': part_of 'Pytorch' names no item of this "
        "file (did you mean 'PyTorch'?)"
    )
    assert _error(text.replace("Pytorch", "Nothing like it")) == (
        "sources.yaml:5: project 'TorchInductor': part_of 'Nothing like it' names no item of "
        "this file: add that item or fix the name"
    )


def test_a_chain_of_riding_items_is_refused() -> None:
    text = (
        f"projects:\n{HOST}  - name: TorchInductor\n    part_of: PyTorch\n"
        "  - name: Inductor CPU\n    part_of: TorchInductor\n"
    )
    assert _error(text) == (
        "sources.yaml:7: project 'Inductor CPU': part_of 'TorchInductor' is itself part of "
        "'PyTorch' (line 4): name 'PyTorch' directly; an item rides on a tracked item, not on "
        "a chain"
    )


def test_an_item_cannot_ride_on_itself_or_on_an_item_no_source_follows() -> None:
    assert _error("projects:\n  - name: A\n    part_of: A\n") == (
        "sources.yaml:2: project 'A': part_of names the item itself: name the item it ships with"
    )
    text = (
        "projects:\n  - name: Neuware\n    not_trackable: closed SDK\n"
        "  - name: CNToolkit\n    part_of: Neuware\n"
    )
    assert _error(text) == (
        "sources.yaml:5: project 'CNToolkit': part_of 'Neuware' (line 2) is followed by no "
        "source, so there are no facts to show: say 'not_trackable: <why>' instead"
    )


def test_riding_and_not_trackable_exclude_each_other() -> None:
    text = f"projects:\n{HOST}  - name: X\n    part_of: PyTorch\n    not_trackable: closed\n"
    assert _error(text) == (
        "sources.yaml:4: project 'X': has both 'part_of' and 'not_trackable': an item that "
        "ships with another shows that item's facts; keep one of them"
    )


def test_not_trackable_needs_a_reason_and_no_source() -> None:
    config = parse_config(
        "projects:\n  - name: Neuware\n    not_trackable: ' closed SDK;\n      no version list "
        "of its own'\n    homepage: https://developer.cambricon.com\n"
        "  - name: DTK\n    not_trackable: no public repository\n"
    )
    neuware, dtk = config.projects
    assert neuware.not_trackable == "closed SDK; no version list of its own"  # one line
    assert (dtk.not_trackable, dtk.homepage) == ("no public repository", None)
    assert _error("projects:\n  - name: DTK\n    not_trackable: '  '\n") == (
        "sources.yaml:3: project 'DTK': not_trackable: must not be empty: name the item it "
        "ships with, or say why"
    )
    assert _error("projects:\n  - name: DTK\n    not_trackable: closed\n    repo: o/r\n") == (
        "sources.yaml:2: project 'DTK': says not_trackable but names 'repo': an item a source "
        "can follow is trackable; remove not_trackable or the source"
    )
    long = "x" * 301
    assert _error(f"projects:\n  - name: DTK\n    not_trackable: {long}\n") == (
        "sources.yaml:3: project 'DTK': not_trackable: is 301 characters long: say it in at "
        "most 300"
    )


def test_the_layer_is_one_of_the_catalogs_layers() -> None:
    message = _error("projects:\n  - name: A\n    repo: o/r\n    layer: compilers\n")
    assert message == (
        "sources.yaml:4: project 'A': layer: 'compilers' is not one of 'framework', 'compiler', "
        "'kernel programming', 'kernel library', 'serving', 'distributed serving', "
        "'platform sdk' (did you mean 'compiler'?)"
    )
    assert _error("projects:\n  - name: A\n    repo: o/r\n    snapshot: maybe\n") == (
        "sources.yaml:4: project 'A': snapshot: must be true or false, not 'maybe'"
    )


CATALOG = """projects:
  - name: PyTorch
    repo: pytorch/pytorch
    snapshot: true
  - name: TorchInductor
    part_of: PyTorch
  - name: Old SDK
    homepage: https://vendor.example/sdk
  - name: Neuware
    not_trackable: closed SDK
  - name: torch-gcu
    repo: e/torch-gcu
    pages:
      - name: compatibility
        path: README.md
        tables:
          - {name: sdk, heading: SDK, key: [SDK]}
          - name: hardware
            heading: Hardware
            key: [Model]
            integrations: {platform: {value: Enflame GCU}, status: {value: vendor integration},
                           layer: framework}
  - name: Vendor docs
    repo: v/docs
    pages:
      - {name: notes, url: 'https://vendor.example/notes', pins: {sdk: 'SDK (\\\\d+)'}}
"""


def test_check_counts_every_standing_and_warns_about_what_gives_no_record() -> None:
    config = parse_config(CATALOG, "sources.yaml")
    found = coverage(config.projects)
    assert (found.items, found.tracked, found.riding, found.not_trackable, found.no_source) == (
        6, 3, 1, 1, 1
    )
    assert (found.evidence_pages, found.watched_pages, found.platforms, found.snapshot_rows) == (
        1, 2, ("Enflame GCU",), 1
    )
    assert coverage_line(found) == (
        "6 items: 3 tracked, 1 part of another item, 1 not trackable, 1 with neither a source "
        "nor a reason; 1 snapshot row; 2 pages watched, 1 give records on 1 platform "
        "(Enflame GCU)"
    )
    assert item_warnings(config.projects, "sources.yaml") == [
        "sources.yaml:7: project 'Old SDK': no source and no reason: add 'not_trackable: <why "
        "no source can follow it>', or a source ('repo', 'pypi', a page…)",
        "sources.yaml:11: project 'torch-gcu': page 'compatibility', table 'sdk' has no "
        "'integrations' mapping: its rows become no integration record (or say why: "
        "'no_records: <why>' on the table)",
        "sources.yaml:23: project 'Vendor docs': page 'notes' has no mappings: its facts become "
        "no integration record; add 'integrations' (with status_map/platform_map) to a table, "
        "or 'integration:' to the page, or say why it is watched for its changes alone "
        "('no_records: <why>')",
    ]


def test_a_page_or_table_watched_for_its_changes_alone_says_why_and_check_takes_it() -> None:
    """`no_records: WHY` on a page (pins, text, unmapped tables) or on one table keeps `crawler
    check` quiet about it; saying it beside a mapping is refused (one of them is wrong)."""
    explained = CATALOG.replace(
        "          - {name: sdk, heading: SDK, key: [SDK]}",
        "          - {name: sdk, heading: SDK, key: [SDK], no_records: SDK versions only}",
    ).replace(
        "pins: {sdk: 'SDK (\\\\d+)'}}",
        "pins: {sdk: 'SDK (\\\\d+)'}, no_records: a version pin}",
    )
    assert explained != CATALOG and explained.count("no_records") == 2
    config = parse_config(explained, "sources.yaml")
    assert [w.split(": ")[1] for w in item_warnings(config.projects, "sources.yaml")] == [
        "project 'Old SDK'"
    ]
    assert coverage(config.projects).evidence_pages == 1
    mapped_and_not = (
        "projects:\n  - name: A\n    repo: o/a\n    pages:\n      - name: p\n"
        "        path: README.md\n        no_records: pins only\n        pins: {v: 'v(\\d)'}\n"
        "        integration: {platform: NVIDIA GPU, status: upstream, layer: serving}\n"
    )
    assert "page 'p' says no_records but maps 'integration': keep one of them" in _error(
        mapped_and_not
    )
    table_both = (
        "projects:\n  - name: A\n    repo: o/a\n    pages:\n      - name: p\n"
        "        path: README.md\n        tables:\n          - name: t\n            key: [K]\n"
        "            no_records: K only\n"
        "            integrations: {platform: {value: X}, status: {value: upstream}, "
        "layer: serving}\n"
    )
    assert "table 't' has an 'integrations' mapping and says no_records" in _error(table_both)


def test_the_readme_says_the_shipped_catalogs_coverage_as_check_does() -> None:
    """The README's coverage in numbers is what `crawler check` says of the shipped file."""
    shipped = load_config(ROOT / "sources.yaml")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"\nsources.yaml: {coverage_line(coverage(shipped.projects))}\n" in readme
    assert item_warnings(shipped.projects, "sources.yaml") == []
