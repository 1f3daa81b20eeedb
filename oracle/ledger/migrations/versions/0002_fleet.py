"""The fleet: a run's machine (accelerator model, runtime), its config keyed by the reference's manifest sha256,
and per prompt the output's fingerprint (tokens and finish reason, top-k logprobs where kept).

Revision ID: 0002_fleet
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_fleet"
down_revision = "0001"
branch_labels = None
depends_on = None

_RUNS = (("accelerator_model", sa.Text), ("runtime", sa.Text), ("reference_sha256", sa.String(64)))
_PROMPTS = (("completion_sha256", sa.String(64)), ("finish_reason", sa.String(32)), ("fingerprint", sa.String(64)),
            ("top_sha256", sa.String(64)))


def upgrade() -> None:
    # Runs appended before keep their config (backend and path) and no fingerprints: nothing to derive them from.
    with op.batch_alter_table("runs") as batch:
        for name, kind in _RUNS:
            batch.add_column(sa.Column(name, kind))
    with op.batch_alter_table("prompts") as batch:
        for name, kind in _PROMPTS:
            batch.add_column(sa.Column(name, kind))


def downgrade() -> None:
    with op.batch_alter_table("prompts") as batch:
        for name, _ in reversed(_PROMPTS):
            batch.drop_column(name)
    with op.batch_alter_table("runs") as batch:
        for name, _ in reversed(_RUNS):
            batch.drop_column(name)
