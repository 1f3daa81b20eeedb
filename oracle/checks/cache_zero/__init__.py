"""Cache-zero: the `cache-zero` item (`cache-zero[serverK]` under pytest -n) proving that every request of the
primary run ran cold, with no prefix-cache reuse (each response's cached-token count, the server's counters).

Its producer (producer.py, on the primary run's evidence shared with speculation in oracle/checks/per_server.py),
state (state.py), report section (oracle/report/evidence.py) and its descriptor (check.py), listed once in
oracle.checks.CHECKS. It has no option of its own (`--allow-inconclusive cache` is the gate's).
"""

from __future__ import annotations

__all__ = ["CHECK", "CacheZeroChecks", "CacheZeroState", "INCONCLUSIVE"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ("cache",)


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.cache_zero import check

    return getattr(check, name)
