"""Alembic environment: the connection is handed over by crawler.store.Store."""

from __future__ import annotations

from alembic import context

from crawler.store.tables import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through crawler.store.Store (or `crawler db upgrade`)")
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
