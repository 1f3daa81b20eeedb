"""Alembic's environment for the ledger: always online, on the connection the ledger opened (never a URL read from
an ini file), one migrator at a time on PostgreSQL (a transaction-scoped advisory lock)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import text

from oracle.ledger.schema import MIGRATION_LOCK, metadata


def run() -> None:
    connection = context.config.attributes["connection"]
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})"))
        context.run_migrations()


run()
