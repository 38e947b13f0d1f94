"""One audit at a time per database, whatever starts it (cron, ``crawler schedule``, a second
container).

* PostgreSQL: a session advisory lock held on a dedicated connection for the audit's duration;
  the server frees it when that connection ends, however the process died. The
  ``audit_lock`` row only says who holds it.
* SQLite (and anything else): the ``audit_lock`` row is the lock: owner, host, PID, start time
  and a lease that a heartbeat thread renews while the lock is held. A second process takes it
  over when the holder's process is gone or its lease expired (a different host, or a holder
  frozen past its lease); otherwise it gets ``AuditLocked``.

The holder's process is gone when it was on this host and its PID is free, or its PID is now
another process (its start time differs: a restarted container's PID 1), or the host booted
since (crawler.store.process_identity). On PostgreSQL such a holder's server session may still
linger (a connection the server has not yet seen close): it is ended, and the lock taken.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, cast

from sqlalchemy import Connection, Engine, Table, delete, insert, select, text, update
from sqlalchemy.exc import IntegrityError

from crawler.store.migration_guard import advisory_key
from crawler.store.process_identity import ProcessIdentity, gone_because
from crawler.store.stall import describe_error
from crawler.store.tables import AuditLockRow

log = logging.getLogger(__name__)
DEFAULT_LEASE = timedelta(minutes=15)
LOCK_NAME = "audit"
_TABLE = cast(Table, AuditLockRow.__table__)
_ATTEMPTS = 5  # races between contenders are retried a few times, never waited on
_RECORD_GRACE = 3.0  # seconds a new PostgreSQL holder gets to write who it is


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def iso(moment: datetime) -> str:
    return _as_utc(moment).isoformat(timespec="seconds").replace("+00:00", "Z")


_TERMINATED_WAIT = 5.0  # seconds a gone holder's ended PostgreSQL session gets to let go


@dataclass(frozen=True)
class LockHolder:
    owner: str
    host: str
    pid: int
    since: datetime
    lease_until: datetime
    process_start: int | None = None  # clock ticks since boot (None: not recorded)
    boot_id: str | None = None

    def describe(self) -> str:
        return f"{self.owner} (pid {self.pid} on {self.host}) since {iso(self.since)}"

    @property
    def process(self) -> ProcessIdentity:
        return ProcessIdentity(self.pid, self.process_start, self.boot_id)

    def gone_from(self, host: str) -> str | None:
        """Why this holder's process no longer runs, if it ran on ``host`` (this host); None
        when it may still run, or ran elsewhere (then only its lease says)."""
        return gone_because(self.process) if self.host == host else None

    @staticmethod
    def from_row(row: Any) -> LockHolder:
        return LockHolder(
            row.owner, row.host, row.pid, _as_utc(row.started_at), _as_utc(row.lease_until),
            row.process_start, row.boot_id,
        )  # fmt: skip


class AuditLocked(Exception):
    """Another audit holds the lock; ``holder`` says who (None if not yet recorded)."""

    def __init__(self, holder: LockHolder | None) -> None:
        self.holder = holder
        who = holder.describe() if holder else "a process that has not recorded itself yet"
        super().__init__(f"another audit is running on this database: {who}")


class AuditLockLost(Exception):
    """This process was frozen past its lease and another took the lock over meanwhile."""

    def __init__(self, holder: LockHolder | None) -> None:
        self.holder = holder
        who = holder.describe() if holder else "another process"
        super().__init__(
            f"the audit lock was taken over by {who} while this audit was frozen past its lease"
        )


class AuditLock:
    """``with AuditLock(engine, "cli audit") as lock: …``; ``lock.lost`` turns True if the
    heartbeat finds the lock was taken over (the process was frozen past its lease)."""

    def __init__(
        self,
        engine: Engine,
        owner: str,
        *,
        lease: timedelta = DEFAULT_LEASE,
        heartbeat: bool = True,
        clock: Callable[[], datetime] = _utcnow,
        host: str | None = None,
    ) -> None:
        self._engine = engine
        self._lease = lease
        self._heartbeat = heartbeat
        self._clock = clock
        self.owner = owner
        self.host = host or socket.gethostname()
        self.process = ProcessIdentity.current()
        self.pid = self.process.pid
        self.token = str(uuid.uuid4())
        self.lost = False
        self.holder: LockHolder | None = None  # this process, once acquired
        self._connection: Connection | None = None  # PostgreSQL: holds the advisory lock
        self._key = 0
        self._stop = threading.Event()
        self._held = False
        self._thread: threading.Thread | None = None

    # -- taking and giving back -------------------------------------------------------------

    def __enter__(self) -> AuditLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock or raise AuditLocked; never waits for the holder."""
        if self._engine.dialect.name == "postgresql":
            self._acquire_advisory()
        else:
            self._acquire_row()
        try:
            with self._engine.connect() as conn:
                mine = _TABLE.c.name == LOCK_NAME, _TABLE.c.token == self.token
                self.holder = LockHolder.from_row(conn.execute(select(_TABLE).where(*mine)).one())
        except BaseException:
            self.release()
            raise
        self._held = True
        if self._heartbeat and self._connection is None:  # an advisory lock needs no lease
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._beat, name="audit-lock-heartbeat", daemon=True
            )
            self._thread.start()

    def release(self) -> None:
        self._held = False
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._connection is not None:
            try:
                self._connection.execute(text("select pg_advisory_unlock(:k)"), {"k": self._key})
            except Exception as exc:
                log.warning("could not release the advisory lock: %s", describe_error(exc))
            finally:  # closing the physical connection frees any session lock left
                self._connection.invalidate()
                self._connection.close()
                self._connection = None
        try:  # only our own row: a process that took the lock over has its own token
            with self._engine.begin() as conn:
                conn.execute(
                    delete(_TABLE).where(_TABLE.c.name == LOCK_NAME, _TABLE.c.token == self.token)
                )
        except Exception as exc:  # the audit's outcome matters more than the bookkeeping
            log.warning("could not clear the audit lock row: %s", describe_error(exc))

    # -- the lease ----------------------------------------------------------------------------

    @property
    def held(self) -> bool:
        return self._held

    def confirm(self) -> None:
        """Before the audit records, reports or notifies anything: is the lock still this
        process's? AuditLockLost when another took it over (this process was frozen past its
        lease); a lease that ran out with nobody taking over is renewed, with a warning."""
        if self._connection is not None:  # PostgreSQL: held for as long as the connection lives
            return
        with self._engine.connect() as conn:
            row = conn.execute(select(_TABLE).where(_TABLE.c.name == LOCK_NAME)).first()
        if row is None or row.token != self.token:
            self.lost = True
            raise AuditLockLost(LockHolder.from_row(row) if row is not None else None)
        lease_until = _as_utc(row.lease_until)
        if lease_until < self._clock():
            log.warning(
                "this audit was frozen past its lease (it ended %s); nobody took the lock "
                "over, so the audit goes on and the lease is renewed",
                iso(lease_until),
            )
        if not self.renew():
            raise AuditLockLost(self._current_holder())

    def renew(self) -> bool:
        """Extend the lease; False (and ``lost``) when another process has taken the lock."""
        with self._engine.begin() as conn:
            renewed = conn.execute(
                update(_TABLE)
                .where(_TABLE.c.name == LOCK_NAME, _TABLE.c.token == self.token)
                .values(lease_until=self._clock() + self._lease)
            ).rowcount
        if renewed != 1:
            self.lost = True
            log.error("the audit lock was taken over by another process")
        return renewed == 1

    def _beat(self) -> None:
        interval = max(self._lease.total_seconds() / 5, 0.01)
        while not self._stop.wait(interval):
            try:
                if not self.renew():
                    return
            except Exception as exc:  # a busy or briefly unreachable database: try again
                log.warning("audit lock heartbeat failed: %s", describe_error(exc))

    # -- SQLite and others: the row is the lock -------------------------------------------------

    def _mine(self, now: datetime) -> dict[str, Any]:
        return {
            "token": self.token,
            "owner": self.owner,
            "host": self.host,
            "pid": self.pid,
            "process_start": self.process.started,
            "boot_id": self.process.boot,
            "backend_pid": None,
            "started_at": now,
            "lease_until": now + self._lease,
        }

    def _acquire_row(self) -> None:
        for _attempt in range(_ATTEMPTS):
            now = self._clock()
            with self._engine.connect() as conn:
                row = conn.execute(select(_TABLE).where(_TABLE.c.name == LOCK_NAME)).first()
            if row is None:
                try:
                    with self._engine.begin() as conn:
                        conn.execute(insert(_TABLE).values(name=LOCK_NAME, **self._mine(now)))
                    return
                except IntegrityError:  # another process inserted first: look again
                    continue
            holder = LockHolder.from_row(row)
            reason = self._takeover_reason(holder, now)
            if reason is None:
                raise AuditLocked(holder)
            with self._engine.begin() as conn:
                taken = conn.execute(
                    update(_TABLE)
                    .where(_TABLE.c.name == LOCK_NAME, _TABLE.c.token == row.token)
                    .values(**self._mine(now))
                ).rowcount
            if taken == 1:
                log.warning("took over the audit lock of %s: %s", holder.describe(), reason)
                return
        raise AuditLocked(self._current_holder())

    def _takeover_reason(self, holder: LockHolder, now: datetime) -> str | None:
        if holder.lease_until < now:
            return f"its lease expired at {iso(holder.lease_until)}"
        return holder.gone_from(self.host)

    def _current_holder(self) -> LockHolder | None:
        with self._engine.connect() as conn:
            row = conn.execute(select(_TABLE).where(_TABLE.c.name == LOCK_NAME)).first()
        return LockHolder.from_row(row) if row is not None else None

    # -- PostgreSQL: an advisory lock on a dedicated connection ---------------------------------

    def _acquire_advisory(self) -> None:
        from sqlalchemy.dialects.postgresql import insert as pg_insert  # PostgreSQL only

        for _attempt in range(_ATTEMPTS):
            conn = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            self._key = advisory_key(conn, "audit")
            if conn.scalar(text("select pg_try_advisory_lock(:k)"), {"k": self._key}):
                self._connection = conn
                # one statement on the connection already open: the row names us at once
                # (a killed holder's row is overwritten)
                values = {**self._mine(self._clock()), "backend_pid": text("pg_backend_pid()")}
                upsert = pg_insert(_TABLE).values(name=LOCK_NAME, **values)
                conn.execute(upsert.on_conflict_do_update(index_elements=["name"], set_=values))
                return
            holder_backend = conn.scalar(
                text(
                    "select pid from pg_locks where locktype = 'advisory' and granted"
                    " and database = (select oid from pg_database"
                    "                 where datname = current_database())"
                    " and classid::bigint = :hi and objid::bigint = :lo and objsubid = 1"
                ),
                {"hi": (self._key >> 32) & 0xFFFFFFFF, "lo": self._key & 0xFFFFFFFF},
            )
            conn.close()
            if holder_backend is None:
                continue  # released between our try and our look: try again
            holder = self._recorded_holder(holder_backend)
            gone = holder.gone_from(self.host) if holder is not None else None
            if holder is None or gone is None or not self._end_session(holder_backend):
                raise AuditLocked(holder)
            log.warning(
                "took over the audit lock of %s: %s; its database session was ended",
                holder.describe(),
                gone,
            )
        raise AuditLocked(None)

    def _end_session(self, backend_pid: int) -> bool:
        """End the server session of a holder whose process is gone (the server had not yet
        seen its connection close) and wait for the lock to be let go; False when the server
        refused (another role's session) or it is still held."""
        try:
            with self._engine.connect() as conn:
                ended = conn.scalar(text("select pg_terminate_backend(:p)"), {"p": backend_pid})
        except Exception as exc:  # not allowed to: say so, the caller reports the holder
            log.warning("could not end the gone holder's session: %s", describe_error(exc))
            return False
        deadline = time.monotonic() + _TERMINATED_WAIT
        while ended and time.monotonic() < deadline:
            with self._engine.connect() as conn:
                alive = conn.scalar(
                    text("select count(*) from pg_stat_activity where pid = :p"), {"p": backend_pid}
                )
            if not alive:
                return True
            time.sleep(0.05)
        return False

    def _recorded_holder(self, backend_pid: int) -> LockHolder | None:
        """The row of the session holding the advisory lock; a holder that got the lock a
        moment ago is given a moment to write it."""
        deadline = time.monotonic() + _RECORD_GRACE
        while True:
            with self._engine.connect() as reader:
                row = reader.execute(select(_TABLE).where(_TABLE.c.name == LOCK_NAME)).first()
            if row is not None and row.backend_pid == backend_pid:
                return LockHolder.from_row(row)
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)
