"""`oracle repro REPORT_DIR`: the smallest request that still shows a gate run's divergence, as an issue-ready
repro.md (the two launch commands, a runnable curl command with token ids, the tokens around the split).

    md = run_repro(Path("reports/...-gate"))   # repro.md's path; repro.json's exit_code: 0 written, 1 not
                                               # reproduced, 2 stopped midway; ReproInput on bad input
    code = run_cli(args)                        # args from cli.py's `repro` subparser; 2 on bad input

source.py reads the report, search.py replays probes on fresh servers and shrinks the request, session.py
orchestrates with a probe budget, render.py writes repro.json / repro.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from oracle.redaction import public_text, remember_secrets
from oracle.repro.session import NOT_REPRODUCED, STOPPED, WRITTEN, ReproSession
from oracle.repro.source import ReproInput, read_source
from oracle.store.folder_safety import Place, folder_refusal, reference_inside_refusal

__all__ = ["NOT_REPRODUCED", "STOPPED", "WRITTEN", "ReproInput", "add_parser", "run_cli", "run_repro"]


def run_repro(report_dir: Path, *, prompt: str | None = None, reference: Path | None = None, max_probes: int = 24,
              out: Path | None = None, launch: str | None = None, stream=None) -> Path:
    """Reproduce the divergence of `report_dir` (a gate report folder) and return the path of the repro.md written
    (in `out`, default REPORT_DIR/repro); its repro.json's `status` and `exit_code` say the outcome (0 written,
    1 not reproduced, 2 stopped midway). Raises ReproInput, naming the fix, on bad input (before any server)."""
    return _reproduce(report_dir, prompt=prompt, reference=reference, max_probes=max_probes, out=out,
                      launch=launch, stream=stream)[1]


def _reproduce(report_dir: Path, *, prompt: str | None, reference: Path | None, max_probes: int, out: Path | None,
               launch: str | None, stream) -> tuple[int, Path]:
    report_dir = Path(report_dir)
    if launch is not None and not launch.strip():
        raise ReproInput(f"--launch {launch!r}: an empty command; give the candidate's launch command with {{port}}, "
                         "or leave --launch out to start the command the report names")
    if launch:
        remember_secrets(commands=(launch,))
    if max_probes < 1:
        raise ReproInput(f"--max-probes {max_probes}: give at least 1 (each probe is one server start)")
    source = read_source(report_dir, prompt=prompt, reference=Path(reference) if reference else None, launch=launch)
    folder = Path(out) if out else report_dir / "repro"
    # The repro goes beside the gate's report by default (REPORT_DIR/repro); never into the reference, never over
    # the report itself.
    reads = [Place("--reference", source.reference_dir)] + ([Place("REPORT_DIR", report_dir)] if out else [])
    written = Place("--out" if out else "the default --out", folder)
    refusal = folder_refusal([written], reads) or reference_inside_refusal(written)
    if refusal:
        raise ReproInput(refusal)
    _preflight(folder)
    code = ReproSession(source, out=folder, max_probes=max_probes, stream=stream or sys.stdout).run()
    return code, folder / "repro.md"


def _preflight(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".oracle-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ReproInput(f"--out {folder}: cannot write there ({exc.strerror or exc}); give a writable folder "
                         "with --out DIR") from None


def add_parser(sub) -> None:
    r = sub.add_parser("repro", help="reproduce a gate report's divergence with the fewest prompts and tokens; "
                                     "writes repro.md (a runnable curl command); exit 0 written, 1 not reproduced, "
                                     "2 bad input")
    r.add_argument("report", type=Path, metavar="REPORT_DIR", help="a gate report folder (identity.json)")
    r.add_argument("--prompt", metavar="ID", help="the divergent prompt to reproduce (default: the first)")
    r.add_argument("--reference", type=Path, metavar="DIR",
                   help="the reference the gate ran against (default: the path its report names)")
    r.add_argument("--max-probes", type=_positive, default=24, metavar="N",
                   help="server starts the search may use (default 24; the verify start is one more)")
    r.add_argument("--out", type=Path, metavar="DIR", help="where repro.md / repro.json go (default REPORT_DIR/repro)")
    r.add_argument("--launch", metavar="CMD", help="the candidate's launch command with {port}, when the report's "
                                                   "is redacted or the gate ran against --oracle-url")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give N >= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: give N >= 1 (each probe is one server start)")
    return value


def run_cli(args) -> int:
    """The `oracle repro` subcommand: 0 written, 1 not reproduced, 2 bad input (the fix named) or stopped midway."""
    try:
        code, _ = _reproduce(args.report, prompt=args.prompt, reference=args.reference, max_probes=args.max_probes,
                             out=args.out, launch=args.launch, stream=sys.stdout)
    except ReproInput as exc:
        print(public_text(f"oracle repro: {exc}"), file=sys.stderr)
        return STOPPED
    return code
