"""What a pending change replaced (issue 37): the notification lists each pending change as
``before → after`` (v1.0 → v1.1), on every night it waits, not only the night it was found.
Nullable: an item opened before this revision, or a change with no earlier value, has none.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("pending_changes") as batch:
        batch.add_column(sa.Column("before", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("pending_changes") as batch:
        batch.drop_column("before")
