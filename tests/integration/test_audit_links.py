"""The audit's link step over nights: the fake GitHub and a vendor site on loopback, a real
database (SQLite and PostgreSQL), a test clock that moves the stored nights back a day.

sources.yaml's homepages, the evidence links of each project and the curated catalog's links
are checked; a move is reported at once, a 404 on the second night in a row, a timeout not
before the grace days; findings stay pending until the link is fixed or acknowledged; an
unchanged night costs conditional requests only; a repository link of a project checked
tonight costs nothing (the forge answered)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crawler.audit import AuditOutcome, rebuild_report
from crawler.cli import cli
from crawler.cli_ops import fail_on_found
from crawler.config import ConfigError, parse_config
from crawler.report.markdown import render_markdown
from crawler.store.links import link_histories
from crawler.store.pending import acknowledge, open_pending
from crawler_fakes.github import FakeGitHub, GitHubState
from crawler_fakes.pages import FakePage, FakePageServer
from tests.support.audits import Audits, a_day_passes, changes
from tests.support.regression import repo


@pytest.fixture
def site() -> Iterator[FakePageServer]:
    with FakePageServer() as server:
        server.fallback = FakePage(b"<p>evidence</p>")  # the forge's evidence pages answer
        yield server


@pytest.fixture
def world(site: FakePageServer, db_url: str, tmp_path: Path) -> Iterator[Audits[FakeGitHub]]:
    state = GitHubState(repos=[repo("kit", 1, ("v1.0",))])
    with FakeGitHub(state, web_url=site.base_url) as github:
        audits = Audits(github, db_url, tmp_path, github.env())
        yield audits
        audits.close()


def _config(site: FakePageServer, tmp_path: Path, **settings: Any) -> str:
    catalog = {
        "projects": [
            {"id": "kit", "name": "Kit", "evidence": [
                {"about": "docs", "url": site.url("/catalog/gone.html")},
                {"about": "latest", "url": site.url("/catalog/latest")},
            ]},
        ],
        "platforms": [], "integrations": [],
    }  # fmt: skip
    (tmp_path / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    options = {"private_networks": ["127.0.0.0/8"], "catalog": "catalog.json",
               "timeout": 1, "links_per_night": 100, **settings}  # fmt: skip
    return (
        f"settings: {json.dumps(options)}\n"
        "github: {retry_base_delay: 0}\n"
        "projects:\n"
        "  - name: Kit\n    repo: org/kit\n"
        f"    homepage: {site.url('/kit/home')}\n"
        "  - name: Docs\n"
        f"    homepage: {site.url('/docs/index.html')}\n"
        "  - name: Slow\n"
        f"    homepage: {site.url('/slow/index.html')}\n"
    )


def _vendor_site(site: FakePageServer) -> None:
    site.redirect("/kit/home", "/kit/home2", 301)
    site.redirect("/kit/home2", site.url("/kit/new-home"), 308)
    site.set_page("/kit/new-home", b"<p>kit</p>")
    site.set_page("/docs/index.html", b"gone", status=404)
    site.set_page("/slow/index.html", b"<p>slow</p>", delay=1.5)
    site.set_page("/catalog/gone.html", b"gone", status=410)
    site.redirect("/catalog/latest", "/catalog/v2/", 302)


def _day_before(stamp: str) -> str:
    return (date.fromisoformat(stamp[:10]) - timedelta(days=1)).isoformat()


def _link_changes(outcome: AuditOutcome) -> list[tuple[Any, ...]]:
    return [c for c in changes(outcome.report, "evidence_url") if c[1].startswith("link_")]


def _pending(outcome: AuditOutcome) -> list[tuple[str, str, str]]:
    report = outcome.report.as_json()
    return sorted((p["project"], p["kind"], p["value"]) for p in report.get("pending", []))


def test_links_over_three_nights(
    world: Audits[FakeGitHub], site: FakePageServer, tmp_path: Path
) -> None:
    _vendor_site(site)
    config = parse_config(_config(site, tmp_path), path=str(tmp_path / "sources.yaml"))
    first = world.audit(config)
    moved = site.url("/kit/new-home")
    assert _link_changes(first) == [
        ("Kit", "link_moved", site.url("/kit/home"), moved, site.url("/kit/home")),
    ]
    # one night of 404/410 and a timeout under the grace days: listed, not reported
    failing = {(e["url"], e["outcome"], e["status"]) for e in first.report.as_json()["links"]}
    assert failing == {
        (site.url("/docs/index.html"), "failing", 404),
        (site.url("/catalog/gone.html"), "failing", 410),
        (site.url("/slow/index.html"), "failing", None),
    }
    # the repository link was answered by tonight's forge snapshot: no request for it
    assert not [r for r in site.requests if r.path == "/org/kit"]
    usage = first.report.as_json()["requests"]["sources"]["links"]
    assert (usage["answered_by_forge"], usage["outcome_moved"]) == (1, 1)

    a_day_passes(world.store)
    site.clear_log()
    second = world.audit(config)
    assert _link_changes(second) == [
        ("Kit", "link_broken", site.url("/catalog/gone.html"), "broken",
         site.url("/catalog/gone.html")),
        ("Docs", "link_broken", site.url("/docs/index.html"), "broken",
         site.url("/docs/index.html")),
    ]  # fmt: skip
    broken = next(c for c in second.report.changes if c.project == "Docs")
    # the line of its `homepage:` key (the entry starts a line above)
    assert broken.details["where"] == ["sources.yaml line 8 (homepage)"]
    curated = next(c for c in second.report.changes if c.project == "Kit")
    assert curated.details["where"] == ["catalog.json: projects[0].evidence[0].url"]
    # still under the grace days (1 of 3): the timeout is not a finding
    assert [e["url"] for e in second.report.as_json()["links"]] == [site.url("/slow/index.html")]
    # the temporary redirect was followed and is not a finding, tonight or ever
    assert link_histories(world.store, [site.url("/catalog/latest")])[
        site.url("/catalog/latest")
    ].outcome == "ok"
    assert _pending(second) == sorted([
        ("Kit", "link_moved", f"{site.url('/kit/home')} → {moved}"),
        ("Kit", "link_broken", site.url("/catalog/gone.html")),
        ("Docs", "link_broken", site.url("/docs/index.html")),
    ])  # fmt: skip
    assert second.report_dir is not None
    markdown = (second.report_dir / "report.md").read_text(encoding="utf-8")
    assert "## Links and upstream health" in markdown
    assert (  # a URL in a code span: a Markdown renderer must not make it a link of its own
        f"- **Docs** link broken: `{site.url('/docs/index.html')}` broken since "
        f"{_day_before(second.report.audit.started_at)}: HTTP 404; never seen working (cited in "
        "sources.yaml line 8 (homepage))"
    ) in markdown

    assert fail_on_found(second.report, {"link_broken"}) == {"link_broken": 2}  # --fail-on

    a_day_passes(world.store)
    site.set_page("/docs/index.html", b"<p>back</p>")  # fixed upstream
    third = world.audit(config)
    assert _link_changes(third) == []
    assert _pending(third) == sorted([
        ("Kit", "link_moved", f"{site.url('/kit/home')} → {moved}"),
        ("Kit", "link_broken", site.url("/catalog/gone.html")),
    ])  # fmt: skip
    # acknowledged: it leaves the pending list, though the link is still broken
    acknowledge(world.store, ["Kit"], ["link_broken"], datetime.now(UTC))
    assert [(i.project, i.kind) for i in open_pending(world.store)] == [("Kit", "link_moved")]


def test_an_unchanged_night_costs_conditional_requests_only(
    world: Audits[FakeGitHub], site: FakePageServer, tmp_path: Path
) -> None:
    site.set_page("/kit/home", b"<p>kit</p>")
    site.set_page("/docs/index.html", b"<p>docs</p>")
    site.set_page("/slow/index.html", b"<p>slow</p>")
    site.set_page("/catalog/gone.html", b"<p>docs</p>")
    site.set_page("/catalog/latest", b"<p>latest</p>")
    config = parse_config(_config(site, tmp_path), path=str(tmp_path / "sources.yaml"))
    world.audit(config)
    a_day_passes(world.store)
    site.clear_log()
    again = world.audit(config)
    assert _link_changes(again) == []
    asked = site.requests
    assert asked and all(r.method == "HEAD" and r.conditional for r in asked)
    assert {r.status for r in asked} == {304}
    usage = again.report.as_json()["requests"]["sources"]["links"]
    assert usage["not_modified"] == usage["requests"] == len(asked)


def test_more_links_than_a_night_allows_are_spread_over_nights(
    world: Audits[FakeGitHub], site: FakePageServer, tmp_path: Path
) -> None:
    config = parse_config(
        _config(site, tmp_path, links_per_night=3), path=str(tmp_path / "sources.yaml")
    )
    site.fallback = FakePage(b"<p>ok</p>")
    seen: list[set[str]] = []
    for _night in range(3):
        site.clear_log()
        outcome = world.audit(config)
        assert outcome.report.as_json()["requests"]["sources"]["links"]["checked"] <= 3 + 1
        seen.append({r.path for r in site.requests if r.method == "HEAD"})
        a_day_passes(world.store)
    assert all(len(paths) <= 3 for paths in seen)
    assert len(seen[0] | seen[1]) == 6  # two nights reach six different links


def _section(markdown: str) -> str:
    return markdown.split("## Links and upstream health", 1)[1].split("\n## ", 1)[0]


def test_a_re_rendered_report_shows_the_link_findings_as_the_original_did(
    world: Audits[FakeGitHub], site: FakePageServer, tmp_path: Path
) -> None:
    """`crawler report N` and `crawler diff` read what the audit's link step reported from the
    store (before: the re-rendered report had no link finding and no failing link, as the
    link histories keep only each link's latest state)."""
    _vendor_site(site)
    config = parse_config(_config(site, tmp_path), path=str(tmp_path / "sources.yaml"))
    first = world.audit(config)
    a_day_passes(world.store)
    second = world.audit(config)
    a_day_passes(world.store)
    site.set_page("/docs/index.html", b"<p>back</p>")
    world.audit(config)  # a later night changes the links' histories, not audit 2's report
    assert second.report_dir is not None and first.report_dir is not None
    for outcome in (first, second):
        assert outcome.report_dir is not None
        again = rebuild_report(world.store, config, outcome.audit_id)
        original = outcome.report.as_json()
        assert again.as_json()["changes"] == original["changes"]
        assert again.as_json()["links"] == original["links"]
        written = (outcome.report_dir / "report.md").read_text(encoding="utf-8")
        assert _section(render_markdown(again)) == _section(written)
    assert [(c["project"], c["kind"]) for c in second.report.as_json()["changes"]] == [
        ("Kit", "link_broken"), ("Docs", "link_broken"),
    ]  # fmt: skip
    # crawler diff 1 2: the link step's findings of audit 2 with the others
    result = CliRunner().invoke(
        cli, ["diff", str(first.audit_id), str(second.audit_id), "--config",
              str(tmp_path / "sources.yaml"), "--db", world.db_url, "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert [(c["project"], c["kind"], c["before"]) for c in json.loads(result.stdout)] == [
        ("Kit", "link_broken", site.url("/catalog/gone.html")),
        ("Docs", "link_broken", site.url("/docs/index.html")),
    ]


def test_excluded_links_are_never_asked(
    world: Audits[FakeGitHub], site: FakePageServer, tmp_path: Path
) -> None:
    """settings.links_exclude: a link matching one of its patterns is not checked (a host that
    refuses robots, a page behind a login), and the cost line counts it."""
    _vendor_site(site)
    config = parse_config(
        _config(site, tmp_path, links_exclude=["/slow/", "[.]html$"]),
        path=str(tmp_path / "sources.yaml"),
    )
    outcome = world.audit(config)
    asked = {r.path for r in site.requests}
    assert not {"/slow/index.html", "/docs/index.html", "/catalog/gone.html"} & asked
    assert "/kit/home" in asked
    usage = outcome.report.as_json()["requests"]["sources"]["links"]
    assert usage["excluded"] == 3
    assert outcome.report.as_json()["links"] == []  # none of them failing: none was asked


def test_a_bad_exclusion_pattern_is_refused_with_its_line() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config("settings:\n  links_exclude: ['(unclosed']\nprojects: []\n")
    assert str(raised.value) == (
        "sources.yaml:2: settings: links_exclude '(unclosed' is not a valid "
        "regular expression: missing ) at position 9"
    )
