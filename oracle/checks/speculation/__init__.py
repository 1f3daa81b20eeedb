"""Speculation: the primary run's drafted and accepted tokens kept for the report, and the `speculation` item
(`speculation[serverK]` under pytest -n) that proves a speculative candidate (`--speculative`, or one whose
server's config or counters show speculation) drafted and accepted tokens.

Its option (options.py), producer (producer.py, on the primary run's evidence shared with cache-zero in
oracle/checks/per_server.py), state (state.py), report section (oracle/report/evidence.py, beside cache-zero) and
this descriptor, listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "INCONCLUSIVE", "SpeculationChecks", "SpeculationSettings", "SpeculationState"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ("speculation",)


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.speculation import check

    return getattr(check, name)
