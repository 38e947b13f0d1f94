"""Link checks (issue 35): one row per link the crawler checks, its history between nights.

What a link answered last, since when it fails, how many nights in a row it was gone (404,
410, a name that no longer resolves), when it last answered, and its validators for the next
night's conditional request. The classifier (crawler.diff.links) reads and rewrites it.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "link_checks",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("last_checked", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_ok", sa.DateTime(timezone=True), nullable=True),
        sa.Column("failing_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("gone_nights", sa.Integer, nullable=False),
        sa.Column("status", sa.Integer, nullable=True),
        sa.Column("moved_to", sa.Text, nullable=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("etag", sa.Text, nullable=True),
        sa.Column("last_modified", sa.Text, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("link_checks")
