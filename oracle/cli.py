"""The `oracle` command: `oracle diff A B [--json]`, `oracle html REPORT_DIR`, `oracle seal REFERENCE_DIR`,
`oracle models [--path NAME]`, `oracle bisect --backend F --good CMD --bad CMD` (its work lives in
`oracle.bisect`), `oracle repro REPORT_DIR` (its work lives in `oracle.repro`), `oracle localize REPORT_DIR`
(in `oracle.localize`), and `oracle ledger add REPORT_DIR...`,
`oracle history` and `oracle fleet` (their work lives in `oracle.ledger`).

The gate itself runs through pytest (`pytest --backend=...`); this command reads what it wrote and names the
embedded models.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from oracle.bisect import add_parser as add_bisect_parser, run_bisect
from oracle.ledger.audit import AuditFailed, audit_report
from oracle.localize import add_parser as add_localize_parser, run_cli as run_localize_cli
from oracle.ledger.cli import add_parsers as add_ledger_parsers, run_cli as run_ledger_cli
from oracle.redaction import public_text
from oracle.repro import add_parser as add_repro_parser, run_cli as run_repro_cli
from oracle.report.diff import DiffError, diff_runs
from oracle.report.writer import write_html
from oracle.store.json_files import InputFileError, read_json
from oracle.store.reference import SELF_HASH, seal
from oracle.store.shapes import REPORT_FIX, ReportShape
from oracle.targets.cache import EmbeddedError
from oracle.targets.models import LISTED, MODELS, model_path

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="oracle", description="Read what an oracle run wrote, name the embedded "
                                                          "models, bisect two launch commands, "
                                                          "reproduce a gate run's divergence, localize it to a layer, "
                                                          "read the run ledger's history, or line up "
                                                          "the fleet's machines.")
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("diff", help="compare two report dirs, or a report dir and a reference; "
                                    "exit 0 when the outputs are identical, 1 when any differs, 2 on bad input")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    d.add_argument("--json", action="store_true", help="print the comparison as JSON")
    h = sub.add_parser("html", help="(re)write identity.html in a report dir from its identity.json")
    h.add_argument("report", type=Path)
    s = sub.add_parser("seal", help="give an older reference's manifest its own hash, after checking that every "
                                    "file still matches it; exit 0 when sealed, 2 when the reference is tainted")
    s.add_argument("reference", type=Path)
    m = sub.add_parser("models", help="list the embedded models with their paths (building them on first use); "
                                      "--path NAME prints one model's path only")
    m.add_argument("--path", metavar="NAME", choices=list(MODELS), help=f"one of {', '.join(MODELS)}")
    add_bisect_parser(sub)
    add_repro_parser(sub)
    add_localize_parser(sub)
    add_ledger_parsers(sub)
    try:
        args = ap.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code else 0
    if args.command == "bisect":
        return run_bisect(args)
    if args.command == "repro":
        return run_repro_cli(args)
    if args.command == "localize":
        return run_localize_cli(args)
    if args.command in ("ledger", "history", "fleet"):
        return run_ledger_cli(args)
    try:
        if args.command == "html":
            if not (args.report / "identity.json").is_file():
                raise DiffError(f"{args.report}: no identity.json there; give a report dir written by oracle")
            _audited(args.report)  # the file or field that differs named before a page is written from it
            from oracle.checks import SECTIONS  # the check kinds' registry: loaded for this command alone

            _say(str(write_html(args.report, SECTIONS)))
            return 0
        if args.command == "models":
            if args.path:
                _say(str(model_path(args.path)))
            else:
                for name in LISTED:
                    _say(f"{name}\t{model_path(name)}")
            return 0
        if args.command == "seal":
            print(f"{args.reference}: manifest sealed ({SELF_HASH} {seal(args.reference)})")
            return 0
        for side in (args.a, args.b):  # a report whose stated verdicts do not follow is not compared
            _audited(side)
        result = diff_runs(args.a, args.b)
    except (InputFileError, EmbeddedError, AuditFailed) as exc:  # a DiffError or ReferenceError too: the file and the fix
        _say(f"oracle {args.command}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # what it writes (identity.html, a sealed manifest.json) cannot be written
        _say(f"oracle {args.command}: cannot write {exc.filename or 'its output'} ({exc.strerror or exc}); "
             "make the folder writable", file=sys.stderr)
        return 2
    _say(json.dumps(result.as_json(), indent=1) if args.json else result.table())
    return 0 if result.outputs_identical else 1


def _audited(folder: Path) -> None:
    """A report folder's seal and verdicts re-derived (ledger/audit.py): AuditFailed naming the file or the field.
    A reference, or a folder that is neither, is left to diff_runs, which names what it is."""
    path = folder / "identity.json"
    if (folder / "manifest.json").is_file() or not path.is_file():
        return
    report = read_json(path, ReportShape, fix=REPORT_FIX)
    try:
        audit_report(folder, report)
    except AuditFailed as exc:
        raise AuditFailed(f"{folder}: refused: {exc}") from None


def _say(text: str, file=None) -> None:
    """Everything this command prints: a report written elsewhere may still hold a secret (`redaction`)."""
    print(public_text(text), file=file or sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
