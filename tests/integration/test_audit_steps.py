"""The audit's steps, each run alone: planning the night (what it checks, the refusals that
stop it before an audit row exists), and reading a project's pages (a page that fails keeps
its last good extraction, dated when it was read). The whole audit runs them in
tests/integration/test_audit*.py; these pin each step's own contract, so a step can change
without running a night to see it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crawler.audit import plan_night
from crawler.config import ConfigError, Settings, parse_config
from crawler.gather import PageReader
from crawler.model import FetchError, ProjectSnapshot
from crawler.store import Store
from crawler.upstream.http import MemoryCache
from crawler.upstream.pages import PageFetcher
from crawler_fakes.pages import FakePageServer

CATALOG = """\
projects:
  - name: Host
    repo: org/host
  - name: Rider
    part_of: Host
  - name: Closed SDK
    not_trackable: no public repository
"""
TABLE = b"<table><tr><th>Chip</th><th>Status</th></tr><tr><td>MLU</td><td>supported</td></tr>"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store(db_url)
    yield opened
    opened.close()


def test_planning_the_night_splits_what_is_fetched_from_what_rides_and_begins_nothing(
    store: Store,
) -> None:
    config = parse_config(CATALOG)
    night = plan_night(config, store, {"GITHUB_TOKEN": "ghp_" + "x" * 36}, None, False)
    assert [s.name for s in night.fetched] == ["Host", "Closed SDK"]
    assert [s.name for s in night.riders] == ["Rider"]  # never fetched: no request
    assert night.listed == ["Host", "Rider", "Closed SDK"]
    assert night.baseline is None and dict(night.last_checked) == {}
    assert night.secrets[0] == "ghp_" + "x" * 36  # redacted wherever the audit writes
    assert [night.tally.position(n) for n in ("Host", "Rider", "Closed SDK", "gone")] == [
        0, 1, 2, 3,
    ]  # fmt: skip
    assert night.tally.host_rows == {"Host": None}  # the row a riding item will show
    assert night.rules.now == night.started and night.rules.baseline_at is None
    assert store.latest_audit() is None  # planned, not begun

    only = plan_night(config, store, {}, ["Rider"], False)
    assert ([s.name for s in only.specs], only.fetched) == (["Rider"], [])
    with pytest.raises(ConfigError, match=r"--only: unknown project \['Nope'\]"):
        plan_night(config, store, {}, ["Nope"], False)
    assert store.latest_audit() is None


def _clock(*moments: str) -> Iterator[str]:
    yield from moments


def test_reading_pages_alone_keeps_the_last_extraction_of_a_page_that_fails() -> None:
    with FakePageServer() as site, PageFetcher(
        Settings(allow_private_addresses=True), MemoryCache()
    ) as web:
        site.set_page("/support.html", TABLE)
        site.set_page("/notes.html", TABLE.replace(b"supported", b"planned"))
        config = parse_config(
            "projects:\n  - name: Kit\n    repo: org/kit\n    pages:\n"
            f"      - {{name: support, url: '{site.url('/support.html')}', text: table}}\n"
            f"      - {{name: notes, url: '{site.url('/notes.html')}', text: table}}\n"
        )
        [spec] = config.projects
        moments = _clock("2026-01-01T03:00:00Z", "2026-01-01T03:00:01Z", "2026-01-02T03:00:00Z")
        reader = PageReader(web, lambda: next(moments), secrets=())
        empty = ProjectSnapshot(project="Kit", tracking=spec.tracking)

        first, errors, notes = reader.read(spec, empty, None)
        assert (errors, notes) == ([], [])
        assert [(p.name, p.text) for p in first.pages] == [
            ("support", "Chip Status MLU supported"),
            ("notes", "Chip Status MLU planned"),
        ]

        site.remove_page("/notes.html")  # gone tonight: 404
        second, errors, notes = reader.read(spec, empty, first)
        assert second.pages == first.pages  # the notes page's last good extraction kept
        assert errors == [
            FetchError("Kit", "page:notes", site.url("/notes.html"), errors[0].message)
        ]
        assert "404" in errors[0].message and notes == []
        assert [(name, p.fetched_at) for name, p in second.provenance] == [
            ("page:support", "2026-01-02T03:00:00Z"),
            ("page:notes", "2026-01-01T03:00:01Z"),  # dated when it was last read
        ]
