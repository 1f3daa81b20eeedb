"""What each canary test costs in the run plan (`CheckDescriptor.plan_test`): the canary modules are pytest tests
of their own, not gate items, so their part is read from each collected test's parameters.

    part = plan_test(item, context)   # PlanPart("needles 512", ((512, ANSWER_TOKENS),), budget=(512, 50))
"""

from __future__ import annotations

from oracle.canary.kinds import CANARY_CHECK
from oracle.canary.needle import ANSWER_TOKENS
from oracle.checks.descriptor import PlanContext, PlanPart

__all__ = ["CANARY_PROMPT_TOKENS", "plan_test"]

CANARY_PROMPT_TOKENS = 60  # a short canary prompt whose ids are built at run time (crosstalk markers, repeats)


def plan_test(item, context: PlanContext) -> PlanPart | None:
    """A collected canary test's part (None: not a canary test); a needle's may be dropped by the budget."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    o = context.options
    if "needle_case" in params:
        length, depth = params["needle_case"]
        return PlanPart(f"needles {length}", ((length, ANSWER_TOKENS),), budget=(length, depth))
    if "code_item" in params:
        from oracle.canary.code import ANSWER_PREFIX, MAX_TOKENS, code_prompt

        ids = context.prompts.render_ids(code_prompt(params["code_item"]), suffix=ANSWER_PREFIX)
        return PlanPart("canaries: code", ((len(ids), MAX_TOKENS),))
    if "mode" in params and hasattr(item.module, "PROMPT"):
        n, tokens = o.check(CANARY_CHECK).repeats, o.max_tokens or item.module.MAX_TOKENS
        ids = context.prompts.render_ids(item.module.PROMPT)
        return PlanPart("canaries: repeats", ((len(ids), tokens),) * n, note="a burst's requests at the c1 rates")
    if "crosstalk_level" in params:
        from oracle.canary.crosstalk import MAX_TOKENS

        level, tokens = params["crosstalk_level"], o.max_tokens or MAX_TOKENS
        return PlanPart("canaries: crosstalk", ((CANARY_PROMPT_TOKENS, tokens),) * (2 * level),
                        note="each level alone then at once, at the c1 rates")
    return None
