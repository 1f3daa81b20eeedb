"""`oracle ledger add REPORT_DIR...`, `oracle history [--since --machine --backend --check --audit]` and `oracle
fleet`: the parsers and what each prints. The work lives in the modules beside this one.

    oracle ledger add reports/*/ --ledger reports/ledger.sqlite
    oracle history --since 2026-12-01 --machine arc-b70      # history.html + a table; exit 1 when a config fails
    oracle history --check                                   # every report folder still holds its identity.json
    oracle history --audit                                   # every row re-derived; exit 1 when one fails
    oracle fleet --ledger postgresql://oracle@db/oracle       # fleet.html + config x machine; exit 1 when one fails
"""

from __future__ import annotations

import re
import sys
from datetime import datetime
from pathlib import Path

from oracle.ledger.audit import UNVERIFIED, VERIFIED
from oracle.ledger.audit_rows import FAILS, audit_rows
from oracle.ledger.check import check_reports
from oracle.ledger.connect import DEFAULT_NAME, LedgerError, open_ledger
from oracle.ledger.fleet import read_fleet
from oracle.ledger.fleet_page import write_fleet_page
from oracle.ledger.fleet_table import fleet_markdown, fleet_table
from oracle.ledger.page import write_page
from oracle.ledger.queries import read_history
from oracle.ledger.rows import LedgerInputError, run_row
from oracle.ledger.table import history_table
from oracle.ledger.writer import append
from oracle.redaction import public_text, redact_url

__all__ = ["add_parsers", "run_cli"]

DEFAULT_LEDGER = f"reports/{DEFAULT_NAME}"
_LEDGER_HELP = f"the ledger: a SQLite file or a postgresql://user@host/db URL (default: {DEFAULT_LEDGER})"


def add_parsers(sub) -> None:
    a = sub.add_parser("ledger", help="the run ledger: `oracle ledger add REPORT_DIR...` imports report folders "
                                      "written before (once each, by identity.json sha256)")
    actions = a.add_subparsers(dest="ledger_command", required=True)
    add = actions.add_parser("add", help="import report folders (any report schema version); exit 0 when every "
                                         "folder was added or already there, 2 when one is not a report")
    add.add_argument("reports", type=Path, nargs="+", metavar="REPORT_DIR")
    add.add_argument("--ledger", default=DEFAULT_LEDGER, metavar="PATH|URL", help=_LEDGER_HELP)
    h = sub.add_parser("history", help="the ledger over time: history.html and a table; exit 1 when the latest run "
                                       "of any config fails, 0 when none does, 2 on bad input")
    h.add_argument("--ledger", default=DEFAULT_LEDGER, metavar="PATH|URL", help=_LEDGER_HELP)
    h.add_argument("--since", metavar="DATE", help="only runs started on or after DATE (UTC, 2026-12-01 or "
                                                   "2026-12-01T06:00) (default: all)")
    h.add_argument("--machine", metavar="NAME", help="only runs on this machine (its --oracle-machine name, else "
                                                     "its hostname) (default: all)")
    h.add_argument("--backend", metavar="NAME", help="only runs of this backend, e.g. llamacpp-cpu (default: all)")
    h.add_argument("--out", type=Path, default=None, metavar="FILE",
                   help="where the page goes (default: history.html beside a ledger file, else ./history.html)")
    h.add_argument("--check", action="store_true", help="check that every report folder the ledger names still "
                                                        "holds the same identity.json (sha256) and every file its "
                                                        "seal lists; deletes nothing")
    h.add_argument("--audit", action="store_true", help="re-derive every run the ledger holds from its report "
                                                        "folder's records and reference; exit 1 when any row fails "
                                                        "its audit, 0 when none does, 2 on bad input")
    f = sub.add_parser("fleet", help="config x machine from the ledger: fleet.html and a table of each machine's "
                                     "latest run, the classes of machines whose outputs are identical and what "
                                     "differs between them; exit 1 when any machine's latest run of any config "
                                     "fails, 0 when none does, 2 on bad input")
    f.add_argument("--ledger", default=DEFAULT_LEDGER, metavar="PATH|URL", help=_LEDGER_HELP)
    f.add_argument("--since", metavar="DATE", help="only runs started on or after DATE (UTC) (default: all)")
    f.add_argument("--out", type=Path, default=None, metavar="FILE",
                   help="where the page goes (default: fleet.html beside a ledger file, else ./fleet.html)")
    f.add_argument("--markdown", type=Path, default=None, metavar="FILE",
                   help="also append the table as Markdown to FILE, e.g. $GITHUB_STEP_SUMMARY or a Buildkite "
                        "annotation's body (default: none)")


