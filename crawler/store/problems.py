"""A database that cannot be used, said in the crawler's words: what is wrong and what to do,
in one line, never the driver's own message or a traceback.

``url_problem`` answers before anything is imported or connected (a scheme the crawler does
not support, a driver that is not installed, a malformed URL); ``known_problem`` reads a
failure (a refused connection, a wrong password, a missing database, a read-only SQLite
file…). Both return ``None`` for what they do not recognise: the caller then says the
driver's first line, scrubbed of the password (``describe_db_error``).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sqlite3
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError

SUPPORTED = (
    "supported: sqlite:///PATH (built in) and postgresql+psycopg://USER@HOST/DATABASE "
    "(its driver: pip install 'crawler[postgres]')"
)
WHERE = "--db or CRAWLER_DB_URL"
# the PostgreSQL drivers SQLAlchemy names, by the module each imports
_PG_DRIVERS = {"psycopg": "psycopg", "psycopg2": "psycopg2", "pg8000": "pg8000",
               "asyncpg": "asyncpg", "psycopg2cffi": "psycopg2cffi"}  # fmt: skip
_PG_DEFAULT_DRIVER = "psycopg"  # SQLAlchemy 2.1's for a bare postgresql://; 2.0's is psycopg2


def parse(url: str) -> URL | None:
    try:
        return make_url(url)
    except Exception:  # malformed: url_problem says so
        return None


def url_problem(url: str) -> str | None:
    """What makes ``url`` unusable before connecting, or None."""
    parsed = parse(url)
    if parsed is None:
        return f"not a database URL ({SUPPORTED}); set it with {WHERE}"
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return None
    if backend != "postgresql":
        return (
            f"the URL scheme {parsed.drivername.split('+')[0]!r} is not supported "
            f"({SUPPORTED}); set it with {WHERE}"
        )
    driver = parsed.get_driver_name() if "+" in parsed.drivername else _PG_DEFAULT_DRIVER
    module = _PG_DRIVERS.get(driver, driver)
    if not _importable(module):
        install = (
            "pip install 'crawler[postgres]'"
            if module == "psycopg"
            else "use postgresql+psycopg://… instead, whose driver pip install "
            "'crawler[postgres]' installs"
        )
        return f"the PostgreSQL driver {module!r} is not installed: {install}"
    return None


def sqlite_read_only(url: str) -> str | None:
    """For a command that writes: the problem when the SQLite database at ``url`` is there
    but cannot be written (the file or its folder, which holds the write-ahead log, or a URI
    filename opened ``mode=ro``), or None. Said before anything starts, not at the first
    write half-way through."""
    parsed = parse(url)
    if parsed is None or parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    read_only_uri = parsed.query.get("mode") == "ro" or re.search(r"[?&]mode=ro\b", database)
    path = Path(_sqlite_path(parsed))
    exists = database not in ("", ":memory:") and path.exists()
    writable = exists and os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    if read_only_uri or (exists and not writable):
        return _sqlite_problem(sqlite3.OperationalError("readonly database"), parsed)
    return None


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module blocked (sys.modules[name] = None)
        return False


def _where(parsed: URL | None) -> str:
    if parsed is None:
        return "the server"
    return f"{parsed.host or 'localhost'}:{parsed.port or 5432}"


def known_problem(exc: BaseException, url: str) -> str | None:
    """The failure ``exc`` of the database at ``url`` in the crawler's words, or None."""
    cause: BaseException = exc.orig if isinstance(exc, DBAPIError) and exc.orig else exc
    parsed = parse(url)
    if isinstance(cause, sqlite3.Error):
        return _sqlite_problem(cause, parsed)
    if isinstance(cause, PermissionError) and parsed and parsed.get_backend_name() == "sqlite":
        return _sqlite_problem(cause, parsed)  # its folder could not be created
    if isinstance(exc, DBAPIError) or type(cause).__module__.startswith("psycopg"):
        return _postgres_problem(str(cause), parsed)
    return None


def sqlite_file(url: str) -> str | None:
    """The file a SQLite URL names (also a ``file:`` URI filename), or None: not SQLite, or
    in memory."""
    parsed = parse(url)
    if parsed is None or parsed.get_backend_name() != "sqlite":
        return None
    path = _sqlite_path(parsed)
    return None if path in ("", ":memory:") else path


def _sqlite_path(parsed: URL | None) -> str:
    database = (parsed.database if parsed else None) or ":memory:"
    return re.sub(r"^file:", "", database).split("?")[0]


def _sqlite_problem(cause: BaseException, parsed: URL | None) -> str | None:
    path = _sqlite_path(parsed)
    name = getattr(cause, "sqlite_errorname", "")
    text = str(cause).lower()
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return (
            f"the SQLite file {path} is read-only (the file, its folder or the URL's mode=ro): "
            "the crawler writes its audits there; make the file and its folder writable by "
            f"this user, or point {WHERE} at a writable copy"
        )
    if isinstance(cause, PermissionError):
        return (
            f"no permission to create {Path(path).parent} for the SQLite file {path}: create it "
            f"writable by this user, or point {WHERE} elsewhere"
        )
    if name == "SQLITE_CANTOPEN" or "unable to open database file" in text:
        return (
            f"cannot open the SQLite file {path}: its folder cannot be read or written by "
            f"this user; fix the permissions, or point {WHERE} elsewhere"
        )
    if name == "SQLITE_NOTADB" or "file is not a database" in text:
        return (
            f"{path} is not a SQLite database (or it is damaged): point {WHERE} at the "
            "crawler's database, or restore it from a backup"
        )
    if name == "SQLITE_CORRUPT" or "malformed" in text:
        return f"the SQLite file {path} is damaged: restore it from a backup"
    if name == "SQLITE_FULL" or "database or disk is full" in text:
        return f"the disk holding {path} is full: free some space (`crawler prune` helps)"
    return None


def _postgres_problem(text: str, parsed: URL | None) -> str | None:
    where = _where(parsed)
    user = parsed.username if parsed and parsed.username else "(the default user)"
    database = parsed.database if parsed and parsed.database else user
    if "connection refused" in text.lower():
        return (
            f"nothing accepts connections at {where} (connection refused): start PostgreSQL "
            f"there, or fix the host and port in {WHERE}"
        )
    if "password authentication failed" in text or "no password supplied" in text:
        return (
            f"PostgreSQL at {where} refused the password of user {user!r}: fix the password "
            f"in {WHERE} (or PGPASSWORD, ~/.pgpass)"
        )
    if re.search(r'database "[^"]*" does not exist', text):
        return (
            f"there is no database {database!r} on {where}: create it (createdb -h "
            f"{parsed.host if parsed and parsed.host else 'localhost'} {database}) or fix the "
            f"database name in {WHERE}"
        )
    if re.search(r'role "[^"]*" does not exist', text):
        return (
            f"PostgreSQL at {where} has no user {user!r}: create it (createuser {user}) or fix "
            f"the user in {WHERE}"
        )
    if "pg_hba.conf" in text:
        return (
            f"PostgreSQL at {where} does not let user {user!r} in from this host (pg_hba.conf): "
            "ask its administrator for an entry"
        )
    if "resolve host" in text or "translate host name" in text:
        return f"cannot resolve the database host {where}: fix the host in {WHERE}"
    if "timeout expired" in text or "timed out" in text:
        return (
            f"no answer from {where} in time (connection timeout): is the server up and "
            "reachable from here (a firewall)?"
        )
    return None
