"""Appending to the ledger: a finished run's report folder (`append_run`, the one call where a run ends) or a
folder written before (`oracle ledger add`), once each: the identity.json sha256 is the key.

    note = append_run(report_dir, ledger=None)   # None: appended (or already there); else why it was not
    added = append(open_ledger(path), run_row(folder, added_by="import"))

Writing the ledger never costs a run: `append_run` turns every failure (a wrong URL, a server down, a full
disk, a locked file) into one public line for the report's notes and the terminal.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from oracle.ledger.connect import OFF, Ledger, LedgerError, default_ledger, failure, open_ledger
from oracle.ledger.rows import LedgerInputError, RunRow, run_row
from oracle.ledger.schema import canaries, prompts, runs
from oracle.redaction import public_text

__all__ = ["append", "append_run", "ledger_of"]


def ledger_of(report_dir: Path, given: str | None) -> str | None:
    """The ledger a run appends to: --ledger as given, the default file beside its report folder, or None (off)."""
    if given is not None and given.strip().lower() == OFF:
        return None
    return given or str(default_ledger(report_dir))


def append(ledger: Ledger, row: RunRow) -> bool:
    """Append one run with its prompts and canaries in one transaction; False when that identity.json is already
    there (its sha256 is unique: two writers of the same folder at once leave one row)."""
    try:
        with ledger.engine.begin() as c:
            if c.execute(select(runs.c.id).where(runs.c.identity_sha256 == row.identity_sha256)).first():
                return False
            run_id = c.execute(insert(runs).values(identity_sha256=row.identity_sha256, **row.run)
                               ).inserted_primary_key[0]
            if row.prompts:
                c.execute(insert(prompts), [{"run_id": run_id, **p} for p in row.prompts])
            if row.canaries:
                c.execute(insert(canaries), [{"run_id": run_id, **k} for k in row.canaries])
    except IntegrityError:
        return False
    except SQLAlchemyError as exc:
        raise failure(ledger, "written", exc) from None
    return True


def append_run(report_dir: Path, given: str | None) -> str | None:
    """Append a finished run's report to its ledger. None when appended (or off); else the reason it was not,
    as one public line: the run's verdict, exit code and report stand either way."""
    where = ledger_of(report_dir, given)
    if where is None or not (report_dir / "identity.json").is_file():
        return None
    try:
        row = run_row(report_dir, added_by="run")
        ledger = open_ledger(where)
        try:
            append(ledger, row)
        finally:
            ledger.close()
    except (LedgerError, LedgerInputError) as exc:
        return public_text(f"the run was not appended to the ledger: {exc}; the verdict and this report stand; "
                           f"add it later with `oracle ledger add {report_dir}`")
    except OSError as exc:  # the SQLite file's folder unwritable or full before the driver opened it
        return public_text(f"the run was not appended to the ledger: {exc.strerror or exc}; the verdict and this "
                           f"report stand; add it later with `oracle ledger add {report_dir}`")
    except Exception as exc:  # noqa: BLE001 - writing the ledger never costs a run, whatever the driver raises
        return public_text(f"the run was not appended to the ledger ({type(exc).__name__}: {exc}); the verdict "
                           f"and this report stand; add it later with `oracle ledger add {report_dir}`")
    return None
