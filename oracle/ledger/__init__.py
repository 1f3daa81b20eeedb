"""The run ledger: every run (record, gate, sweep point) appends what it found, and `oracle history` reads it.

    note = append_run(report_dir, options.ledger)   # where a run finishes; None, or why it was not appended
    oracle ledger add REPORT_DIR...                  # report folders written before, once each
    oracle history [--since --machine --backend --check]

A SQLite file beside the report folders by default (reports/ledger.sqlite), or a PostgreSQL URL for a team's
shared ledger; the tables in `schema`, their migrations (Alembic) in `migrations/`. Import the module you need
(`oracle.ledger.writer`, `oracle.ledger.cli`): a gate run's end loads the writer alone.
"""

__all__: list[str] = []
