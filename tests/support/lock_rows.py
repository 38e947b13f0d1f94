"""Lock rows as a holder that is gone leaves them: a restarted container's PID 1, a host that
rebooted, a PostgreSQL session whose client the server has not yet seen go."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from sqlalchemy import insert, text

from crawler.store import Store
from crawler.store.migration_guard import advisory_key
from crawler.store.tables import AuditLockRow

HOST = socket.gethostname()


def write_holder(
    store: Store,
    *,
    pid: int,
    started: int | None,
    boot: str | None,
    owner: str = "crawler schedule",
) -> str:
    """The row a holder on this host left, with a fresh lease, as a container killed a moment
    ago (OOM, restart) leaves it; its start, as messages show it."""
    now = datetime.now(UTC).replace(microsecond=0)
    with store.engine.begin() as conn:
        conn.execute(
            insert(AuditLockRow.__table__).values(  # type: ignore[arg-type]
                name="audit", token="0" * 36, owner=owner, host=HOST, pid=pid,
                process_start=started, boot_id=boot, backend_pid=None, started_at=now,
                lease_until=now + timedelta(minutes=15),
            )
        )  # fmt: skip
    return now.isoformat().replace("+00:00", "Z")


@contextmanager
def lingering_session(store: Store) -> Iterator[int | None]:
    """PostgreSQL: the advisory lock held by a server session whose client is gone (the server
    has not seen its connection close yet), the row naming that session; its backend PID.
    SQLite: nothing (None)."""
    if store.engine.dialect.name != "postgresql":
        yield None
        return
    conn = store.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    key = advisory_key(conn, "audit")
    assert conn.scalar(text("select pg_try_advisory_lock(:k)"), {"k": key})
    backend = conn.scalar(text("select pg_backend_pid()"))
    conn.execute(text("update audit_lock set backend_pid = :p"), {"p": backend})
    try:
        yield int(backend)
    finally:
        conn.invalidate()
        conn.close()


def session_alive(store: Store, backend_pid: int) -> bool:
    with store.engine.connect() as probe:
        count = probe.scalar(
            text("select count(*) from pg_stat_activity where pid = :p"), {"p": backend_pid}
        )
    return bool(count)
