"""The conditions: the concurrency ladder (`ladder[cN]`, one item per `--ladder` level) and the server's restarts
(`boot[N]`, one item per later `--boots` boot), each a run of the suite compared record by record with its
prompt's c1 record (and the reference).

One kind, not two: ladder levels and boots share one state. Their rows against c1 make one determinism class
(the c1 repeat of the ladder against every later boot) and one noise envelope of a recorded reference; under
pytest -n a condition first runs, once per server, the c1 baseline of the prompts other servers ran; and
`--boots` adds the within-boot repeat (level 1) to the ladder.

Its options and settings (options.py), producer (producer.py), state (state.py), report section
(oracle/report/grid.py) and its descriptor (check.py), listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "ConditionChecks", "ConditionSettings", "ConditionsState", "INCONCLUSIVE"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ("overlap",)


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.conditions import check

    return getattr(check, name)
