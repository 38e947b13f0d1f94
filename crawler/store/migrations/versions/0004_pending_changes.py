"""Changes pending until the catalog takes them (issue 20).

A change a nightly audit finds (a new release, a license reading, a support table) stays open
from the audit that first saw it until the curated catalog holds it or a person acknowledges
it with ``crawler ack``; the report, the notification and the catalog issue list what is open.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pending_changes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("project", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("evidence_url", sa.Text, nullable=True),
        sa.Column("first_audit_id", sa.Integer, nullable=False),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_how", sa.String(16), nullable=True),
    )
    op.create_index("ix_pending_changes_open", "pending_changes", ["closed_at", "project"])


def downgrade() -> None:
    op.drop_index("ix_pending_changes_open", table_name="pending_changes")
    op.drop_table("pending_changes")
