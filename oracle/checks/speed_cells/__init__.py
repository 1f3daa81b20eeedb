"""Speed cells: prompt and generation lengths measured cold, each cell's repeats with a unique prefix, after the
c1 run (`--speed-cells`, `--speed-repeats`), interleaved with the reference config when `--reference-launch` is
given; the `speed-cells` item judges them. The cells go into the speed section under `cells`
(oracle/checks/speed/state.py).

Its options (options.py), producer (producer.py), the interleaved cells' two servers (interleave.py), report section
(oracle/speed/cells_report.py) and its descriptor (check.py), listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "CellsCheck", "CellsSettings", "INCONCLUSIVE"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ("speed",)


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.speed_cells import check

    return getattr(check, name)
