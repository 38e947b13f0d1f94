"""One audit at a time per database (issue 11 item 3): real processes, a real SQLite file and a
real PostgreSQL schema, the fake GitHub on loopback."""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from crawler.store import Store
from crawler.store.lock import AuditLock, AuditLocked, LockHolder
from crawler.store.process_identity import boot_id, process_start
from tests.support.lock_rows import lingering_session, session_alive, write_holder

HOST = socket.gethostname()
ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
HOLDER_SCRIPT = """
import sys, time
from crawler.store import Store
store = Store(sys.argv[1])
lock = store.audit_lock("killed holder")
lock.acquire()
print("locked", flush=True)
time.sleep(600)
"""


def _wait_for(condition: object, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_second_lock_names_the_holder_and_release_frees_it(db_url: str) -> None:
    store = Store(db_url)
    with store.audit_lock("first audit") as held:
        with pytest.raises(AuditLocked) as caught, store.audit_lock("second audit"):
            pass
        holder = caught.value.holder
        assert holder is not None
        assert (holder.owner, holder.host, holder.pid) == ("first audit", HOST, os.getpid())
        assert abs((holder.since - datetime.now(UTC)).total_seconds()) < 600
        assert re.fullmatch(
            rf"another audit is running on this database: first audit \(pid {os.getpid()} "
            rf"on {re.escape(HOST)}\) since {ISO}",
            str(caught.value),
        )
        assert held.lost is False
    with store.audit_lock("third audit"):  # released: free again
        with pytest.raises(AuditLocked) as again, store.audit_lock("fourth"):
            pass
        assert again.value.holder is not None and again.value.holder.owner == "third audit"
    store.close()


def test_lock_left_by_a_killed_process_is_taken_over(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(db_url)
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER_SCRIPT, db_url], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "locked\n"
        with pytest.raises(AuditLocked) as caught, store.audit_lock("cli audit"):
            pass
        assert caught.value.holder is not None
        assert (caught.value.holder.owner, caught.value.holder.pid) == ("killed holder", child.pid)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)

    caplog.set_level(logging.WARNING, logger="crawler.store.lock")
    lock = store.audit_lock("after the kill")
    # PostgreSQL frees the advisory lock when it notices the closed connection (at once, in
    # practice); SQLite finds PID child.pid gone on this host
    _wait_for(lambda: _try(lock), "the dead holder's lock to be free", 15)
    try:
        with pytest.raises(AuditLocked) as now_held, store.audit_lock("late"):
            pass
        assert now_held.value.holder is not None
        assert (now_held.value.holder.owner, now_held.value.holder.pid) == (
            "after the kill",
            os.getpid(),
        )
    finally:
        lock.release()
    if store.engine.dialect.name == "sqlite":
        assert [r.getMessage() for r in caplog.records] == [
            f"took over the audit lock of killed holder (pid {child.pid} on {HOST}) since "
            f"{_since(caught.value.holder)}: process {child.pid} is gone"
        ]
    store.close()


def _try(lock: AuditLock) -> bool:
    try:
        lock.acquire()
    except AuditLocked:
        return False
    return True


def _since(holder: LockHolder) -> str:
    return holder.since.isoformat(timespec="seconds").replace("+00:00", "Z")


def test_expired_lease_is_taken_over_and_the_frozen_holder_knows(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'lock.sqlite'}")
    # a holder on another machine: its PID means nothing here, only its lease counts
    frozen = AuditLock(store.engine, "frozen audit", host="elsewhere", heartbeat=False)
    frozen.acquire()
    with pytest.raises(AuditLocked) as live, store.audit_lock("too early"):
        pass
    assert live.value.holder is not None
    assert (live.value.holder.owner, live.value.holder.host) == ("frozen audit", "elsewhere")

    an_hour_later = datetime.now(UTC) + timedelta(hours=1)  # the 15-minute lease has run out
    taker = AuditLock(store.engine, "taker", clock=lambda: an_hour_later, heartbeat=False)
    taker.acquire()
    assert frozen.renew() is False and frozen.lost is True
    frozen.release()  # must not free the lock it no longer holds
    with pytest.raises(AuditLocked) as after, store.audit_lock("third"):
        pass
    assert after.value.holder is not None and after.value.holder.owner == "taker"
    assert after.value.holder.lease_until == an_hour_later + timedelta(minutes=15)
    taker.release()
    store.close()


def test_heartbeat_renews_the_lease_while_held(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'lock.sqlite'}")

    def lease_until() -> datetime:
        with pytest.raises(AuditLocked) as caught, store.audit_lock("probe"):
            pass
        assert caught.value.holder is not None
        return caught.value.holder.lease_until

    with store.audit_lock("long audit", lease=timedelta(seconds=0.5)) as lock:
        first = lease_until()
        _wait_for(lambda: lease_until() > first, "a heartbeat", 30)
        assert lock.lost is False
    store.close()


# -- a PID reused by another process (a restarted container's PID 1), a host restarted ------------

PID_1_STARTED = process_start(1)
REUSED = (
    "process 1 is another process now (started at another moment: its PID was reused, as by a "
    "restarted container's PID 1)"
)


@pytest.mark.skipif(PID_1_STARTED is None, reason="no /proc/1/stat to read")
def test_a_holder_whose_pid_is_now_another_process_is_taken_over_at_once(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 38 item 1: the image runs crawler as PID 1; after a restart the new PID 1 found
    "itself" holding the lock for the 15-minute lease and skipped its night."""
    assert PID_1_STARTED is not None
    store = Store(db_url)
    since = write_holder(store, pid=1, started=PID_1_STARTED - 100, boot=boot_id())
    caplog.set_level(logging.WARNING, logger="crawler.store.lock")
    with lingering_session(store) as lingering, store.audit_lock("restarted container") as lock:
        holder = lock.holder
        assert holder is not None
        assert (holder.owner, holder.pid, holder.process_start, holder.boot_id) == (
            "restarted container", os.getpid(), process_start(os.getpid()), boot_id()
        )
        if lingering is not None:  # its session was ended: the server let the lock go
            assert session_alive(store, lingering) is False
    ended = "; its database session was ended" if lingering is not None else ""
    assert [r.getMessage() for r in caplog.records] == [
        f"took over the audit lock of crawler schedule (pid 1 on {HOST}) since {since}: "
        f"{REUSED}{ended}"
    ]
    store.close()


def test_a_holder_from_before_the_host_restarted_is_taken_over_at_once(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The same PID and start time, but another boot: the host has restarted since."""
    store = Store(db_url)
    me = os.getpid()
    write_holder(store, pid=me, started=process_start(me), boot="before-the-reboot")
    caplog.set_level(logging.WARNING, logger="crawler.store.lock")
    with lingering_session(store), store.audit_lock("after the reboot") as lock:
        assert lock.holder is not None and lock.holder.owner == "after the reboot"
    assert [r.getMessage().split(": ", 1)[1] for r in caplog.records] == [
        "the host has restarted since (another boot id)"
        + ("; its database session was ended" if store.engine.dialect.name == "postgresql" else "")
    ]
    store.close()


def test_a_holder_that_is_still_this_very_process_keeps_the_lock(db_url: str) -> None:
    """Its PID, start time and boot all match: it runs, and nothing is taken over."""
    store = Store(db_url)
    with store.audit_lock("the holder"), pytest.raises(AuditLocked) as caught:
        store.audit_lock("a second one").acquire()
    assert caught.value.holder is not None and caught.value.holder.owner == "the holder"
    assert caught.value.holder.process_start == process_start(os.getpid())
    store.close()
