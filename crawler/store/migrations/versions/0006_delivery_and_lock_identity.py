"""A delivered mark per audit, and what identifies a lock holder's process beyond its PID.

``audits.delivered_at``: a finished audit whose report was not delivered (the process killed
between finishing and sending) is delivered late by the next run; audits finished before this
revision count as delivered, so an upgrade sends nothing old again. ``audit_lock.process_start``
and ``boot_id``: a PID reused by another process (a restarted container's PID 1) no longer
passes for the holder.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("audits", sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE audits SET delivered_at = finished_at WHERE status <> 'running'")
    op.add_column("audit_lock", sa.Column("process_start", sa.BigInteger, nullable=True))
    op.add_column("audit_lock", sa.Column("boot_id", sa.String(36), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audit_lock") as batch:
        batch.drop_column("boot_id")
        batch.drop_column("process_start")
    with op.batch_alter_table("audits") as batch:
        batch.drop_column("delivered_at")
