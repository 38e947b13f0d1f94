"""The store on a real SQLite file and a real PostgreSQL schema."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, select

from crawler.model import (
    FetchError,
    ProjectOutcome,
    ProjectResult,
    ProjectSnapshot,
    ProjectStatus,
    Provenance,
    Release,
)
from crawler.store import Store
from crawler.store.tables import ObservationRow, SnapshotRow
from crawler.upstream.http import CachedResponse

T0 = datetime(2026, 11, 1, 3, 0, tzinfo=UTC)


def _snapshot(project: str, tag: str, fetched_at: str = "2026-11-01T03:00:00Z") -> ProjectSnapshot:
    release = Release(tag, tag, "2026-10-01T00:00:00Z", False, False, f"https://x/{tag}")
    return ProjectSnapshot(
        project=project,
        releases=(release,),
        provenance=(("releases", Provenance("https://api/x/releases", fetched_at)),),
    )


def _ok(snapshot: ProjectSnapshot) -> ProjectResult:
    return ProjectResult(snapshot.project, ProjectStatus.OK, snapshot=snapshot)


def _audit(store: Store, results: list[ProjectResult], status: str = "complete") -> int:
    audit_id = store.begin_audit("sources.yaml", [r.project for r in results], T0)
    baseline = store.baseline_for(audit_id)
    store.finish_audit(audit_id, results, status, T0, baseline.id if baseline else None, {})
    return audit_id


def _count(store: Store, table: type) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def test_unchanged_audits_store_nothing_new(db_url: str) -> None:
    store = Store(db_url)
    _audit(store, [_ok(_snapshot("a", "v1")), _ok(_snapshot("b", "v2"))])
    assert (_count(store, SnapshotRow), _count(store, ObservationRow)) == (2, 2)
    for day in range(2, 6):  # the fetch time moves, the content does not
        later = f"2026-11-0{day}T03:00:00Z"
        _audit(store, [_ok(_snapshot("a", "v1", later)), _ok(_snapshot("b", "v2", later))])
    assert (_count(store, SnapshotRow), _count(store, ObservationRow)) == (2, 2)
    third = _audit(store, [_ok(_snapshot("a", "v3")), _ok(_snapshot("b", "v2"))])
    assert (_count(store, SnapshotRow), _count(store, ObservationRow)) == (3, 3)
    states = store.states_as_of(third)
    assert states["a"].snapshot.releases[0].tag == "v3"  # type: ignore[index]
    assert states["a"].observed_in_audit == third
    assert states["b"].observed_in_audit == 1
    store.close()


def test_error_carries_the_last_good_state_forward(db_url: str) -> None:
    store = Store(db_url)
    first = _audit(store, [_ok(_snapshot("a", "v1"))])
    error = FetchError("a", "github", "https://api/x", "HTTP 500 from GitHub")
    failed = ProjectResult("a", ProjectStatus.ERROR, errors=(error,))
    second = _audit(store, [failed], status="partial")
    assert store.states_as_of(second)["a"].snapshot.releases[0].tag == "v1"  # type: ignore[index]
    assert store.states_as_of(second)["a"].observed_in_audit == first
    statuses, errors = store.audit_results(second)
    assert statuses == {"a": ProjectOutcome(ProjectStatus.ERROR, None)}
    assert errors == [error]
    assert store.baseline_for().id == second  # type: ignore[union-attr]
    store.close()


def test_killed_audit_is_never_a_baseline(db_url: str) -> None:
    store = Store(db_url)
    first = _audit(store, [_ok(_snapshot("a", "v1"))])
    killed = store.begin_audit("sources.yaml", ["a"], T0)  # never finished
    assert store.baseline_for().id == first  # type: ignore[union-attr]
    assert store.audit(killed).status == "running"  # type: ignore[union-attr]
    failed = _audit(store, [ProjectResult("a", ProjectStatus.ERROR)], status="failed")
    assert store.baseline_for().id == first  # type: ignore[union-attr]
    assert store.latest_audit().id == failed  # type: ignore[union-attr]
    store.close()


def test_history_lists_each_state_change(db_url: str) -> None:
    store = Store(db_url)
    _audit(store, [_ok(_snapshot("a", "v1"))])
    _audit(store, [_ok(_snapshot("a", "v1"))])
    _audit(store, [ProjectResult("a", ProjectStatus.DEFERRED, note="rate budget spent")])
    _audit(store, [_ok(_snapshot("a", "v2"))])
    history = store.history("a")
    assert [(h.audit_id, h.status) for h in history] == [(1, "ok"), (3, "deferred"), (4, "ok")]
    assert history[1].note == "rate budget spent"
    assert history[1].snapshot is None
    assert history[1].audit_started_at == T0
    store.close()


def test_http_cache_round_trip(db_url: str) -> None:
    store = Store(db_url)
    assert store.get_response("k") is None
    body = b'{"tag_name": "v1"}' * 100
    store.put_response(
        "k", CachedResponse("https://api/x", 'W/"abc"', None, body, "application/json")
    )
    store.put_response("k", CachedResponse("https://api/x", 'W/"def"', "Mon", body, None))
    cached = store.get_response("k")
    assert cached == CachedResponse("https://api/x", 'W/"def"', "Mon", body, None)
    store.close()


def test_reopening_runs_migrations_once(db_url: str) -> None:
    Store(db_url).close()
    store = Store(db_url)
    with store.engine.connect() as conn:
        version = conn.exec_driver_sql("select version_num from alembic_version").scalar_one()
    assert version == _head_revision()
    assert store.audits() == []
    store.close()


def _head_revision() -> str:
    from alembic.config import Config as AlembicConfig
    from alembic.script import ScriptDirectory

    from crawler.store.database import MIGRATIONS

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None and head >= "0002"
    return head
