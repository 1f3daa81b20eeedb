"""Tokens: each prompt's item of the primary run (boot 1, c1, every prompt once), `tokens[ID]` in a gate (its
completion against the reference's, token by token), `record[ID]` when recording, `run[ID]` without a reference;
and which evidence the server gave (ids or text, logprobs, cached tokens, counters), with the sampled runs' token
match rate.

The primary run itself is the gate's (oracle/gate/primary.py); this check judges what it recorded. Its producer
(producer.py), state (state.py), report sections (oracle/report/grid.py, the verdict grid; evidence.py) and this
descriptor, listed once in oracle.checks.CHECKS. `--near-tie-nats` is the gate's: the ladder and boots judge
with it too.
"""

from __future__ import annotations

__all__ = ["CHECK", "INCONCLUSIVE", "TokenChecks", "TokensState"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ()


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.tokens import check

    return getattr(check, name)
