"""Repeats canary: the same request N times in a row, and N at once, must give identical token arrays."""

from __future__ import annotations

import pytest

from oracle.canary.kinds import CANARY_CHECK
from oracle.backends import RequestFailed
from oracle.canary.run import complete_many, finish_canary, not_run, render_ids
from oracle.canary.rejudge import repeats_ok
from oracle.canary.repeats import summarize_repeats

PROMPT = [{"role": "user", "content": "List five facts about rivers, one per line."}]
MAX_TOKENS = 48  # --max-tokens, when given, overrides it as it does for the suite


@pytest.mark.parametrize("mode", ["sequential", "burst"])
def test_repeats(oracle_gate, mode) -> None:
    n = oracle_gate.options.check(CANARY_CHECK).repeats
    family = "repeats" if mode == "sequential" else "burst"
    item_id = f"repeats[{mode}]"
    try:
        ids = render_ids(oracle_gate, PROMPT)
        outs = complete_many(oracle_gate, [ids] * n, max_tokens=oracle_gate.options.max_tokens or MAX_TOKENS,
                             at_once=mode == "burst", top_k=oracle_gate.options.logprobs)
    except RequestFailed as exc:
        not_run(oracle_gate, item_id, family, str(exc))
        return
    s = summarize_repeats([o.completion_ids for o in outs], [o.finish_reason for o in outs])
    base = outs[s.baseline_index]
    finish_canary(oracle_gate, item_id, family, ok=repeats_ok(s),
                  result={"mode": mode, "expected": f"{n}/{n} identical", "extracted": f"{s.identical}/{n} identical",
                          "raw_text": base.text, "repeats": s.as_dict()},
                  detail=s.describe(), strict=oracle_gate.options.check(CANARY_CHECK).strict, completion=base)
