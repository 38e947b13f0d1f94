"""A database that cannot be used is said in one line, in the crawler's words: what is wrong and
what to do, exit 2, never the driver's message (psycopg's "connection failed: …", SQLite's
"attempt to write a readonly database", "No module named 'MySQLdb'") or a traceback, and
never the password. Against the real PostgreSQL server (a closed port, a database and a role
it does not have), real SQLite files, and, for a wrong password, a loopback server speaking
PostgreSQL's protocol (the test server trusts every local connection: see
tests/support/postgres_wire.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from crawler.cli import cli
from crawler.store.database import display_db_url
from tests.conftest import PG_URL
from tests.support.ops import PROJECTS, closed_port
from tests.support.postgres_wire import PasswordRefusingPostgres

PASSWORD = "hunter2-db-secret"
SUPPORTED = (
    "supported: sqlite:///PATH (built in) and postgresql+psycopg://USER@HOST/DATABASE (its "
    "driver: pip install 'crawler[postgres]')"
)
COMMANDS = [["audit"], ["history", "Alpha"], ["prune", "--keep-days", "3"], ["db", "check"]]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "sources.yaml").write_text(PROJECTS)
    monkeypatch.chdir(tmp_path)
    for name in ("CRAWLER_DB_URL", "GITHUB_TOKEN", "GH_TOKEN", "CRAWLER_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _one_error_line(args: list[str], url: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--db", url])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.output
    assert "Traceback" not in result.output and "Usage:" not in result.output
    assert PASSWORD not in result.output
    for raw in ("connection failed:", "sqlalche.me", "OperationalError", "No module named"):
        assert raw not in result.output
    return errors[0]


def _pg(**parts: object) -> str:
    """The test server's URL with some parts replaced."""
    url = make_url(PG_URL).set(**parts)  # type: ignore[arg-type]
    return url.render_as_string(hide_password=False)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_refused_connection(workdir: Path, args: list[str]) -> None:
    port = closed_port()
    url = f"postgresql+psycopg://crawler:{PASSWORD}@127.0.0.1:{port}/crawler"
    assert _one_error_line(args, url) == (
        f"Error: cannot open database 'postgresql+psycopg://crawler:***@127.0.0.1:{port}/"
        f"crawler': nothing accepts connections at 127.0.0.1:{port} (connection refused): "
        "start PostgreSQL there, or fix the host and port in --db or CRAWLER_DB_URL"
    )


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_missing_database(workdir: Path, args: list[str], pg_available: bool) -> None:
    if not pg_available:
        pytest.skip("PostgreSQL is not reachable")
    url = _pg(database="no_such_crawler_db")
    where = f"{make_url(url).host}:{make_url(url).port or 5432}"
    assert _one_error_line(args, url) == (
        f"Error: cannot open database {url!r}: there is no database 'no_such_crawler_db' on "
        f"{where}: create it (createdb -h {make_url(url).host} no_such_crawler_db) or fix the "
        "database name in --db or CRAWLER_DB_URL"
    )


def test_a_user_the_server_does_not_have(workdir: Path, pg_available: bool) -> None:
    if not pg_available:
        pytest.skip("PostgreSQL is not reachable")
    url = _pg(username="no_such_role", password=PASSWORD)
    line = _one_error_line(["audit"], url)
    assert line.endswith(
        "has no user 'no_such_role': create it (createuser no_such_role) or fix the user in "
        "--db or CRAWLER_DB_URL"
    )


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_wrong_password(workdir: Path, args: list[str]) -> None:
    with PasswordRefusingPostgres() as server:
        url = f"postgresql+psycopg://crawler:{PASSWORD}@127.0.0.1:{server.port}/crawler"
        line = _one_error_line(args, url)
        assert server.passwords  # the driver did send it: the server refused it
    assert line == (
        f"Error: cannot open database 'postgresql+psycopg://crawler:***@127.0.0.1:{server.port}"
        f"/crawler': PostgreSQL at 127.0.0.1:{server.port} refused the password of user "
        "'crawler': fix the password in --db or CRAWLER_DB_URL (or PGPASSWORD, ~/.pgpass)"
    )


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize("scheme", ["mysql", "mysql+pymysql", "oracle", "mssql+pyodbc"])
def test_an_unsupported_scheme_names_the_supported_ones(
    workdir: Path, args: list[str], scheme: str
) -> None:
    url = f"{scheme}://crawler:{PASSWORD}@db.example/crawler"
    assert _one_error_line(args, url) == (
        f"Error: cannot open database '{scheme}://crawler:***@db.example/crawler': the URL "
        f"scheme {scheme.split('+')[0]!r} is not supported ({SUPPORTED}); set it with --db or "
        "CRAWLER_DB_URL"
    )
    assert not (workdir / "db").exists()


