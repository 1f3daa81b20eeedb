"""`--localize` on a gate: `oracle localize` on the run's own report once it is written, when a prompt's tokens
split; a gate that passed runs nothing more. The answer goes to a new folder beside the report
(`<report-dir>-localize/`): the gate's report stays as the gate wrote it.

    lines, summary = localize_gate_run(report_dir)   # the terminal's lines ([] when nothing split) and identity.json's
                                                     # `localize` (report/localized.py; None when nothing split)
"""

from __future__ import annotations

import io
from pathlib import Path

from oracle.localize.compare import LayerMismatch
from oracle.localize.runner_layers import NoLayers
from oracle.localize.source import LocalizeInput
from oracle.redaction import public_text
from oracle.repro.source import diverged_prompts
from oracle.store.json_files import InputFileError, read_json
from oracle.store.shapes import REPORT_FIX, ReportShape

__all__ = ["localize_folder", "localize_gate_run"]


def localize_folder(report_dir: Path) -> Path:
    """Where --localize writes: beside the report, never in it."""
    return report_dir.with_name(f"{report_dir.name}-localize")


def _not_run(line: str) -> tuple[list[str], dict]:
    line = public_text(line)
    return [line], {"status": "not-run", "detail": line.removeprefix("oracle --localize: ")}


def localize_gate_run(report_dir: Path) -> tuple[list[str], dict | None]:
    """Localize the first split of the gate report at `report_dir`; the lines that say what came of it, and the
    summary for identity.json's `localize` key."""
    from oracle.localize import run_localize
    from oracle.report.localized import summary_of

    try:
        report = read_json(report_dir / "identity.json", ReportShape, fix=REPORT_FIX)
    except (InputFileError, OSError) as exc:
        return _not_run(f"oracle --localize: not run: the report cannot be read ({exc})")
    if not diverged_prompts(report):
        return [], None  # nothing split: nothing to localize, nothing loaded
    out, folder = io.StringIO(), localize_folder(report_dir)
    try:
        run_localize(report_dir, out=folder, stream=out)
        summary = summary_of(read_json(folder / "localize.json", fix="run oracle localize again"), str(folder))
    except (LocalizeInput, NoLayers, LayerMismatch) as exc:
        return _not_run(f"oracle --localize: not run: {exc}")
    except KeyboardInterrupt:
        return ["oracle --localize: interrupted (Ctrl-C); the gate's report and verdict stand"], None
    except Exception as exc:  # a model that fails to load or run: the gate's verdict stands, the reason is said
        return _not_run(f"oracle --localize: failed: {type(exc).__name__}: {exc}; the gate's report and verdict "
                        "stand")
    lines = [line for line in out.getvalue().splitlines() if line.startswith(("oracle localize:", "report:"))]
    return [public_text(line) for line in lines[-2:]], summary
