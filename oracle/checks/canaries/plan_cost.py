"""What each canary test costs in the run plan (`CheckDescriptor.plan_test`): the canary modules are pytest tests
of their own, not gate items, so their part is read from each collected test's parameters. Needles of the default
lengths are what --oracle-budget leaves out (`BUDGET`, the longest lengths first): they are the run on a slow server;
a length given with --needle-lengths (or followed from the reference) is run whatever it takes.

    part = plan_test(item, context)   # PlanPart("needles 512", ((512, ANSWER_TOKENS),), budget=Droppable(512, ...))
"""

from __future__ import annotations

from oracle.canary.kinds import CANARY_CHECK
from oracle.canary.needle import ANSWER_TOKENS
from oracle.checks.descriptor import BudgetRule, Droppable, PlanContext, PlanPart

__all__ = ["BUDGET", "CANARY_PROMPT_TOKENS", "plan_test"]

CANARY_PROMPT_TOKENS = 60  # a short canary prompt whose ids are built at run time (crosstalk markers, repeats)


def plan_test(item, context: PlanContext) -> PlanPart | None:
    """A collected canary test's part (None: not a canary test); a needle's may be dropped by the budget."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    o = context.options
    if "needle_case" in params:
        length, depth = params["needle_case"]
        return PlanPart(f"needles {length}", ((length, ANSWER_TOKENS),),
                        budget=Droppable(length, f"needle[{length}-d{depth}]", "needle",
                                         {"length": length, "depth": depth}, {"length": length}))
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


def _fixed(options, lengths: list[int]) -> str | None:
    """The plan's note when the needle lengths were given (or followed from the reference): run whatever it takes."""
    settings = options.check(CANARY_CHECK)
    if settings.needle_lengths is None:
        return None
    return f"needle lengths {', '.join(map(str, lengths))} are run whatever the budget: {settings.lengths_from}"


def _reason(length: int, part, kept: list[int], rates, beyond: str) -> str:
    """'needle 8176 would take ~160 s (1 depth(s)) at 52 tok/s prefill, beyond the budget of ...; --needle-lengths
    1024,2048,4096,8176 to run it'."""
    run_it = ",".join(str(n) for n in sorted(kept + [length]))
    return (f"needle {length} would take ~{part.estimate_s:.0f} s ({part.requests} depth(s)) at "
            f"{rates.prefill_tps:.0f} tok/s prefill, {beyond}; --needle-lengths {run_it} to run it")


BUDGET = BudgetRule(fixed=_fixed, reason=_reason)
