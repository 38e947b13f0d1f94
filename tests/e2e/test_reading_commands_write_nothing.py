"""A command that only reads never writes: pointed at a database that is not there (a SQLite
path with no file, an empty PostgreSQL schema), every one of them says there is none and exits
2, and leaves no file, folder or table behind.

Guards the defect where `crawler prune --dry-run` on a URL with no database created an empty
database file and reported "0 audits", and where a reading command given an empty PostgreSQL
schema created the crawler's tables in it. Every command of the command line is listed below as
reading, writing or needing no database, so a new command must say which it is."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, inspect

from crawler.cli import cli

# every command that reads the database and must never create one (nor its tables)
READING = {
    "history": ["history", "Alpha"],
    "report": ["report", "--stdout"],
    "diff": ["diff", "1", "2"],
    "export": ["export", "--out", "out"],
    "ack": ["ack", "--all"],
    "prune --dry-run": ["prune", "--keep-days", "3", "--dry-run"],
    "prune": ["prune", "--keep-days", "3"],  # nothing to prune: it says so, creates nothing
    "db check": ["db", "check"],
}
# commands that create the database on purpose (the first audit, a scheduler, an upgrade)
WRITING = {"audit", "schedule", "db upgrade", "demo"}
# commands that never open the database
NO_DATABASE = {"check", "notify", "validate", "license", "links", "page", "health"}
NONE_THERE = "run `crawler audit` first (or point --db / CRAWLER_DB_URL at an existing one)"


def _commands(group: click.Group, prefix: str = "") -> set[str]:
    found: set[str] = set()
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found |= _commands(command, prefix + name + " ")
        else:
            found.add(prefix + name)
    return found


def test_every_command_is_known_as_reading_writing_or_without_database() -> None:
    reading = {name.removesuffix(" --dry-run") for name in READING}
    assert _commands(cli) == reading | WRITING | NO_DATABASE
    assert not (reading & WRITING) and not (reading & NO_DATABASE)


@pytest.mark.parametrize("name", sorted(READING))
def test_a_reading_command_on_a_missing_sqlite_file_creates_nothing(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "nowhere" / "crawler.sqlite"
    result = CliRunner().invoke(cli, [*READING[name], "--db", f"sqlite:///{missing}"])
    if name == "db check":  # its problems are its findings: exit 1, as for any other problem
        assert result.exit_code == 1, result.output
        assert result.output.splitlines()[1:] == [f"problem: no database file at {missing}"]
    else:
        assert result.exit_code == 2, result.output
        assert result.output == f"Error: no database at {missing}: {NONE_THERE}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no file, no folder


@pytest.mark.parametrize("name", sorted(READING))
def test_a_reading_command_on_an_empty_database_creates_no_table(
    name: str, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty PostgreSQL schema (or an empty SQLite file, as a buggy run left it)."""
    monkeypatch.chdir(tmp_path)
    if db_url.startswith("sqlite"):
        (tmp_path / "crawler.sqlite").touch()
    result = CliRunner().invoke(cli, [*READING[name], "--db", db_url])
    if name == "db check":
        assert result.exit_code == 1, result.output
        assert "problem: no crawler schema yet: run `crawler db upgrade`" in result.output
    else:
        assert result.exit_code == 2, result.output
        assert result.output.startswith("Error: no crawler database at ")
        assert result.output.endswith(f"(it holds no crawler tables): {NONE_THERE}\n")
    engine = create_engine(db_url)
    try:
        with engine.connect() as connection:
            assert inspect(connection).get_table_names() == []
    finally:
        engine.dispose()
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", sorted(set(READING) - {"db check"}))
def test_a_reading_command_does_not_upgrade_an_older_schema(
    name: str, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crawler database at an older revision was upgraded by any command that opened it:
    a reading command says what to run instead, and the schema stays where it was."""
    from alembic import command
    from sqlalchemy import text

    from crawler.store.migration_guard import HEAD_REVISION, alembic_config

    monkeypatch.chdir(tmp_path)
    engine = create_engine(db_url)
    try:
        with engine.begin() as connection:
            cfg = alembic_config()
            cfg.attributes["connection"] = connection
            command.upgrade(cfg, "0001")
        result = CliRunner().invoke(cli, [*READING[name], "--db", db_url])
        assert result.exit_code == 2, result.output
        assert result.output.endswith(
            f"has schema revision 0001, this crawler reads {HEAD_REVISION}: run `crawler db "
            "upgrade` first (a reading command changes nothing)\n"
        )
        with engine.connect() as connection:
            revision = connection.execute(text("select version_num from alembic_version"))
            assert revision.scalar_one() == "0001"
    finally:
        engine.dispose()
