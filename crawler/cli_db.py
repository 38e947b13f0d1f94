"""Database commands (``crawler db upgrade|check``, ``crawler prune``) and the audit lock's
command-line face: a second audit on the same database says who runs and exits 3."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import click
from sqlalchemy.exc import SQLAlchemyError

from crawler.cli_ops import Failure, output
from crawler.store import DEFAULT_DB_URL, Store
from crawler.store.database import (
    StoreError,
    describe_db_error,
    display_db_url,
)
from crawler.store.lock import AuditLock, AuditLocked
from crawler.store.migration_guard import ensure_usable

EXIT_LOCKED = 3

db_option = click.option(
    "--db",
    "db_url",
    default=None,
    help=f"SQLAlchemy database URL [default: $CRAWLER_DB_URL, else {DEFAULT_DB_URL} if it "
    "exists, else ~/.local/share/crawler/crawler.sqlite if it exists or sources.yaml came from "
    "~/.config/crawler, else the first].",
)


def _url(db_url: str | None) -> str:
    from crawler.locations import db_url as find_db_url

    return find_db_url(db_url, os.environ)


def open_store(db_url: str | None, *, reading: bool = False, existing: bool = False) -> Store:
    """The store, or an error (exit 2) that says in one line what is wrong with the database
    and what to do (no password, no driver message, no trace). For a ``reading`` command
    (and an ``existing`` one: ``ack``, ``prune``), only a crawler database that exists, at
    this crawler's schema: they never create a database file or a schema, nor upgrade one
    (they say there is none, or what to run). A command that writes is told before it starts
    that a SQLite file cannot be written."""
    from crawler.store.problems import sqlite_read_only, url_problem

    url = _url(db_url)
    shown = display_db_url(url)
    output().add_secrets(db_secrets(url))  # never in a log line either
    output().db_url = url
    problem = url_problem(url)
    if problem is not None:
        raise Failure(f"cannot open database {shown!r}: {problem}")
    if reading or existing:
        _must_exist(url, shown)
    if not reading:
        problem = sqlite_read_only(url)
        if problem is not None:
            raise Failure(f"cannot write to database {shown!r}: {problem}")
    try:
        return Store(url)
    except Exception as exc:  # an unreachable server, a read-only file: what to do, no trace
        reason = describe_db_error(exc, url)  # the password never reaches the terminal
        raise Failure(f"cannot open database {shown!r}: {reason}") from None


def db_secrets(url: str) -> list[str]:
    """The password the database URL carries, to be redacted from every line."""
    from crawler.store.problems import parse

    parsed = parse(url)
    password = parsed.password if parsed is not None else None
    return [str(password)] if password and len(str(password)) >= 3 else []


def _must_exist(url: str, shown: str) -> None:
    """A reading command's database: there, a crawler's, and at this crawler's schema."""
    from crawler.store.migration_guard import database_at_head, inspect_database
    from crawler.store.problems import sqlite_file

    path = sqlite_file(url)
    if path is not None and not Path(path).exists():
        raise Failure(
            f"no database at {path}: run `crawler audit` first (or point --db / "
            "CRAWLER_DB_URL at an existing one)"
        )
    try:
        if database_at_head(url):  # the usual case, without importing Alembic
            return
        state = inspect_database(url)
        ensure_usable(state)
    except Exception as exc:
        raise Failure(f"cannot open database {shown!r}: {describe_db_error(exc, url)}") from None
    where = path if path else repr(shown)
    if state.revision is None:
        raise Failure(
            f"no crawler database at {where} (it holds no crawler tables): run `crawler audit` "
            "first (or point --db / CRAWLER_DB_URL at an existing one)"
        )
    if not state.at_head:
        raise Failure(
            f"the database at {where} has schema revision {state.revision}, this crawler reads "
            f"{state.head}: run `crawler db upgrade` first (a reading command changes nothing)"
        )


def locked_message(exc: AuditLocked) -> str:
    return f"{exc}; not starting another (exit status {EXIT_LOCKED})"


