"""The ledger: runs, their prompts and canaries.

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
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("identity_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("report_dir", sa.Text, nullable=False),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("started_utc", sa.String(32), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("verdict", sa.String(32), nullable=False),
        sa.Column("machine", sa.Text, nullable=False),
        sa.Column("accelerator", sa.Text),
        sa.Column("backend", sa.Text, nullable=False),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("reference", sa.Text),
        sa.Column("launch_command", sa.Text),
        sa.Column("server_args", sa.Text),
        sa.Column("model_sha256", sa.String(64)),
        sa.Column("driver", sa.Text),
        sa.Column("build", sa.Text),
        sa.Column("identity_json", sa.Text, nullable=False),
        sa.Column("prompts_exact", sa.Integer),
        sa.Column("prompts_total", sa.Integer),
        sa.Column("near_tie", sa.Integer),
        sa.Column("divergent", sa.Integer),
        sa.Column("inconclusive", sa.Integer),
        sa.Column("checks_passed", sa.Integer),
        sa.Column("checks_total", sa.Integer),
        sa.Column("speed_label", sa.Text),
        sa.Column("speed_figure", sa.Text),
        sa.Column("tok_s", sa.Float),
        sa.Column("tok_s_low", sa.Float),
        sa.Column("tok_s_high", sa.Float),
        sa.Column("speedup", sa.Float),
        sa.Column("speedup_low", sa.Float),
        sa.Column("speedup_high", sa.Float),
        sa.Column("speedup_interval", sa.Text),
        sa.Column("joules_per_token", sa.Float),
        sa.Column("interruption", sa.Text),
        sa.Column("added_utc", sa.String(32), nullable=False),
        sa.Column("added_by", sa.String(16), nullable=False),
    )
    for name, key in (("prompts", "prompt"), ("canaries", "canary")):
        op.create_table(
            name,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
            sa.Column(key, sa.Text, nullable=False),
            sa.Column("verdict", sa.String(32), nullable=False),
            *([sa.Column("first_split", sa.Integer)] if name == "prompts" else []),
            sa.UniqueConstraint("run_id", key),
        )
        op.create_index(f"ix_{name}_run_id", name, ["run_id"])


def downgrade() -> None:
    op.drop_table("canaries")
    op.drop_table("prompts")
    op.drop_table("runs")
