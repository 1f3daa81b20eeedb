"""Prompt log-prob: the mean log-prob a runner gives the prompts' own tokens (teacher forced over each prompt)
against the reference's; its item is collected for a backend whose capabilities declare `prompt_logprobs`.

Its options (options.py), producer (producer.py), state (state.py), report section (oracle/logits/runner_report.py)
and its descriptor (check.py), listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

__all__ = ["CHECK", "INCONCLUSIVE", "PromptLogprobChecks", "PromptLogprobSettings", "PromptLogprobState"]

# The --allow-inconclusive kinds its items may be inconclusive under (oracle.checks.INCONCLUSIVE_KINDS).
INCONCLUSIVE: tuple[str, ...] = ()


def __getattr__(name: str):
    # The descriptor and its parts load on first use (check.py): `pytest --help` and a session without
    # --backend import only options.py (docs/architecture.md, "The plugin's cost").
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks.prompt_logprob import check

    return getattr(check, name)
