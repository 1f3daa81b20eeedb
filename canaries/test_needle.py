"""Needle canary: a 7-digit value hidden at a depth of a token-exact haystack must be returned.

Lengths that do not fit the planned context are not collected; the report's notes say which and why.
Lengths that were collected but do not fit the context the server really has (read at start), or that the run
plan drops for --oracle-budget, are `dropped`: never sent, passed, listed in the notes and left out of a recorded
reference.
"""

from __future__ import annotations

import pytest

from oracle.canary.kinds import CANARY_CHECK
from oracle.backends import RequestFailed
from oracle.canary.context import beyond as beyond_context, unknown_note
from oracle.canary.plan import needle_plan
from oracle.canary.run import complete, dropped, finish_canary, not_run
from oracle.gate.items import GATE_KEY
from oracle.canary.needle import ANSWER_TOKENS, build_needle_prompt, load_haystack
from oracle.canary.rejudge import needle_answer
from oracle.gate.options import options_of


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    options = options_of(metafunc.config)
    if "needle_case" not in metafunc.fixturenames or options is None:
        return
    fit, dropped, depths, ctx, source = needle_plan(options)
    if dropped:
        note = (f"needle lengths not collected: {', '.join(map(str, dropped))} tokens (each needs length + "
                f"{ANSWER_TOKENS} answer tokens <= context {ctx}, from {source})")
        gate = metafunc.config.stash.get(GATE_KEY, None)
        if gate is not None:
            gate.note(note)
    cases = [(n, d) for n in fit for d in depths]
    metafunc.parametrize("needle_case", cases, ids=[f"{n}-d{d}" for n, d in cases])


@pytest.fixture(scope="module")
def haystack(oracle_gate) -> list[str]:
    return load_haystack(oracle_gate.options.check(CANARY_CHECK).haystack)


def test_needle(oracle_gate, request, haystack, needle_case) -> None:
    total, depth = needle_case
    item_id = f"needle[{total}-d{depth}]"
    budget = oracle_gate.run_plan.drops.get(request.node.nodeid)
    if budget is not None:  # beyond --oracle-budget by the plan's estimate (oracle/plan/run_plan.py)
        dropped(oracle_gate, request.node, *budget)
        return
    context = oracle_gate.context
    beyond = beyond_context(context, total)
    if beyond:
        dropped(oracle_gate, request.node, item_id, "needle", beyond, {"length": total, "depth": depth})
        return
    if unknown_note(context):
        oracle_gate.note(unknown_note(context))
    b = oracle_gate.backend
    try:
        p = build_needle_prompt(total=total, depth=depth, tokenize=oracle_gate.prompts.tokenize,
                                template=b.chat_template(), special_tokens=b.special_tokens(),
                                haystack=haystack, seed=oracle_gate.options.seed)
        c = complete(oracle_gate, p.ids, max_tokens=ANSWER_TOKENS, top_k=oracle_gate.options.logprobs)
    except RequestFailed as exc:
        not_run(oracle_gate, item_id, "needle", str(exc))
        return
    ok, s = needle_answer(c.text, p.value)  # the rule the ledger's audit re-derives ok by
    finish_canary(oracle_gate, item_id, "needle", ok=ok,
                  result={"length": total, "depth": depth, "prompt_tokens": len(p.ids), "needle_at": p.needle_at,
                          "key": p.key, "expected": p.value, "extracted": s.extracted, "raw_text": c.text,
                          "answer": s.verdict, "reason": s.reason},
                  detail=f"{s.verdict}: {s.reason}; text {c.text[:60]!r}",
                  strict=oracle_gate.options.check(CANARY_CHECK).strict, completion=c)
