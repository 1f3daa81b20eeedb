"""The prompt_logprob check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/prompt_logprob/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Producers
from oracle.checks.prompt_logprob.options import TITLE, PromptLogprobSettings, add_options, settings_of
from oracle.checks.prompt_logprob.producer import PromptLogprobChecks
from oracle.checks.prompt_logprob.state import PromptLogprobState
from oracle.logits import runner_report as section

__all__ = ["CHECK", "PromptLogprobChecks", "PromptLogprobSettings", "PromptLogprobState"]


def items(plan) -> list[CheckItem]:
    """The backend scores the prompt itself (python runners): after the other diagnostic requests."""
    return [CheckItem("prompt-logprob", "prompt_logprob")] if plan.capabilities.prompt_logprobs else []


def build(parts: CheckParts) -> Producers:
    checks = PromptLogprobChecks(parts.plan, parts.recorder, parts.prompts, parts.state)
    return Producers({"prompt_logprob": checks.check})


CHECK = CheckDescriptor(name="prompt_logprob", title=TITLE, order=45, kinds=("prompt_logprob",),
                        items=items, build=build, state=PromptLogprobState, add_options=add_options,
                        settings=settings_of, defaults=PromptLogprobSettings(), sections=(section,))
