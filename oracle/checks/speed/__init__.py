"""Speed: the speed card of the primary run (its power and isolation window, its credibility, its comparison with
the reference) and the `speed` item, which judges it against `--min-speedup`; and the report's speed section
(`SpeedState`), which the interleaved A/B (oracle/checks/speed_ab/) and the speed cells (oracle/checks/speed_cells/)
fill too.

Its options (options.py), producer (producer.py: the primary run's `watch` and the item), state (state.py), report
section (oracle/speed/report.py) and its descriptor (check.py), listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "INCONCLUSIVE", "SpeedChecks", "SpeedSettings", "SpeedState"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ("speed",)


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.speed import check

    return getattr(check, name)
