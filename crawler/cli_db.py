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
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from crawler.cli_ops import Failure, output
from crawler.store import DEFAULT_DB_URL, Store
from crawler.store.database import StoreError, display_db_url, scrub_db_secrets
from crawler.store.lock import AuditLock, AuditLocked

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


def open_store(db_url: str | None, *, reading: bool = False) -> Store:
    """The store, or an error (exit 2) that says "cannot open database" (no password, no
    trace); for a ``reading`` command, only one that exists: reading never creates a database
    file (it says there is none instead)."""
    url = _url(db_url)
    if reading:
        try:
            parsed = make_url(url)
        except Exception:  # malformed: opening it below says why
            parsed = None
        path = parsed.database if parsed is not None and parsed.drivername.startswith(
            "sqlite") else None  # fmt: skip
        if path and path != ":memory:" and not Path(path).exists():
            raise Failure(
                f"no database at {path}: run `crawler audit` first (or point --db / "
                "CRAWLER_DB_URL at an existing one)"
            )
    try:
        return Store(url)
    except Exception as exc:  # a bad URL or an unreachable server: say so, with no traceback
        reason = scrub_db_secrets(str(exc), url)  # the password never reaches the terminal
        raise Failure(f"cannot open database {display_db_url(url)!r}: {reason}") from None



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
    from crawler.store.database import scrub_db_secrets
    from crawler.store.maintenance import check_database

    url = _url(db_url)
    try:
        report = check_database(url)
    except Exception as exc:
        reason = scrub_db_secrets(str(exc), url)
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
    help="Keep audits started in the last N days (and all state still referenced).",
)
@click.option("--dry-run", is_flag=True, help="Count what would go; change nothing.")
def prune(db_url: str | None, keep_days: int, dry_run: bool) -> None:
    """Remove old audits, unreferenced snapshots and stale HTTP cache entries.

    Never removes the last complete audit, the next audit's baseline, or any state still
    referenced; runs under the audit lock (exit 3 while an audit runs)."""
    from crawler.store.maintenance import prune as prune_database

    store = open_store(db_url)
    try:
        result = prune_database(store, keep_days, dry_run=dry_run)
    except AuditLocked as exc:
        output().stderr(f"error: {exc}; not pruning (exit status {EXIT_LOCKED})")
        sys.exit(EXIT_LOCKED)
    finally:
        store.close()
    verb = "would remove" if dry_run else "removed"
    removed = ", ".join(f"{n} {name}" for name, n in result.removed.items())
    click.echo(f"{verb} (older than {result.cutoff.date().isoformat()}): {removed}")
    listed = ", ".join(f"#{i}" for i in result.kept_audits[:20])
    more = ", …" if len(result.kept_audits) > 20 else ""
    click.echo(f"kept {len(result.kept_audits)} audits" + (f": {listed}{more}" if listed else ""))