def run_cli(args, out=None) -> int:
    out = out or sys.stdout
    try:
        if args.command == "ledger":
            return _add(args, out)
        if args.command == "fleet":
            return _fleet(args, out)
        if args.check and args.audit:
            raise LedgerInputError("--check and --audit: give one of them (--audit re-derives what --check "
                                   "compares, and more)")
        if args.check:
            return _check(args, out)
        if args.audit:
            return _audit(args, out)
        return _history(args, out)
    except (LedgerError, LedgerInputError) as exc:
        _say(f"oracle {args.command}: {exc}", sys.stderr)
        return 2


def _say(text: str, out) -> None:
    print(public_text(text), file=out)


def _add(args, out) -> int:
    rows = [run_row(folder, added_by="import") for folder in args.reports]  # every folder read before any write
    ledger = open_ledger(args.ledger)
    try:
        added = sum(append(ledger, row) for row in rows)
    finally:
        ledger.close()
    for folder, row in zip(args.reports, rows):
        if row.run["audit"] != VERIFIED:  # kept, and shown so in the history: never a plain pass
            _say(f"oracle ledger: {folder}: unverified: {row.run['audit_note']}", out)
    _say(f"oracle ledger: {added} run(s) added, {len(rows) - added} already there, in {ledger.shown}", out)
    return 0


def _check(args, out) -> int:
    ledger = open_ledger(args.ledger, existing=True)
    try:
        checked, problems = check_reports(ledger)
    finally:
        ledger.close()
    for p in problems:
        _say(p.line(), out)
    _say(f"oracle history --check: {checked} run(s), {len(problems)} missing or changed; nothing was deleted", out)
    return 1 if problems else 0


def _audit(args, out) -> int:
    ledger = open_ledger(args.ledger, existing=True)
    try:
        audits = audit_rows(ledger)
    finally:
        ledger.close()
    for row in audits:
        _say(row.line(), out)
    failed = sum(row.status == FAILS for row in audits)
    unverified = sum(row.status == UNVERIFIED for row in audits)
    _say(f"oracle history --audit: {len(audits)} run(s), {failed} fail their audit, {unverified} unverified (no "
         "seal, or the reference not at hand); nothing was changed", out)
    return 1 if failed else 0


_SINCE = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?Z?)?")


def _since(value: str | None) -> None:
    """--since is a date or a date and time (compared with each run's started_utc), else refused before the ledger
    is opened: a word would compare as text and keep no run, without a word."""
    if value is None:
        return
    try:
        if not _SINCE.fullmatch(value):  # the form started_utc is written in, so that text compares as time
            raise ValueError(value)
        datetime.fromisoformat(value.removesuffix("Z"))
    except ValueError:
        raise LedgerInputError(f"--since {value!r}: not a date; give a UTC date such as 2026-12-01, or a date and "
                               "time such as 2026-12-01T06:00") from None


def _history(args, out) -> int:
    _since(args.since)
    ledger = open_ledger(args.ledger, existing=True)
    try:
        history = read_history(ledger, since=args.since, machine=args.machine, backend=args.backend)
    finally:
        ledger.close()
    filters = ", ".join(f"--{k} {v}" for k, v in (("since", args.since), ("machine", args.machine),
                                                 ("backend", args.backend)) if v)
    page = args.out or _page_beside(args.ledger)
    try:
        write_page(page, history, title=f"oracle history: {redact_url(args.ledger)}", filters=filters)
    except OSError as exc:
        raise LedgerInputError(f"--out {page}: cannot be written ({exc.strerror or exc}); give --out a writable "
                               "file") from None
    _say(history_table(history), out)
    _say(f"oracle history: {page}", out)
    return 1 if history.failing else 0


def _fleet(args, out) -> int:
    _since(args.since)
    ledger = open_ledger(args.ledger, existing=True)
    try:
        fleet = read_fleet(ledger, since=args.since)
    finally:
        ledger.close()
    page = args.out or _page_beside(args.ledger, "fleet.html")
    _written("--out", page, lambda: write_fleet_page(page, fleet, title=f"oracle fleet: {redact_url(args.ledger)}"))
    if args.markdown is not None:
        _written("--markdown", args.markdown, lambda: _append(args.markdown, fleet_markdown(fleet, page=str(page))))
    _say(fleet_table(fleet), out)
    _say(f"oracle fleet: {page}", out)
    return 1 if fleet.failing else 0


def _written(flag: str, path: Path, write) -> None:
    try:
        write()
    except OSError as exc:
        raise LedgerInputError(f"{flag} {path}: cannot be written ({exc.strerror or exc}); give {flag} a writable "
                               "file") from None


def _append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(public_text(text))


def _page_beside(where: str, name: str = "history.html") -> Path:
    return Path(name) if "://" in where else Path(where).parent / name
