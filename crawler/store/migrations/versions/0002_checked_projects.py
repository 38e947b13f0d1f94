"""Which projects each audit actually checked (a project set, stored once per distinct list).

Observations are written only when a project's state changed, so without this an unchanged
project looks unchecked: the budget rotation, the stale flag and the export's "last checked"
need to know every audit that looked at a project.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("audits") as batch:
        batch.add_column(sa.Column("checked_set_id", sa.Integer, nullable=True))
        batch.create_foreign_key(
            "fk_audits_checked_set", "project_sets", ["checked_set_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("audits") as batch:
        batch.drop_constraint("fk_audits_checked_set", type_="foreignkey")
        batch.drop_column("checked_set_id")
