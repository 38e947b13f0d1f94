"""Persistence: SQLite by default, PostgreSQL for teams; schema managed by Alembic."""

from crawler.store.database import (
    DEFAULT_DB_URL,
    AuditInfo,
    HistoryEntry,
    ProjectState,
    Store,
)

__all__ = ["DEFAULT_DB_URL", "AuditInfo", "HistoryEntry", "ProjectState", "Store"]
