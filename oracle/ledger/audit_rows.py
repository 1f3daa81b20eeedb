"""`oracle history --audit`: every run the ledger holds re-derived from its report folder (ledger/audit.py), and the
row checked against the report it was read from. A row fails its audit when its folder is gone, its report's
stated verdict does not follow from its records, or the ledger's row says another verdict than the report.

    rows = audit_rows(ledger)   # [RowAudit(report_dir, started_utc, "verified" | "unverified" | "fails", detail)]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from oracle.ledger.audit import AuditFailed, audit_report
from oracle.ledger.connect import Ledger, failure
from oracle.ledger.schema import runs

__all__ = ["FAILS", "RowAudit", "audit_rows"]

FAILS = "fails"


@dataclass
class RowAudit:
    report_dir: str
    started_utc: str
    status: str  # verified, unverified or fails
    detail: str

    def line(self) -> str:
        return f"{self.status:10} {self.report_dir} (run of {self.started_utc}): {self.detail}"


def audit_rows(ledger: Ledger) -> list[RowAudit]:
    """Each row's audit, oldest first."""
    query = select(runs.c.report_dir, runs.c.started_utc, runs.c.verdict, runs.c.prompts_exact).order_by(
        runs.c.started_utc, runs.c.id)
    try:
        with ledger.engine.connect() as c:
            rows = list(c.execute(query))
    except SQLAlchemyError as exc:
        raise failure(ledger, "read", exc) from None
    return [_audit_row(*row) for row in rows]


def _audit_row(folder: str, started: str, verdict: str, exact: int | None) -> RowAudit:
    path = Path(folder) / "identity.json"
    try:
        report = json.loads(path.read_bytes())
    except FileNotFoundError:
        return RowAudit(folder, started, FAILS, "no identity.json there (the folder was moved or deleted): the "
                                                "row cannot be re-derived")
    except (OSError, ValueError) as exc:
        return RowAudit(folder, started, FAILS, f"{path}: cannot be read as JSON ({exc})")
    if not isinstance(report, dict):
        return RowAudit(folder, started, FAILS, f"{path}: not an oracle identity report")
    try:
        audit = audit_report(Path(folder), report)
    except AuditFailed as exc:
        return RowAudit(folder, started, FAILS, str(exc))
    stated = report.get("verdict") or "partial"
    if verdict != stated:
        return RowAudit(folder, started, FAILS, f"the ledger's row says verdict {verdict!r}, its report {stated!r}")
    found = ((report.get("summary") or {}).get("exact") or [None])[0]
    if exact != found:
        return RowAudit(folder, started, FAILS, f"the ledger's row says {exact} exact prompt(s), its report {found}")
    return RowAudit(folder, started, audit.status, audit.reason or "re-derived")
