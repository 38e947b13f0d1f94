"""Shared fixtures: a real SQLite file and a real PostgreSQL schema for every store test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

PG_URL = os.environ.get("CRAWLER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
SHARED = Path(__file__).resolve().parents[2] / "shared"


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

    def handle(fake: Any, raw: bytes) -> tuple[int, dict[str, Any], int]:
        sizes.append(json.loads(raw)["query"].count(": repository("))
        return real(fake, raw)

    monkeypatch.setattr(github_graphql, "handle", handle)
    return sizes
