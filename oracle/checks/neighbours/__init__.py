"""The neighbours: `neighbours[N]`, one item per `--neighbours` length: every suite prompt sent with an unrelated
request of N prompt tokens beside it (its prefill running beside the prompt's decode), each prompt's complete
token array compared with its c1 record (and the reference), the overlap of each pair proven (vllm #51902: one
request's output changed when an unrelated prefill beside it grew from 9 to 10 tokens).

Its option and settings (options.py), the neighbour's prompt (prompt.py), producer (producer.py), state
(state.py) and its descriptor (check.py), listed once in oracle.checks.CHECKS. The report's identity.json key is
`neighbours`; its section in identity.md/html oracle/report/neighbours.py (the picture's neighbour row:
oracle/report/widths.py).
"""

from __future__ import annotations

__all__ = ["CHECK", "INCONCLUSIVE", "NeighbourChecks", "NeighbourSettings", "NeighboursState"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ("overlap",)


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.neighbours import check

    return getattr(check, name)
