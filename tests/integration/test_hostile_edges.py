"""Issue 21, items 7-17: the edges a hostile upstream, file or environment finds. Each test
failed on the main these fixes were made against."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner, Result
from rich.console import Console
from sqlalchemy import text

from crawler.audit import rebuild_report, run_audit
from crawler.cli import cli
from crawler.config import ConfigError, parse_config
from crawler.export.catalog import build_catalog
from crawler.export.merge import MergeError, merge_file
from crawler.export.site.text import text as explorer_text
from crawler.export.snapshot_md import render_snapshot
from crawler.export.validate import MAX_CATALOG_BYTES, validate_file
from crawler.logs import Output, configure_output, secrets_from_env
from crawler.logs import redact as output_redact
from crawler.progress import LogProgress, RichProgress, make_progress
from crawler.report.markdown import escape, render_markdown
from crawler.schedule import MAX_HEARTBEAT_BYTES
from crawler.store import Store
from crawler.store.lock import AuditLock, iso
from crawler.store.migration_guard import HEAD_REVISION
from crawler.untrusted import one_line
from crawler.upstream.http import MemoryCache, redact
from crawler.upstream.json_api import ApiSettings, JsonApi
from crawler.upstream.pages import PageFetchError, check_url
from crawler.upstream.sources.github import GitHubSettings
from crawler.upstream.sources.github.api import GitHubApi
from crawler_fakes.github import FakeGitHub
from tests.support.export import seed_export
from tests.support.file_limits import crawler_limited
from tests.support.ops import upstream

# --- item 8: one rule for invisible characters, in every output ----------------------------

INVISIBLE = {
    "tag characters": "\U000e0041\U000e0042\U000e007f",
    "Hangul filler": "\u3164",
    "Mongolian vowel separator": "\u180e",
    "combining grapheme joiner": "\u034f",
    "variation selector 16": "\ufe0f",
    "right-to-left override": "\u202e",
    "zero-width space": "\u200b",
    "left-to-right isolate": "\u2066",
}


@pytest.mark.parametrize("char", list(INVISIBLE.values()), ids=list(INVISIBLE))
def test_invisible_characters_leave_every_output_the_same_way(char: str) -> None:
    tag = f"v1.0{char}rc1"
    assert escape(tag) == "v1.0 rc1"  # report.md (and snapshot.md's cells)
    assert explorer_text(tag) == "v1.0 rc1"  # the Explorer
    assert one_line(tag) == "v1.0 rc1"  # the terminal

    export = seed_export()
    first = export.projects[0]
    assert first.ref is not None
    export = replace(export, projects=(replace(first, ref=replace(first.ref, name=tag)),))
    snapshot = render_snapshot(export)
    assert char not in snapshot and "v1.0 rc1" in snapshot
    catalog = json.dumps(build_catalog(export), ensure_ascii=False)
    assert char not in catalog
    assert build_catalog(export)["projects"][0]["tracked_ref"]["name"] == "v1.0 rc1"


# --- item 9: redaction beyond the exact secret ---------------------------------------------

TOKEN = "ghp_Edges21SecretToken0123456789abcdefXY"


@pytest.mark.parametrize(
    "echo",
    [
        TOKEN.lower(),
        TOKEN.upper(),
        base64.b64encode(TOKEN.encode()).decode(),
        base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode(),
        f"{TOKEN[:20]} {TOKEN[20:]}",
        f"{TOKEN[:14]}\n{TOKEN[14:]}",
        f"first half {TOKEN[:20]}, second half {TOKEN[20:]}",
    ],
    ids=["lower", "upper", "base64", "base64-basic", "space", "newline", "halves"],
)
def test_a_token_echoed_in_another_spelling_is_redacted(echo: str) -> None:
    message = f"HTTP 400: bad credentials {echo} (sent)"
    for cleaned in (redact(message, TOKEN), output_redact(message, [TOKEN])):
        assert cleaned.startswith("HTTP 400: bad credentials ") and cleaned.endswith(" (sent)")
        assert "***" in cleaned
        for piece in (TOKEN[:12], TOKEN[12:24], TOKEN[-12:]):
            assert piece.lower() not in cleaned.lower()
        assert echo not in cleaned


def test_a_password_echoed_percent_encoded_is_redacted() -> None:
    password = "s3cret/pass+word=&more"
    echoed = f"GET /hook?key={quote(password, safe='')} failed"
    assert redact(echoed, password) == "GET /hook?key=*** failed"
    url = f"json://bot:{quote(password, safe='')}@h.example"
    secrets = secrets_from_env({"CRAWLER_NOTIFY": url})
    assert output_redact(echoed, secrets) == "GET /hook?key=*** failed"


def test_an_echoed_basic_authorization_header_loses_its_password() -> None:
    basic = base64.b64encode(b"crawler:hunter2").decode()
    echoed = f"proxy said: Authorization: Basic {basic}; retry"
    assert redact(echoed) == "proxy said: Authorization: Basic ***; retry"
    assert redact('{"authorization": "Bearer abc.def"}') == '{"authorization": "Bearer ***"}'


def test_short_notification_secrets_are_redacted_as_whole_words() -> None:
    env = {"CRAWLER_NOTIFY": "json://bot:pw42x@hooks.example.org/a, slack://T0k3n/B1/C2"}
    secrets = secrets_from_env(env)
    assert {"pw42x", "T0k3n"} <= set(secrets)
    message = "login bot:pw42x failed at slack://T0k3n/B1/C2; upw42xy stays"
    assert output_redact(message, secrets) == (
        "login bot:*** failed at slack://***/B1/C2; upw42xy stays"
    )


# --- item 7: validate and health read regular files only, with a size cap ------------------


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command in a child process, with a timeout: on the old code a FIFO hangs."""
    return subprocess.run(
        [sys.executable, "-m", "crawler", *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("command", [["validate"], ["health", "--heartbeat"]])
def test_a_fifo_or_dev_zero_is_refused_not_read(command: list[str], tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        result = _run(*command, str(path))
        # health answers a HEALTHCHECK: 1 is unhealthy (Docker reserves 2)
        assert result.returncode == (1 if command[0] == "health" else 2), result.stderr
        assert (
            f"{path}: not a regular file: pass the path of a file" in result.stdout + result.stderr
        )
        assert "Traceback" not in result.stderr


def test_an_oversized_heartbeat_or_catalog_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as handle:  # sparse: no disk space spent
        handle.truncate(MAX_CATALOG_BYTES + 1)
    result = _run("validate", str(big))
    assert result.returncode == 2
    assert f"{big}: larger than {MAX_CATALOG_BYTES:,} bytes" in result.stdout
    beat = tmp_path / "heartbeat.json"
    beat.write_text(json.dumps({"beat": "2026-01-01T00:00:00+00:00", "pad": "x" * 70_000}))
    result = _run("health", "--heartbeat", str(beat))
    assert result.returncode == 1  # unhealthy (a HEALTHCHECK's exit status 2 is reserved)
    assert f"{beat}: larger than {MAX_HEARTBEAT_BYTES:,} bytes" in result.stderr


# --- item 10: catalog.json edge cases ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
        ('{"projects": ' + "[" * 70 + "]" * 70 + "}", "nested more than 64 levels deep"),
        ('{"schema_version": ' + "9" * 5000 + "}", "a number of 5,000 digits"),
    ],
    ids=["deep-for-the-parser", "deep-for-the-checks", "5000-digits"],
)
def test_catalogs_too_deep_or_with_huge_numbers_exit_2(
    text: str, message: str, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(text)
    result = CliRunner().invoke(cli, ["validate", str(catalog)])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.output.startswith(f"{catalog}: ") and message in result.output
    code, lines = validate_file(catalog)
    assert code == 2 and len(lines) == 1 and message in lines[0]
    with pytest.raises(MergeError) as merged:
        merge_file(catalog, {})
    assert str(merged.value).startswith(f"{catalog}: ") and message in str(merged.value)


def test_duplicate_keys_are_reported_not_kept_silently(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        '{"schema_version": 1, "audit": {"id": 1, "id": 2, "date": "2026-11-05"},'
        ' "projects": [], "platforms": [], "integrations": [], "projects": []}'
    )
    code, lines = validate_file(catalog)
    assert code == 1
    assert lines[:2] == [
        "$.audit.id: the key 'id' appears more than once in this object (JSON keeps only the "
        "last): remove the duplicates",
        "$.projects: the key 'projects' appears more than once in this object (JSON keeps "
        "only the last): remove the duplicates",
    ]
    with pytest.raises(MergeError) as merged:
        merge_file(catalog, {})
    assert str(merged.value).startswith(f"{catalog}: duplicate keys, so it was not merged: ")
    assert "$.audit.id: the key 'id'" in str(merged.value)


# --- item 11: huge and garbled numbers in sources.yaml and in rate-limit headers ----------


def test_a_5000_digit_number_in_sources_yaml_is_a_config_error() -> None:
    text = "settings:\n  timeout: " + "9" * 5000 + "\nprojects:\n  - name: a\n    repo: o/a\n"
    with pytest.raises(ConfigError) as error:
        parse_config(text, "sources.yaml")
    assert str(error.value) == (
        "sources.yaml:2: a number of 5,000 digits, over the limit of 30: no setting needs more"
    )


class _Answering:
    """A loopback API that answers every GET with ``{"ok": true}`` and the given headers."""

    def __init__(self, headers: dict[str, str]) -> None:
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests += 1
                body = b'{"ok": true}'
                self.send_response(200)
                for name, value in {**headers, "Content-Type": "application/json"}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("reset", ["9" * 20, "²", "soon", "-5", "1e400"])
def test_an_absurd_ratelimit_reset_is_unknown_not_a_failure(reset: str) -> None:
    server = _Answering({"RateLimit-Remaining": "99", "RateLimit-Reset": reset})
    api = JsonApi("GitLab", server.url, cache=MemoryCache(), settings=ApiSettings(), timeout=5)
    try:
        answer = api.get("/projects/1")
    finally:
        api.close()
        server.close()
    assert (answer.status, answer.data) == (200, {"ok": True})
    assert (api.budget.remaining, api.budget.reset, server.requests) == (99, None, 1)


@pytest.mark.parametrize("reset", ["soon", "9" * 20, "1e400"])
def test_a_garbled_github_reset_header_is_an_answer_not_no_answer(reset: str) -> None:
    server = _Answering(
        {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "59", "X-RateLimit-Reset": reset}
    )
    waits: list[float] = []
    api = GitHubApi(
        server.url, None, MemoryCache(), GitHubSettings(), timeout=5, sleep=waits.append
    )
    try:
        answer = api.get_json("/repos/o/r")
    finally:
        api.close()
        server.close()
    assert (answer.status, answer.data) == (200, {"ok": True})
    assert (server.requests, waits) == (1, [])  # answered once, never retried
    assert (api.core.remaining, api.core.reset) == (59, None)


# --- item 12: export onto a full disk, killed, onto a 0600 file or a symlink ---------------


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(cli, ["demo", "--output", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _curated(demo_db: Path, where: Path, notes: int = 10) -> Path:
    """The demo's catalog with a curated note on its first project (``notes`` characters)."""
    catalog = json.loads((demo_db / "export" / "catalog.json").read_text(encoding="utf-8"))
    catalog["projects"][0]["notes"] = "n" * notes
    where.mkdir(parents=True, exist_ok=True)
    path = where / "catalog.json"
    path.write_text(json.dumps(catalog, indent=2) + "\n", encoding="utf-8")
    return path




def _export_limited(
    demo_db: Path, out: Path, curated: Path, how: str
) -> subprocess.CompletedProcess[str]:
    """``crawler export --into`` in a child that may write files of 100 kB at most: the export
    fits, the merged curated catalog (with its 200 kB note) does not."""
    db = f"sqlite:///{demo_db / 'demo.sqlite'}"
    args = ["export", "--db", db, "--out", str(out), "--into", str(curated)]
    args += ["--config", str(demo_db / "none.yaml")]
    return crawler_limited(100_000, "kill" if how == "kill" else "full", args)


def test_export_onto_a_full_disk_says_so_and_keeps_the_file(
    demo_db: Path, tmp_path: Path
) -> None:
    curated = _curated(demo_db, tmp_path / "catalog", notes=200_000)
    before = curated.read_bytes()
    result = _export_limited(demo_db, tmp_path / "out", curated, "full")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().endswith(
        f"Error: cannot write {curated}: File too large; nothing was written: every file of the "
        "export is as it was"
    )
    assert curated.read_bytes() == before
    assert sorted(p.name for p in curated.parent.iterdir()) == ["catalog.json"]


def test_a_kill_while_writing_leaves_no_hidden_file_beside_the_catalog(
    demo_db: Path, tmp_path: Path
) -> None:
    curated = _curated(demo_db, tmp_path / "catalog", notes=200_000)
    before = curated.read_bytes()
    result = _export_limited(demo_db, tmp_path / "out", curated, "kill")
    assert result.returncode == -signal.SIGXFSZ, result.stderr  # killed in the middle
    assert curated.read_bytes() == before
    assert sorted(p.name for p in curated.parent.iterdir()) == ["catalog.json"]


def test_export_into_keeps_the_mode_and_writes_through_a_symlink(
    demo_db: Path, tmp_path: Path
) -> None:
    private = _curated(demo_db, tmp_path / "private")
    private.chmod(0o600)
    real = _curated(demo_db, tmp_path / "real")
    link = tmp_path / "catalog" / "catalog.json"
    link.parent.mkdir()
    link.symlink_to(real)
    db = f"sqlite:///{demo_db / 'demo.sqlite'}"
    for curated in (private, link):
        result = CliRunner().invoke(
            cli,
            ["export", "--db", db, "--out", str(tmp_path / "out"), "--into", str(curated),
             "--config", str(demo_db / "none.yaml")],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert link.is_symlink() and link.readlink() == real
    merged = json.loads(real.read_text(encoding="utf-8"))
    assert merged["projects"][0]["notes"] == "n" * 10  # the curated note kept
    assert sorted(p.name for p in real.parent.iterdir()) == ["catalog.json"]


# --- issue 38 item 9: the export through symbolic links, and as one set ----------------------


def _export(demo_db: Path, *args: str) -> Result:
    db = f"sqlite:///{demo_db / 'demo.sqlite'}"
    return CliRunner().invoke(
        cli, ["export", "--db", db, "--config", str(demo_db / "none.yaml"), *args]
    )


def _tree(*folders: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for f in folders for p in sorted(f.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("where", ["out", "site"])
def test_a_link_leading_out_of_the_export_folder_is_refused_before_anything_is_written(
    demo_db: Path, tmp_path: Path, where: str
) -> None:
    """A symbolic link committed in --out or --site (a pull request to a catalog repository)
    made the nightly export write any file the job could write."""
    victim = tmp_path / "elsewhere" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("not the export's\n")
    out, site = tmp_path / "out", tmp_path / "site"
    out.mkdir()
    site.mkdir()
    link = (out / "catalog.json") if where == "out" else (site / "index.html")
    link.symlink_to(victim)
    result = _export(demo_db, "--out", str(out), "--site", str(site))
    assert result.exit_code == 2, result.output
    folder = out if where == "out" else site
    assert result.output == (
        f"Error: {link} leads outside {folder} (to {victim}) through a symbolic link: refusing "
        "to write through it; remove the link, or pass --follow-links-outside if the export "
        "is meant to write there\n"
    )
    assert victim.read_text() == "not the export's\n"
    assert [p.name for p in (*out.iterdir(), *site.iterdir())] == [link.name]  # none written


def test_links_inside_the_folder_or_allowed_outside_are_written_through(
    demo_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    (out / "kept").mkdir(parents=True)
    (out / "snapshot.md").symlink_to(out / "kept" / "snapshot.md")  # inside: written through
    outside = tmp_path / "published" / "catalog.json"
    outside.parent.mkdir()
    (out / "catalog.json").symlink_to(outside)
    assert _export(demo_db, "--out", str(out)).exit_code == 2  # outside: refused by default
    result = _export(demo_db, "--out", str(out), "--follow-links-outside")
    assert result.exit_code == 0, result.output
    demo = tmp_path / "plain"  # the same export, into a folder without links
    assert _export(demo_db, "--out", str(demo)).exit_code == 0
    assert (out / "kept" / "snapshot.md").read_bytes() == (demo / "snapshot.md").read_bytes()
    assert outside.read_bytes() == (demo / "catalog.json").read_bytes()  # where the link leads
    assert (out / "catalog.json").is_symlink() and (out / "snapshot.md").is_symlink()


def test_an_export_that_fails_part_way_leaves_every_file_as_it_was(
    demo_db: Path, tmp_path: Path
) -> None:
    """A full disk part-way (the Explorer's page is the largest file: 60 KB, over a 40 KB
    limit) left the new snapshot.md and catalog.json beside the old site: new and old mixed."""
    out, site = tmp_path / "out", tmp_path / "site"
    assert _export(demo_db, "--audit", "1", "--out", str(out), "--site", str(site)).exit_code == 0
    before = _tree(out, site)
    db = f"sqlite:///{demo_db / 'demo.sqlite'}"
    args = ["export", "--db", db, "--config", str(demo_db / "none.yaml"), "--out", str(out),
            "--site", str(site)]  # fmt: skip
    run = crawler_limited(40_000, "full", args)
    assert run.returncode == 1, run.stderr
    assert run.stderr.strip().endswith(
        f"Error: cannot write {site / 'index.html'}: File too large; nothing was written: "
        "every file of the export is as it was"
    )
    assert _tree(out, site) == before  # the older audit's files, all of them, and nothing else
    assert _export(demo_db, "--out", str(out), "--site", str(site)).exit_code == 0
    assert _tree(out, site) != before  # the newest audit's, once the disk has room


# --- item 13: a lock holder frozen past its lease checks before it records -----------------

LOCK_PROJECTS = "projects:\n  - name: Alpha\n    repo: org/alpha\n"


def test_an_audit_whose_lock_was_taken_over_records_and_reports_nothing(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'lock.sqlite'}")
    frozen = store.audit_lock("nightly cron")
    frozen.acquire()
    # frozen for an hour: its 15-minute lease ran out and another audit took the lock over
    an_hour_later = datetime.now(UTC) + timedelta(hours=1)
    taker = AuditLock(store.engine, "taker", clock=lambda: an_hour_later, heartbeat=False)
    taker.acquire()
    reports = tmp_path / "reports"
    try:
        with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
            outcome = run_audit(
                parse_config(LOCK_PROJECTS), store, reports, env=server.env(None),
                sleep=lambda _s: None,
            )  # fmt: skip
        assert (outcome.status, outcome.report_dir, outcome.exit_code) == ("failed", None, 1)
        assert outcome.report_error == (
            f"the audit lock was taken over by taker (pid {os.getpid()} on "
            f"{socket.gethostname()}) since {iso(an_hour_later)} while this audit was frozen "
            "past its lease: nothing of this audit was recorded, reported or sent"
        )
        assert frozen.lost is True
        assert not reports.exists()
        latest = store.audit(outcome.audit_id)
        assert latest is not None and latest.status == "failed"
        assert store.history("Alpha") == []  # no observation was recorded
    finally:
        frozen.release()
        taker.release()
        store.close()


def test_a_lease_that_ran_out_unclaimed_is_renewed_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'lock.sqlite'}")
    lock = store.audit_lock("nightly cron")
    lock.acquire()
    expired = datetime.now(UTC) - timedelta(minutes=1)
    with store.engine.begin() as conn:
        conn.execute(text("update audit_lock set lease_until = :t"), {"t": expired})
    try:
        with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
            outcome = run_audit(
                parse_config(LOCK_PROJECTS), store, tmp_path / "reports", env=server.env(None),
                sleep=lambda _s: None,
            )  # fmt: skip
        assert (outcome.status, outcome.exit_code) == ("complete", 0)
        assert f"this audit was frozen past its lease (it ended {iso(expired)})" in caplog.text
        with store.engine.connect() as conn:
            lease = conn.execute(text("select lease_until from audit_lock")).scalar_one()
        assert _as_utc_naive(lease) > datetime.now(UTC) + timedelta(minutes=14)
    finally:
        lock.release()
        store.close()


def _as_utc_naive(value: datetime | str) -> datetime:
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


# --- item 14: an --only report does not claim the whole catalog -----------------------------


def test_an_only_report_says_what_was_left_out(tmp_path: Path) -> None:
    config = parse_config(
        "projects:\n  - name: Alpha\n    repo: org/alpha\n  - name: Beta\n    repo: org/beta\n"
        "  - name: Catalog\n    repo: org/catalog\n"
    )
    store = Store(f"sqlite:///{tmp_path / 'only.sqlite'}")
    try:
        with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
            run_audit(config, store, tmp_path / "r", env=server.env(None), sleep=lambda _s: None)
            only = run_audit(
                config, store, tmp_path / "r", env=server.env(None), sleep=lambda _s: None,
                only=["Alpha"],
            )  # fmt: skip
        rebuilt = render_markdown(rebuild_report(store, config, only.audit_id))
    finally:
        store.close()
    assert only.report.as_json()["summary"]["not_selected"] == 2
    assert only.report_dir is not None
    written = (only.report_dir / "report.md").read_text(encoding="utf-8")
    for markdown in (written, rebuilt):  # the live report and `crawler report` alike
        assert (
            "0 changes since audit #1, 0 flags, 0 errors; 2 other projects not selected (--only).\n"
        ) in markdown
        section = markdown.split("## Not checked, or only in part\n\n")[1].split("\n\n")[0]
        assert section == (
            "- 2 other projects of sources.yaml were not selected for this audit (--only)"
        )


# --- item 15: the page guard judges 6to4, Teredo and NAT64 by the IPv4 they embed -----------


@pytest.mark.parametrize(
    ("host", "kind"),
    [
        ("2002:7f00:1::1", "loopback (6to4 for 127.0.0.1)"),
        ("2002:a00:1::1", "private (6to4 for 10.0.0.1)"),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback (Teredo for 127.0.0.1)"),
        ("64:ff9b::a9fe:a9fe", "link-local (NAT64 for 169.254.169.254)"),
        ("64:ff9b:1::a00:1", "private (NAT64 for 10.0.0.1)"),
    ],
)
def test_ipv6_addresses_embedding_a_private_ipv4_are_refused(host: str, kind: str) -> None:
    with pytest.raises(PageFetchError) as refused:
        check_url(f"http://[{host}]/support.html", allow_private=False)
    assert f"host {host!r} resolves to {host}, a {kind} address" in str(refused.value)


def test_a_6to4_address_of_a_public_ipv4_is_still_fetched() -> None:
    assert check_url("http://[2002:808:808::1]/support.html", allow_private=False) is None


# --- item 16: a view is another application's; a revision with no tables is damage ---------


def test_a_sqlite_file_holding_only_a_view_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "views.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("create view answers as select 42 as answer")
    digest = path.read_bytes()
    result = CliRunner().invoke(cli, ["db", "upgrade", "--db", f"sqlite:///{path}"])
    assert result.exit_code == 2
    assert (
        "not a crawler database: it has 1 table(s) (answers) but no crawler schema version"
        in " ".join(result.output.split())
    )
    assert path.read_bytes() == digest


def test_a_head_revision_without_tables_is_reported_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "emptied.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("create table alembic_version (version_num varchar(32) primary key)")
        conn.execute("insert into alembic_version values (?)", (HEAD_REVISION,))
    url = f"sqlite:///{path}"
    expected = (
        f"cannot open database '{url}': the database says its crawler schema is at revision "
        f"{HEAD_REVISION}, but the crawler's tables are missing (audits, observations, "
        "project_sets, snapshots): it was emptied or damaged by hand. Nothing was changed"
    )
    for args in (["db", "upgrade", "--db", url], ["history", "Alpha", "--db", url]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, result.output
        assert expected in " ".join(result.output.split())
        assert "already at head" not in result.output


# --- item 17: a project name's control characters never reach the progress lines ----------

NASTY_NAME = "Evil \x1b]0;owned\x07\x1b[2J\rname\x00"


def test_progress_lines_show_a_project_name_without_its_control_characters() -> None:
    stream = io.StringIO()
    progress = make_progress(configure_output(0, False, "text", {}, stream=stream))
    assert isinstance(progress, LogProgress)
    progress.start(1)
    progress.project_done(NASTY_NAME, "ok", 2, None)
    # each line starts with its ISO 8601 time: compare what follows it
    assert [line.split(" ", 1)[1] for line in stream.getvalue().splitlines()] == [
        "INFO crawler.progress: auditing 1 projects",
        "INFO crawler.progress: [1/1] Evil name: ok, 2 requests, rate budget left unknown",
    ]
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100, color_system=None)
    rich = RichProgress(Output(terminal=True), console=console)
    rich.start(1)
    rich.project_done(NASTY_NAME, "ok", 2, None)
    rich.close()
    shown = screen.getvalue()
    assert "✓ Evil name: ok, 2 requests" in shown
    assert "\x07" not in shown and "owned" not in shown and "\x00" not in shown
