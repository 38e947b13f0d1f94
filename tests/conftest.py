"""Shared fixtures: a real SQLite file and a real PostgreSQL schema for every store test; and the
marker of each test's folder (tests/unit, tests/integration, tests/e2e), so that
``pytest -m unit`` and ``pytest tests/unit`` select the same tests."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from tests.support import SHARED

TESTS = Path(__file__).resolve().parent
LEVELS = ("unit", "integration", "e2e")  # the folders, registered as markers in pyproject.toml
PG_URL = os.environ.get("CRAWLER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def pytest_configure(config: pytest.Config) -> None:
    """Derived caches (the license index) go to a folder of this session's own, never the
    user's ~/.cache, and so does the scheduler's default heartbeat (never ~/.local/state);
    every process the tests start inherits them."""
    folder = tempfile.mkdtemp(prefix="crawler-test-cache-")
    os.environ["CRAWLER_CACHE_DIR"] = folder
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    # `crawler schedule` writes its heartbeat to $XDG_STATE_HOME by default: the session's too
    state = tempfile.mkdtemp(prefix="crawler-test-state-")
    os.environ["XDG_STATE_HOME"] = state
    config.add_cleanup(lambda: shutil.rmtree(state, ignore_errors=True))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test is marked with its folder's level; a test file outside the three folders (one
    added at the root of tests/) is marked with none, so ``-m`` never selects it by mistake."""
    for item in items:
        relative = item.path.resolve().relative_to(TESTS)
        if relative.parts[0] in LEVELS:
            item.add_marker(relative.parts[0])


def _pg_available() -> bool:
    try:
        engine = create_engine(PG_URL)
        with engine.connect() as conn:
            conn.execute(text("select 1"))
        engine.dispose()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def pg_available() -> bool:
    available = _pg_available()
    if not available and os.environ.get("CI"):
        pytest.fail(f"PostgreSQL is not reachable at {PG_URL}; .ci/run must start it")
    return available


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path, pg_available: bool) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a private schema on the PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'crawler.sqlite'}"
        return
    if not pg_available:
        pytest.skip(f"PostgreSQL not reachable at {PG_URL}")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in PG_URL else "?"
    yield f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture
def shared_corpus() -> Path:
    corpus = SHARED / "corpus"
    if not corpus.is_dir():
        pytest.skip("../shared/corpus is absent")
    return corpus


@pytest.fixture
def graphql_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many repositories each GraphQL request to the fake GitHub asked for, in order."""
    import json

    from crawler_fakes import github_graphql

    sizes: list[int] = []
    real = github_graphql.handle

    def handle(fake: Any, raw: bytes) -> tuple[int, dict[str, Any] | bytes, int]:
        sizes.append(json.loads(raw)["query"].count(": repository("))
        return real(fake, raw)

    monkeypatch.setattr(github_graphql, "handle", handle)
    return sizes
