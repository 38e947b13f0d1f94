"""Schema revisions: what the database holds, what this code needs, and a safe upgrade.

Three guarantees before Alembic touches anything:

* a database that already has tables but no crawler schema (another application's SQLite file,
  a shared PostgreSQL schema) is refused with nothing written to it;
* a schema newer than this code (written by a later crawler) is refused, naming both revisions,
  instead of Alembic's "Can't locate revision";
* two processes opening a fresh database at once do not race on the migration: it runs under
  a lock (PostgreSQL: a transaction-scoped advisory lock; SQLite: ``BEGIN IMMEDIATE``).

Alembic is imported only when the database is not already at ``HEAD_REVISION`` (the nightly
case reads one row and needs nothing more); a test keeps that constant equal to Alembic's head.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import Connection, Engine, create_engine, inspect, text
from sqlalchemy.pool import NullPool

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

MIGRATIONS = Path(__file__).with_name("migrations")
CRAWLER_TABLES = frozenset({"audits", "observations", "snapshots", "project_sets"})
# The newest revision under migrations/versions (tests/integration/test_db_schema.py checks it
# against Alembic's own reading): a database already there is used without importing Alembic.
HEAD_REVISION = "0008"
T = TypeVar("T")


class SchemaError(Exception):
    """The database cannot be used by this crawler as it is; the message says what to do."""


class ForeignDatabase(SchemaError):
    pass


class SchemaTooNew(SchemaError):
    pass


class DamagedSchema(SchemaError):
    pass


@dataclass(frozen=True)
class SchemaState:
    revision: str | None  # None: no alembic_version (an empty or a foreign database)
    tables: tuple[str, ...]
    head: str

    @property
    def at_head(self) -> bool:
        return self.revision == self.head


@dataclass(frozen=True)
class SchemaUpgrade:
    before: str | None
    after: str


def alembic_config() -> AlembicConfig:
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


@cache
def _known_revisions() -> tuple[str, frozenset[str]]:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config())
    head = script.get_current_head()
    assert head is not None
    return head, frozenset(r.revision for r in script.walk_revisions())


def code_head() -> str:
    """The newest revision this code knows."""
    return _known_revisions()[0]


def read_state(connection: Connection) -> SchemaState:
    tables, revision = _read_revision(connection)
    return SchemaState(revision, tables, code_head())


def _read_revision(connection: Connection) -> tuple[tuple[str, ...], str | None]:
    """(the tables and views but alembic_version, the stored revision or None): a view is
    another application's as much as a table is."""
    inspector = inspect(connection)
    tables = tuple(sorted({*inspector.get_table_names(), *inspector.get_view_names()}))
    revision: str | None = None
    if "alembic_version" in tables:
        from alembic.runtime.migration import MigrationContext

        heads: Sequence[str] = MigrationContext.configure(connection).get_current_heads()
        revision = ",".join(sorted(heads)) or None
    return tuple(t for t in tables if t != "alembic_version"), revision


def _at_known_head(connection: Connection) -> bool:
    """The usual case, read without Alembic: the crawler's tables, at HEAD_REVISION."""
    tables = set(inspect(connection).get_table_names())
    if "alembic_version" not in tables or not tables >= CRAWLER_TABLES:
        return False
    rows = connection.execute(text("select version_num from alembic_version")).scalars()
    return list(rows) == [HEAD_REVISION]


def ensure_usable(state: SchemaState) -> None:
    """Raise a clear SchemaError unless this code may use (or create) the schema."""
    _head, known = _known_revisions()
    ours = set(state.tables) >= CRAWLER_TABLES
    if state.revision is None and state.tables:
        listed = ", ".join(state.tables[:8]) + (", …" if len(state.tables) > 8 else "")
        raise ForeignDatabase(
            f"not a crawler database: it has {len(state.tables)} table(s) ({listed}) but no "
            "crawler schema version. Nothing was changed; point --db (or CRAWLER_DB_URL) at "
            "a new file or an empty schema."
        )
    if state.revision in known and not ours:
        missing = ", ".join(sorted(CRAWLER_TABLES - set(state.tables)))
        raise DamagedSchema(
            f"the database says its crawler schema is at revision {state.revision}, but the "
            f"crawler's tables are missing ({missing}): it was emptied or damaged by hand. "
            "Nothing was changed; restore it from a backup, or point --db (or CRAWLER_DB_URL) "
            "at a new file or an empty schema."
        )
    if state.revision is not None and state.revision not in known:
        if not ours:
            raise ForeignDatabase(
                f"not a crawler database: its schema version {state.revision!r} belongs to "
                "another application. Nothing was changed; point --db (or CRAWLER_DB_URL) at "
                "a new file or an empty schema."
            )
        raise SchemaTooNew(
            f"the database schema is at revision {state.revision}, newer than this crawler "
            f"knows (its newest is {state.head}): upgrade crawler (or use the crawler "
            "version that wrote this database)."
        )


def _read_once(url: str, read: Callable[[Connection], T]) -> T:
    """``read`` on one plain connection of its own (no pragmas, no pool), then closed."""
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            return read(connection)
    finally:
        engine.dispose()


def _database_at_known_head(url: str) -> bool:
    return _read_once(url, _at_known_head)


def database_at_head(url: str) -> bool:
    """The crawler's tables at HEAD_REVISION, read without Alembic and without writing."""
    return _database_at_known_head(url)


def inspect_database(url: str) -> SchemaState:
    """Read the schema state without changing anything (no pragmas, no migration)."""
    return _read_once(url, read_state)


def advisory_key(connection: Connection, purpose: str) -> int:
    """A PostgreSQL advisory lock key for this database *and* schema (tests share a database
    with one schema each; so may teams)."""
    schema = connection.scalar(text("select current_database() || '.' || current_schema()"))
    digest = hashlib.sha256(f"crawler:{purpose}:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _lock_for_migration(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        key = advisory_key(connection, "migrate")
        connection.execute(text("select pg_advisory_xact_lock(:key)"), {"key": key})
    elif connection.dialect.name == "sqlite":
        # pysqlite runs DDL outside any transaction unless one is open: open a write
        # transaction so that a second process waits here (busy timeout) instead of racing
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def upgrade_schema(engine: Engine) -> SchemaUpgrade:
    """Bring the schema to head, refusing foreign and newer databases first."""
    if engine.dialect.name == "sqlite":
        # look before the engine's first connection: its pragmas (WAL) would write the file
        url = engine.url.render_as_string(hide_password=False)
        if _database_at_known_head(url):  # the nightly case: nothing to check further
            return SchemaUpgrade(HEAD_REVISION, HEAD_REVISION)
        ensure_usable(inspect_database(url))
    with engine.connect() as connection:  # the usual case, at head: no lock, no write
        if _at_known_head(connection):
            return SchemaUpgrade(HEAD_REVISION, HEAD_REVISION)
        state = read_state(connection)
    ensure_usable(state)
    if state.at_head:
        return SchemaUpgrade(state.revision, state.head)
    from alembic import command

    with engine.begin() as connection:
        _lock_for_migration(connection)
        state = read_state(connection)  # again: another process may have migrated meanwhile
        ensure_usable(state)
        if not state.at_head:
            cfg = alembic_config()
            cfg.attributes["connection"] = connection
            command.upgrade(cfg, "head")
    return SchemaUpgrade(state.revision, state.head)
