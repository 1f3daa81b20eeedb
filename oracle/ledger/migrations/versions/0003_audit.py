"""The audit of each run: `verified` (its verdict re-derived from its records and reference) or `unverified` (a
report written before seals, or one whose reference was not at hand), and why.

Revision ID: 0003_audit
Revises: 0002_fleet
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_audit"
down_revision = "0002_fleet"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Rows appended before the audit were believed as their identity.json said: unverified.
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("audit", sa.String(16), nullable=False, server_default="unverified"))
        batch.add_column(sa.Column("audit_note", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("audit_note")
        batch.drop_column("audit")
