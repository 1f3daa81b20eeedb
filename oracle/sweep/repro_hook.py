"""The sweep's one call into `oracle repro`: the first point whose outputs split from the reference, reduced to an
issue-ready repro.md. Imported when called, so a sweep runs (and says why there is no repro) without it.

    run_repro_for(point_folder)   # {"path": ".../repro.md"} or {"error": "why not"}
"""

from __future__ import annotations

from pathlib import Path

from oracle.redaction import public_text

__all__ = ["run_repro_for"]


def run_repro_for(point_folder: Path) -> dict:
    """`oracle.repro.run_repro(point_folder)`'s path, or the reason it gave none (it raises on failure)."""
    try:
        from oracle.repro import run_repro

        return {"path": str(run_repro(point_folder))}
    except KeyboardInterrupt:
        return {"error": "interrupted (Ctrl-C) while the repro ran"}
    except Exception as exc:  # the repro is a bonus to the sweep's answer: its failure is reported, not fatal
        return {"error": public_text(f"{type(exc).__name__}: {exc}")}
