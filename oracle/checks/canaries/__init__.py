"""The objective canaries: code result, needle, repeats and crosstalk, each a pytest module in `canaries/`
collected beside the gate's items (which modules and needle lengths: `canary/plan.py`, from these settings)
and run through `canary/run.py` against the gate's server.

A check kind that adds no gate item: its options and settings (options.py), its state (state.py), its report
sections (oracle/canary/report.py, crosstalk_report.py), what a recorded reference keeps of it (every canary
the server held) and its descriptor (check.py), listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "CanarySettings", "CanaryState", "INCONCLUSIVE"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ("canary",)


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.canaries import check

    return getattr(check, name)
