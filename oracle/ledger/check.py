"""`oracle history --check`: every report folder the ledger names still holds the identity.json it was appended
with (the same sha256) and every file its seal lists (store/seal.py). What is missing or changed is listed; nothing
is deleted, in the folders or the ledger.

    problems = check_reports(ledger)   # [Problem(run, "missing" | "changed" | "unreadable", detail)]
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from oracle.ledger.connect import Ledger, failure
from oracle.ledger.schema import runs
from oracle.store.json_files import InputFileError
from oracle.store.seal import verify_seal

__all__ = ["Problem", "check_reports"]


@dataclass
class Problem:
    report_dir: str
    started_utc: str
    status: str  # missing, changed, unreadable
    detail: str

    def line(self) -> str:
        return f"{self.status:10} {self.report_dir} (run of {self.started_utc}): {self.detail}"


def check_reports(ledger: Ledger) -> tuple[int, list[Problem]]:
    """(runs checked, problems found)."""
    query = select(runs.c.report_dir, runs.c.started_utc, runs.c.identity_sha256).order_by(runs.c.started_utc)
    try:
        with ledger.engine.connect() as c:
            rows = list(c.execute(query))
    except SQLAlchemyError as exc:
        raise failure(ledger, "read", exc) from None
    problems = []
    for folder, started, sha in rows:
        path = Path(folder) / "identity.json"
        try:
            found = hashlib.sha256(path.read_bytes()).hexdigest()
        except FileNotFoundError:
            problems.append(Problem(folder, started, "missing", "no identity.json there (the folder was moved or "
                                    "deleted)"))
            continue
        except OSError as exc:
            problems.append(Problem(folder, started, "unreadable", f"{exc.strerror or exc}"))
            continue
        if found != sha:
            problems.append(Problem(folder, started, "changed", f"identity.json sha256 {found[:12]}… is not the "
                                    f"{sha[:12]}… the ledger holds (rewritten since: an edit)"))
            continue
        try:
            verify_seal(Path(folder))
        except InputFileError as exc:  # a SealError names the record or log that differs
            problems.append(Problem(folder, started, "changed", str(exc)))
    return len(rows), problems
