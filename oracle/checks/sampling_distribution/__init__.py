"""The sampling distribution (`--temperature` with `--sampling-check distribution`): the candidate's sampled
tokens and the reference's own samples, both scored under the reference model on the `--score-url` server and
compared as distributions (compare/distribution.py), for a candidate whose tokens may differ by design.

Its options (options.py: the sampled-decoding group), producer (producer.py), what it needs of the scoring server
(scorer.py), state (state.py: the report's `sampling`), report section (oracle/report/sampling.py) and this
descriptor, listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "DistributionSettings", "INCONCLUSIVE", "SamplingChecks", "SamplingState"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ("sampling",)


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.sampling_distribution import check

    return getattr(check, name)
