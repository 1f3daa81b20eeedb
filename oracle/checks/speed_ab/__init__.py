"""Interleaved A/B: the reference config (`--reference-launch`) started in this session and measured with the
candidate in ABBA rounds, and the A/A control (`--speed-control`); the `speed-ab` item, whose between-run
comparison becomes the speed card's `vs_reference` (which the speed item judges). Its passes and comparison go into
the speed section (oracle/checks/speed/state.py).

Its options (options.py), producer (producer.py), the two sides' servers (servers.py, which the interleaved speed
cells share), report section (oracle/speed/interleave_report.py) and its descriptor (check.py), listed once in
oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "INCONCLUSIVE", "InterleaveChecks", "InterleaveOptions"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ()


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.speed_ab import check

    return getattr(check, name)