def test_a_postgresql_driver_that_is_not_installed_points_at_the_extra(workdir: Path) -> None:
    url = "postgresql+pg8000://crawler@db.example/crawler"
    assert _one_error_line(["audit"], url) == (
        f"Error: cannot open database {url!r}: the PostgreSQL driver 'pg8000' is not "
        "installed: use postgresql+psycopg://… instead, whose driver pip install "
        "'crawler[postgres]' installs"
    )


def test_a_malformed_url(workdir: Path) -> None:
    assert _one_error_line(["audit"], "not a url") == (
        f"Error: cannot open database 'not a url': not a database URL ({SUPPORTED}); set it "
        "with --db or CRAWLER_DB_URL"
    )


def _audited(workdir: Path) -> Path:
    """A real crawler database with one audit in it (no upstream needed: an empty catalog)."""
    (workdir / "empty.yaml").write_text("projects: []\n")
    path = workdir / "crawler.sqlite"
    done = CliRunner().invoke(
        cli, ["--quiet", "audit", "--config", "empty.yaml", "--db", f"sqlite:///{path}"]
    )
    assert done.exit_code == 0, done.output
    return path


@pytest.mark.parametrize("args", [["audit"], ["prune", "--keep-days", "3"]], ids=str)
def test_a_read_only_sqlite_file_is_said_before_anything_starts(
    workdir: Path, args: list[str]
) -> None:
    """Opened read-only (a URI filename with mode=ro: the tests run as root, who may write a
    file whatever its mode): the same words a file or folder without write permission gets."""
    path = _audited(workdir)
    before = path.read_bytes()
    url = f"sqlite:///file:{path}?mode=ro&uri=true"
    assert _one_error_line(args, url) == (
        f"Error: cannot write to database {display_db_url(url)!r}: the SQLite file {path} is "
        "read-only (the file, its folder or the URL's mode=ro): the crawler writes its audits "
        "there; make the file and its folder writable by this user, or point --db or "
        "CRAWLER_DB_URL at a writable copy"
    )
    assert path.read_bytes() == before
    # a command that only reads works on it
    report = CliRunner().invoke(cli, ["report", "--stdout", "--db", url])
    assert report.exit_code == 0, report.output
    assert report.output.startswith("# ")


def test_a_file_that_is_not_a_sqlite_database(workdir: Path) -> None:
    path = workdir / "notes.sqlite"
    path.write_text("these are my notes, not a database\n" * 100)
    line = _one_error_line(["audit"], f"sqlite:///{path}")
    assert line.endswith(
        f"{path} is not a SQLite database (or it is damaged): point --db or CRAWLER_DB_URL at "
        "the crawler's database, or restore it from a backup"
    )
    assert path.read_text().startswith("these are my notes")


def test_postgresql_without_its_driver_says_which_extra_installs_it(workdir: Path) -> None:
    """A plain install has no psycopg: the line names the extra, not "No module named"."""
    code = "import sys; sys.modules['psycopg'] = None; from crawler.cli import main; main()"
    url = f"postgresql+psycopg://crawler:{PASSWORD}@127.0.0.1:{closed_port()}/crawler"
    run = subprocess.run(
        [sys.executable, "-c", code, "history", "Alpha", "--db", url],
        cwd=workdir, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.endswith(
        "': the PostgreSQL driver 'psycopg' is not installed: pip install 'crawler[postgres]'\n"
    )
    assert "Traceback" not in run.stderr and PASSWORD not in run.stderr
