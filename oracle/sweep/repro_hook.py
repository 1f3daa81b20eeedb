"""The sweep's one call into `oracle repro`: the first point whose outputs split from the reference, reduced to an
issue-ready repro.md. `oracle.repro` is imported when called: a sweep without a split point never loads it.

    run_repro_for(point_folder)   # {"path": ".../repro.md", "status": ..., "exit_code": N} or {"error": "why not"}
"""

from __future__ import annotations

from pathlib import Path

from oracle.redaction import public_text
from oracle.store.json_files import read_json
from oracle.store.shapes import ReproOutcomeShape

__all__ = ["run_repro_for"]


def run_repro_for(point_folder: Path) -> dict:
    """`oracle.repro.run_repro(point_folder)`'s path, or the reason it gave none (it raises on failure)."""
    try:
        from oracle.repro import run_repro

        path = run_repro(point_folder)
        outcome = read_json(path.parent / "repro.json", ReproOutcomeShape, fix="run oracle repro on the point again")
        return {"path": str(path), "status": outcome.get("status"), "exit_code": outcome.get("exit_code")}
    except KeyboardInterrupt:
        return {"error": "interrupted (Ctrl-C) while the repro ran"}
    except Exception as exc:  # the repro is a bonus to the sweep's answer: its failure is reported, not fatal
        return {"error": public_text(f"{type(exc).__name__}: {exc}")}
