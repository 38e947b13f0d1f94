"""What each audit's link step reported (issue 35): its link findings and the links failing but
not reported yet, as facts, so that ``crawler report`` and ``crawler diff`` show them for a
stored audit as its own report did (the link histories hold only each link's latest state).

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "link_findings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("audit_id", sa.Integer, sa.ForeignKey("audits.id"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("project", sa.String(200), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
    )
    op.create_index("ix_link_findings_audit_id", "link_findings", ["audit_id"])


def downgrade() -> None:
    op.drop_index("ix_link_findings_audit_id", table_name="link_findings")
    op.drop_table("link_findings")
