"""Small command-line defects from issue 9: a message and the right exit status, never a
traceback, a hang, a leaked password or terminal control sequences from a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from crawler.analysis.license_texts import reference_text
from crawler.cli import cli
from crawler_fakes.pages import FakePageServer

CONFIG = "projects:\n  - name: Alpha\n    repo: org/alpha\n"
HUGE = "99999999999999999999"
PASSWORD = "S3cr3t-pw"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "sources.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRAWLER_DB_URL", f"sqlite:///{tmp_path / 'crawler.sqlite'}")
    return tmp_path


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _crawler(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command in a child process: real stderr and logging, and a hang is a failure
    after 60 s instead of a stuck test run."""
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN")}
    return subprocess.run(
        [sys.executable, "-m", "crawler", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_audit_id_too_large_for_the_database_is_a_usage_error(workdir: Path) -> None:
    for args in (["report", HUGE, "--stdout"], ["diff", "1", HUGE]):
        result = _run(*args)
        assert result.exit_code == 2, result.output
        assert f"{HUGE} is not in the range 1<=x<=9223372036854775807" in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_page_with_a_bad_url_says_so_without_a_traceback(workdir: Path) -> None:
    port = _run("page", "http://127.0.0.1:99999/", "--allow-private")
    assert (port.exit_code, port.output) == (
        1,
        "Error: invalid URL http://127.0.0.1:99999/: Port out of range 0-65535\n",
    )
    bracket = _run("page", "http://[::1")
    assert (bracket.exit_code, bracket.output) == (
        1,
        "Error: invalid URL http://[::1: Invalid IPv6 URL\n",
    )


def test_page_on_a_local_file_declaring_charset_hex(workdir: Path) -> None:
    (workdir / "hex.html").write_text(
        '<meta charset="hex"><h2>Chips</h2><table><tr><th>Chip</th></tr><tr><td>MLU</td></tr>'
        "</table>"
    )
    result = _run("page", "hex.html")
    assert (result.exit_code, result.output) == (
        0,
        '1 table in hex.html (read as html):\n  [0] under "Chips", 1 row: Chip\n'
        "Choose one with --heading TEXT or --table SELECTOR, and --key COLUMN.\n"
        "Or read the lists under a heading as a table: --heading TEXT --items list "
        "(a 'Label: a, b and c.' sentence: --items enumeration --label Label).\n",
    )


def test_page_obeys_the_request_deadline(workdir: Path) -> None:
    with FakePageServer() as site:
        site.set_page("/slow.html", b"<p>x</p>", drip_headers=(40, 0.1))
        result = _run("page", site.url("/slow.html"), "--allow-private", "--deadline", "0.5")
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {site.url('/slow.html')} took longer than the request deadline of 0.5s "
        "(settings.request_deadline)\n",
    )


def test_license_strips_terminal_escape_sequences_from_the_file(workdir: Path) -> None:
    extra = (
        "The logo\x1b]0;owned title\x07 is \x1b]8;;https://evil.example\x1b\\not\x1b]8;;\x1b\\ "
        "covered \x1b[31mby\x1b[0m this\x9b2J license.\n"
    )
    (workdir / "LICENSE").write_text(reference_text("MIT") + "\n" + extra)
    result = _run("license", "LICENSE")
    assert result.exit_code == 0, result.output
    assert "    | The logo is not covered by this license.\n" in result.output
    assert not {"\x1b", "\x07", "\x9b", "\x9c"} & set(result.output)


def test_license_refuses_a_fifo_instead_of_hanging(workdir: Path) -> None:
    os.mkfifo(workdir / "LICENSE")
    result = _crawler("license", "LICENSE", cwd=workdir)
    assert result.returncode == 2
    assert result.stderr.endswith("Error: LICENSE is not a regular file: pass license files\n")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            f"postgresql+psycopg://postgres:{PASSWORD}@127.0.0.1:1/test",
            "postgresql+psycopg://postgres:***@127.0.0.1:1/test",
        ),
        (
            f"postgresql+psycopg://postgres:{PASSWORD}@127.0.0.1:notaport/test",
            "postgresql+psycopg://postgres:***@127.0.0.1:notaport/test",
        ),
    ],
)
def test_a_database_password_is_never_printed(workdir: Path, url: str, shown: str) -> None:
    result = _crawler("-vv", "audit", "--db", url, cwd=workdir)
    assert result.returncode == 2
    assert f"Error: cannot open database '{shown}': " in result.stderr
    assert PASSWORD not in result.stdout + result.stderr


def test_display_db_url_masks_passwords_in_every_spelling() -> None:
    from crawler.store.database import display_db_url, scrub_db_secrets

    assert display_db_url("sqlite:///db/crawler.sqlite") == "sqlite:///db/crawler.sqlite"
    assert display_db_url("postgresql://u:p%40ss@h/db") == "postgresql://u:***@h/db"
    assert display_db_url("postgresql://h/db?password=hunter22&x=1") == (
        "postgresql://h/db?password=***&x=1"
    )
    url = "postgresql://u:p%40ss@h/db"
    assert scrub_db_secrets(f"failed for {url}: p@ss / p%40ss", url) == (
        "failed for postgresql://u:***@h/db: *** / ***"
    )
