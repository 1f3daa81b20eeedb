"""Condition coverage: every run's conditions (chunked prefill, mixed batch, preemption, overlap) kept for the
report, and the `coverage` item that fails closed on the conditions `--require-conditions` names.

A check kind in full: its options and settings (options.py), its producer (producer.py), its state (state.py),
its report section (oracle/report/coverage.py) and its descriptor (check.py), listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "CoverageChecks", "CoverageSettings", "CoverageState", "INCONCLUSIVE"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ("coverage",)


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.coverage import check

    return getattr(check, name)
