"""Logits against the reference: the candidate teacher-forced along the reference's path, KLD and Same top p per
prompt (`logits[ID]`) and over the suite (`logits`), against an f16 reference or with `--logits`; and when an f16
reference is recorded in process, its own precision floor (`logits-floor`).

Its options (options.py), producer (producer.py), state (state.py), report section (oracle/logits/report.py) and
this descriptor, listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "INCONCLUSIVE", "LogitsChecks", "LogitsSettings", "LogitsState"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ()


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.logits import check

    return getattr(check, name)
