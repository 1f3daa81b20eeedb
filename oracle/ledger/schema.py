"""The ledger's tables, as SQLAlchemy Core: one row per run, one per prompt of a run, one per canary of a run.

The same tables on SQLite (the default file beside the report folders) and PostgreSQL (a team's shared ledger).
Their history lives in `migrations/` (Alembic); `HEAD` names the newest migration, and a unit test checks that
upgrading an empty database to it gives exactly these tables.
"""

from __future__ import annotations

from sqlalchemy import (Column, Float, ForeignKey, Integer, MetaData, String, Table, Text, UniqueConstraint)

__all__ = ["HEAD", "MIGRATION_LOCK", "canaries", "metadata", "prompts", "runs"]

HEAD = "0003_audit"  # the newest migration's revision (migrations/versions/)
MIGRATION_LOCK = 3903_2026  # PostgreSQL's advisory lock key: one process creates or migrates a shared ledger at once

metadata = MetaData()

runs = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    # The key of "once each": the sha256 of the report's identity.json as it was when the run was appended.
    Column("identity_sha256", String(64), nullable=False, unique=True),
    Column("report_dir", Text, nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("started_utc", String(32), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("verdict", String(32), nullable=False),
    Column("machine", Text, nullable=False),
    Column("accelerator", Text),
    Column("accelerator_model", Text),  # what machines must share before their speeds are compared (fleet)
    Column("runtime", Text),  # the serving runtime and its build, as the machine's identity says it
    Column("backend", Text, nullable=False),
    Column("config", Text, nullable=False),  # backend and the reference (its manifest sha256, else its path)
    Column("reference", Text),  # the reference's path on this machine, for display
    Column("reference_sha256", String(64)),  # the reference's manifest sha256: one config across machines
    Column("launch_command", Text),  # redacted, as the report holds it
    Column("server_args", Text),
    Column("model_sha256", String(64)),
    Column("driver", Text),
    Column("build", Text),
    Column("identity_json", Text, nullable=False),  # the report's whole identity (redacted), for "what changed"
    Column("prompts_exact", Integer),
    Column("prompts_total", Integer),
    Column("near_tie", Integer),
    Column("divergent", Integer),
    Column("inconclusive", Integer),
    Column("checks_passed", Integer),
    Column("checks_total", Integer),
    Column("speed_label", Text),
    Column("speed_figure", Text),
    Column("tok_s", Float),
    Column("tok_s_low", Float),
    Column("tok_s_high", Float),
    Column("speedup", Float),
    Column("speedup_low", Float),
    Column("speedup_high", Float),
    Column("speedup_interval", Text),
    Column("joules_per_token", Float),
    Column("interruption", Text),
    Column("added_utc", String(32), nullable=False),
    Column("added_by", String(16), nullable=False),  # "run" (appended as it finished) or "import" (ledger add)
    # ledger/audit.py: "verified" (re-derived from its records and reference) or "unverified" (no seal, or its
    # reference not at hand), and why; a report whose verdict does not follow is never added.
    Column("audit", String(16), nullable=False, server_default="unverified"),
    Column("audit_note", Text),
)

prompts = Table(
    "prompts", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("prompt", Text, nullable=False),
    Column("verdict", String(32), nullable=False),
    Column("first_split", Integer),
    # The output's fingerprint (ledger/fingerprints): tokens and finish reason; top-k logprobs where kept.
    Column("completion_sha256", String(64)),
    Column("finish_reason", String(32)),
    Column("fingerprint", String(64)),
    Column("top_sha256", String(64)),
    UniqueConstraint("run_id", "prompt"),
)

canaries = Table(
    "canaries", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("canary", Text, nullable=False),
    Column("verdict", String(32), nullable=False),
    UniqueConstraint("run_id", "canary"),
)
