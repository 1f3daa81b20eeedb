"""`oracle localize REPORT_DIR`: the first layer where the candidate of a gate run computes something else than its
reference, on the reference's own path up to the split, against the band of the reference's own repeat.

    code = run_localize(Path("reports/...-gate"), out=None)   # 0 a layer named, 1 every layer within band;
                                                               # LocalizeInput (exit 2) on bad input

compare.py is the pure per-layer comparison; hf_layers.py, runner_layers.py and openvino_layers.py read each
family's layers; source.py reads the report and its reference; session.py orchestrates; report.py and curve.py
write localize.json / .md / .html in a NEW folder (never into REPORT_DIR, which is sealed).
"""

from __future__ import annotations

import sys
from pathlib import Path

from oracle.localize.compare import (BAND_FACTOR, BAND_FLOOR, LayerCapture, LayerMismatch, LayerOutput, LayerRow,
                                     Localization, compare_layers)
from oracle.localize.runner_layers import NoLayers
from oracle.localize.session import LOCALIZED, WITHIN_BAND, localize
from oracle.localize.source import LocalizeInput, read_source
from oracle.redaction import public_text
from oracle.store.folder_safety import (Place, earlier_report_refusal, folder_refusal, name_refusal,
                                        reference_inside_refusal)
from oracle.store.folders import FolderError, fresh_report_dir, preflight

__all__ = ["BAD_INPUT", "BAND_FACTOR", "BAND_FLOOR", "LOCALIZED", "LayerCapture", "LayerMismatch", "LayerOutput",
           "LayerRow", "LocalizeInput", "Localization", "NoLayers", "WITHIN_BAND", "add_parser", "compare_layers",
           "run_cli", "run_localize"]

BAD_INPUT = 2


def add_parser(sub) -> None:
    p = sub.add_parser("localize", help="name the first layer where a gate run's candidate computes something else "
                                        "than its reference (hf, openvino, python runners; llamacpp through "
                                        "llama-eval-callback); "
                                        "writes localize.json / .md / .html in a new folder; exit 0 a layer named, "
                                        "1 every layer within the reference's band, 2 bad input or no layers")
    p.add_argument("report", type=Path, metavar="REPORT_DIR", help="a gate report folder whose tokens split")
    p.add_argument("--prompt", metavar="ID", help="the split prompt to localize (default: the first)")
    p.add_argument("--reference", type=Path, metavar="DIR",
                   help="the reference the gate ran against (default: the path its report names)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="a new folder for localize.json / .md / .html (default: reports/<UTC time>-localize/)")


def run_localize(report_dir: Path, *, prompt: str | None = None, reference: Path | None = None,
                 out: Path | None = None, stream=None) -> int:
    """Localize the split of `report_dir`; the exit code (0 named, 1 within band). LocalizeInput on bad input,
    before any model loads; NoLayers or LayerMismatch when a configuration shows no (or other) layers."""
    source = read_source(Path(report_dir), prompt=prompt, reference=Path(reference) if reference else None)
    folder = Path(out) if out else fresh_report_dir("localize")
    written = Place("--out" if out else "the default --out", folder)
    reads = [Place("REPORT_DIR", source.report_dir), Place("--reference", source.reference_dir)]
    refusal = (name_refusal(written) or earlier_report_refusal(written, marker="localize.json")
               or earlier_report_refusal(written) or folder_refusal([written], reads)
               or reference_inside_refusal(written))
    if refusal:
        raise LocalizeInput(refusal)
    try:
        preflight(folder, "--out")
    except FolderError as exc:
        raise LocalizeInput(str(exc)) from None
    return localize(source, out=folder, stream=stream or sys.stdout)


def run_cli(args) -> int:
    """The `oracle localize` subcommand: 0 a layer named, 1 within band, 2 bad input or no layers (the fix named)."""
    try:
        return run_localize(args.report, prompt=args.prompt, reference=args.reference, out=args.out)
    except (LocalizeInput, NoLayers, LayerMismatch) as exc:
        print(public_text(f"oracle localize: {exc}"), file=sys.stderr)
        return BAD_INPUT
