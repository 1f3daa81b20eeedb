"""The tokens check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/tokens/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, PlanContext, PlanPart, Producers
from oracle.checks.tokens.producer import TokenChecks
from oracle.checks.tokens.state import TokensState
from oracle.report import evidence
from oracle.report import grid as section

__all__ = ["CHECK", "TokenChecks", "TokensState"]

_LABEL = {"gate": "tokens", "record": "record", "run": "run"}  # the item's name by the plan's mode


def items(plan) -> list[CheckItem]:
    """One per prompt, first of that prompt's items; against an f16 reference the gate is on logits alone."""
    if plan.f16_gate and plan.mode == "gate":
        return []
    label = _LABEL[plan.mode]
    return [CheckItem(f"{label}[{pid}]", "tokens", pid, order=(10, i, 0), placed="prompt")
            for i, pid in enumerate(plan.suite.ids())]


def build(parts: CheckParts) -> Producers:
    checks = TokenChecks(parts.plan, parts.recorder, parts.prompts, parts.state)
    return Producers({"tokens": checks.prompt_check}, observe=checks.observe)


def plan_part(kind: str, key, context: PlanContext) -> PlanPart:
    """Every prompt's item judges the one primary run: its requests are counted once."""
    return PlanPart("primary prompts (c1)", context.suite, once=True,
                    note="" if context.reference else "each prompt's max_tokens: an upper bound")


CHECK = CheckDescriptor(name="tokens", title="tokens", order=10, kinds=("tokens",), items=items, build=build,
                        state=TokensState, sections=(section, evidence), plan_part=plan_part)
