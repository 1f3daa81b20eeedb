"""Code-result canary: the model must state what small programs print (answers from running them).

Run with the gate: `pytest --backend=... [--code-set PATH] [--canary-strict]`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle.canary.kinds import CANARY_CHECK
from oracle.backends import RequestFailed
from oracle.canary.code import (ANSWER_PREFIX, CODE_SET, EXTRACTION_RULE, MAX_TOKENS, code_prompt, load_set,
                                  stale_items)
from oracle.canary.rejudge import code_answer, set_fresh
from oracle.canary.run import complete, finish_canary, not_run, render_ids
from oracle.gate.options import GateOptions, options_of


def _set_path(options: GateOptions | None) -> Path:
    return Path(options.check(CANARY_CHECK).code_set if options and options.check(CANARY_CHECK).code_set else CODE_SET)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "code_item" in metafunc.fixturenames:
        items = load_set(_set_path(options_of(metafunc.config)))
        metafunc.parametrize("code_item", items, ids=[i.id for i in items])


def test_code_set_fresh(oracle_gate) -> None:
    """Every stored answer still equals what its program prints (re-run in the sandbox)."""
    path = _set_path(oracle_gate.options)
    stale = stale_items(load_set(path))
    finish_canary(oracle_gate, "code-fresh", "code-fresh", ok=set_fresh(stale),
                  result={"set": str(path), "stale": stale},
                  detail=f"{len(stale)} stale item(s) in {path}" if stale else f"every stored answer in {path.name} is fresh",
                  lines=stale, strict=True)


def test_code(oracle_gate, code_item) -> None:
    item_id = f"code[{code_item.id}]"
    try:
        ids = render_ids(oracle_gate, code_prompt(code_item), suffix=ANSWER_PREFIX)
        c = complete(oracle_gate, ids, max_tokens=MAX_TOKENS, top_k=oracle_gate.options.logprobs)
    except RequestFailed as exc:
        not_run(oracle_gate, item_id, "code", str(exc))
        return
    ok, s = code_answer(c.text, code_item.expected)  # the rule the ledger's audit re-derives ok by
    finish_canary(oracle_gate, item_id, "code", ok=ok,
                  result={"level": code_item.level, "expected": code_item.expected, "extracted": s.extracted,
                          "raw_text": c.text, "answer": s.verdict, "reason": s.reason, "rule": EXTRACTION_RULE,
                          "completion_ids": c.completion_ids},
                  detail=f"{s.verdict}: {s.reason}; text {c.text[:80]!r}",
                  strict=oracle_gate.options.check(CANARY_CHECK).strict, completion=c)
