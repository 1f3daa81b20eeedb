"""Decode vs prefill: the candidate's own path, its decode-time top-k against the same path scored as a prompt
(in one pass and in chunks), with `--logits`; and for a backend that feeds prompts in chunks of any size (python
runners) the chunked-prefill item, each chunk size against the one pass. Diagnostic requests, apart from the
gated run.

Its options (options.py), producer (producer.py), what it needs of a backend (scorer.py), state (state.py),
report section (oracle/logits/dvp_report.py) and its descriptor (check.py), listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "DecodePrefillChecks", "DecodePrefillSettings", "DecodePrefillState", "INCONCLUSIVE"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ()


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.decode_vs_prefill import check

    return getattr(check, name)
