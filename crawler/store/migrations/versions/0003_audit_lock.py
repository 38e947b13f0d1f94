"""The audit lock row (one audit at a time per database) and the HTTP cache's last use.

On SQLite the row *is* the lock (owner, host, PID, start, lease renewed by a heartbeat); on
PostgreSQL an advisory lock is the lock and the row only says who holds it. ``used_at`` lets
``crawler prune`` drop cache entries no request has used for a while (a 304 does not rewrite
``stored_at``).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_lock",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("token", sa.String(36), nullable=False),
        sa.Column("owner", sa.Text, nullable=False),
        sa.Column("host", sa.Text, nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("backend_pid", sa.Integer, nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False),
    )
    op.add_column("http_cache", sa.Column("used_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("http_cache") as batch:
        batch.drop_column("used_at")
    op.drop_table("audit_lock")