def take_audit_lock(store: Store, owner: str) -> AuditLock:
    """The audit lock, taken; AuditLocked when another holds it; StoreError, in the one line an
    audit that meets the same failure later says, when the database fails (a full disk)."""
    lock = store.audit_lock(owner)
    try:
        lock.acquire()
    except SQLAlchemyError as exc:
        lock.release()  # whatever part of it was taken (a PostgreSQL session lock)
        failure = store.failed("taking the audit lock", exc)
        raise StoreError(
            f"{failure}. No audit was started: nothing was fetched or recorded."
        ) from None
    return lock


@contextlib.contextmanager
def audit_lock_or_exit(store: Store, owner: str) -> Iterator[AuditLock]:
    """Hold the audit lock for the block, or print who holds it and exit with status 3."""
    try:
        lock = take_audit_lock(store, owner)
    except AuditLocked as exc:
        output().stderr(f"error: {locked_message(exc)}")
        sys.exit(EXIT_LOCKED)
    try:
        yield lock
    finally:
        lock.release()
    if lock.lost:
        output().stderr(
            "warning: the audit lock was taken over while this audit ran (the process was "
            "frozen past its lease): another audit may have run at the same time",
            logging.WARNING,
        )


@click.group("db")
def db() -> None:
    """Database care: upgrade the schema, check its integrity."""


@db.command("upgrade")
@db_option
def db_upgrade(db_url: str | None) -> None:
    """Bring the schema to this crawler's newest revision (Alembic); prints from → to."""
    from crawler.store.database import display_db_url as display_url
    from crawler.store.migration_guard import code_head, inspect_database

    url = _url(db_url)
    try:
        before = inspect_database(url).revision
    except Exception:  # unreachable or malformed: opening the store says so, exit 2
        before = None
    open_store(db_url).close()  # upgrades under the migration lock, or refuses clearly
    head = code_head()
    if before == head:
        click.echo(f"{display_url(url)}: schema already at {head}")
    else:
        click.echo(f"{display_url(url)}: schema upgraded {before or '(empty)'} → {head}")


@db.command("check")
@db_option
def db_check(db_url: str | None) -> None:
    """Read-only checks: schema at head, references intact, no audit stuck. Exit 1 on problems."""
    from crawler.store.database import display_db_url as display_url
    from crawler.store.maintenance import check_database
    from crawler.store.problems import url_problem

    url = _url(db_url)
    output().add_secrets(db_secrets(url))
    problem = url_problem(url)
    if problem is not None:
        raise Failure(f"cannot open database {display_url(url)!r}: {problem}")
    try:
        report = check_database(url)
    except Exception as exc:
        reason = describe_db_error(exc, url)
        raise Failure(f"cannot open database {display_url(url)!r}: {reason}") from None
    click.echo(f"{display_url(url)}: schema {report.revision or '(none)'}, code {report.head}")
    for note in report.notes:
        click.echo(f"note: {note}")
    for problem in report.problems:
        click.echo(f"problem: {problem}")
    if report.ok:
        click.echo("ok: no problems found")
    sys.exit(0 if report.ok else 1)


@click.command()
@db_option
@click.option(
    "--keep-days",
    type=click.IntRange(min=0),
    required=True,
    help="Keep audits started in the last N days, and whatever is still needed (the last "
    "complete audit, baselines, each project's last good state); 0 keeps only that.",
)
@click.option("--dry-run", is_flag=True, help="Count what would go; change nothing.")
def prune(db_url: str | None, keep_days: int, dry_run: bool) -> None:
    """Remove old audits, unreferenced snapshots and stale HTTP cache entries.

    Never removes the last complete audit, the next audit's baseline, or any state still
    referenced; runs under the audit lock (exit 3 while an audit runs)."""
    from crawler.report.words import prune_lines
    from crawler.store.maintenance import prune as prune_database

    store = open_store(db_url, reading=dry_run, existing=True)  # nothing to prune: say so
    try:
        result = prune_database(store, keep_days, dry_run=dry_run)
    except AuditLocked as exc:
        output().stderr(f"error: {exc}; not pruning (exit status {EXIT_LOCKED})")
        sys.exit(EXIT_LOCKED)
    finally:
        store.close()
    for line in prune_lines(
        result.removed, result.kept_audits, keep_days, result.cutoff, dry_run
    ):  # fmt: skip
        click.echo(line)
