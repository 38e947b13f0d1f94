"""Initial schema: audits, project sets, snapshots, observations, errors, HTTP cache.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "project_sets",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("names", sa.Text, nullable=False),
    )
    op.create_table(
        "audits",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("config_path", sa.Text, nullable=False),
        sa.Column("project_set_id", sa.Integer, sa.ForeignKey("project_sets.id"), nullable=False),
        sa.Column("baseline_audit_id", sa.Integer, nullable=True),
        sa.Column("stats", sa.Text, nullable=False),
    )
    op.create_table(
        "snapshots",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("project", sa.String(200), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("first_audit_id", sa.Integer, sa.ForeignKey("audits.id"), nullable=False),
        sa.UniqueConstraint("project", "digest"),
    )
    op.create_table(
        "observations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("audit_id", sa.Integer, sa.ForeignKey("audits.id"), nullable=False),
        sa.Column("project", sa.String(200), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("snapshot_id", sa.Integer, sa.ForeignKey("snapshots.id"), nullable=True),
        sa.Column("note", sa.Text, nullable=True),
    )
    op.create_index("ix_observations_audit_id", "observations", ["audit_id"])
    op.create_index("ix_observations_project_audit", "observations", ["project", "audit_id"])
    op.create_table(
        "fetch_errors",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("audit_id", sa.Integer, sa.ForeignKey("audits.id"), nullable=False),
        sa.Column("project", sa.String(200), nullable=False),
        sa.Column("source", sa.String(200), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("message", sa.Text, nullable=False),
    )
    op.create_index("ix_fetch_errors_audit_id", "fetch_errors", ["audit_id"])
    op.create_table(
        "http_cache",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("etag", sa.Text, nullable=True),
        sa.Column("last_modified", sa.Text, nullable=True),
        sa.Column("content_type", sa.Text, nullable=True),
        sa.Column("body", sa.LargeBinary, nullable=False),
        sa.Column("stored_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    for table in ("http_cache", "fetch_errors", "observations", "snapshots", "audits"):
        op.drop_table(table)
    op.drop_table("project_sets")
