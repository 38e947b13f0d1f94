"""Shared by the regression tests of issues 9 and 11: small upstream repositories on the fake
GitHub, and a look at everything an audit stored."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import inspect

from crawler.analysis.license_texts import reference_text
from crawler.store import Store
from crawler_fakes.github import FakeRelease, FakeRepo

MIT = reference_text("MIT")
APACHE = reference_text("Apache-2.0")


def stamp(day: int, month: int = 10) -> str:
    return f"2026-{month:02d}-{day:02d}T10:00:00Z"


def repo(
    name: str,
    repo_id: int,
    tags: Sequence[str],
    *,
    license_text: str | None = MIT,
    owner: str = "org",
) -> FakeRepo:
    """``owner/name`` with one release per tag (the n-th on October n+1) and a license file
    GitHub reads as MIT (or Apache-2.0 for the Apache text)."""
    apache = license_text is not None and license_text.startswith(APACHE[:40])
    return FakeRepo(
        owner=owner,
        name=name,
        id=repo_id,
        license_key=None if license_text is None else "apache-2.0" if apache else "mit",
        spdx_id=None if license_text is None else "Apache-2.0" if apache else "MIT",
        license_name=None
        if license_text is None
        else "Apache License 2.0"
        if apache
        else "MIT License",
        license_path=None if license_text is None else "LICENSE",
        license_text=license_text,
        head_sha=f"{repo_id:x}" * 40,
        head_date=stamp(1),
        releases=[FakeRelease(t, t, stamp(i + 1), stamp(i + 1)) for i, t in enumerate(tags)],
    )


def stored_text(store: Store) -> str:
    """Every row of every table of the store, as text (to look for what must not be there)."""
    parts: list[str] = []
    with store.engine.connect() as conn:
        for table in sorted(inspect(conn).get_table_names()):
            for row in conn.exec_driver_sql(f'select * from "{table}"'):
                parts.append(repr(tuple(row)))
    return "\n".join(parts)


def sqlite_bytes(url: str) -> bytes:
    """The bytes of a SQLite database file and its WAL/journal files ('' for other databases)."""
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        return b""
    path = Path(url[len(prefix) :])
    return b"".join(p.read_bytes() for p in sorted(path.parent.glob(path.name + "*")))
