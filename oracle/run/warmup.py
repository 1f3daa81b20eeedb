"""The warm-up: throwaway requests of one fixed prompt outside the suite, sent before the c1 run so that the
first timed request does not pay for lazy initialisation (graph capture, kernel compilation, page faults).

Their tokens are never compared and their times never enter the speed card; the report shows what was sent.
A failed warm-up request stops the run like any other (never retried).

    row = warm_up(backend, prompts, requests=1, logprobs=5, seed=1234)   # the report's `warmup`
"""

from __future__ import annotations

from oracle.run.prompting import RenderedPrompt, render_text
from oracle.run.runner import run_waves
from oracle.run.suite import Prompt
from oracle.store.records import Condition

__all__ = ["WARMUP_CONDITION", "WARMUP_MESSAGES", "WARMUP_TOKENS", "warm_up", "warmup_prompt"]

WARMUP_MESSAGES = ({"role": "user", "content": "Warm-up request, not part of the suite: list the days of the week, "
                                               "one per line, each with one sentence about it."},)
WARMUP_TOKENS = 64
WARMUP_CONDITION = Condition(boot=0)  # boot0-c1: never a condition of the suite, never saved


def warmup_prompt(prompts) -> RenderedPrompt:
    """The warm-up prompt rendered with the server's chat template, as the suite is."""
    prompt = Prompt(id="warmup", klass="warmup", messages=WARMUP_MESSAGES, max_tokens=WARMUP_TOKENS)
    text = render_text(prompts.template, list(WARMUP_MESSAGES), prompts.backend.special_tokens())
    return RenderedPrompt(prompt=prompt, text=text, ids=tuple(prompts.tokenize(text)))


def warm_up(backend, prompts, *, requests: int, logprobs: int, seed: int) -> dict:
    """Send the warm-up prompt `requests` times, one after another; the report's row (RunInterrupted on failure)."""
    if requests == 0:
        return {"requests": 0, "note": "no warm-up (--warmup 0): the first timed request may include "
                                       "the server's lazy initialisation"}
    p = warmup_prompt(prompts)
    result = run_waves(backend, [[(p, i)] for i in range(requests)], WARMUP_CONDITION, logprobs=logprobs, seed=seed)
    return {"requests": requests, "prompt": WARMUP_MESSAGES[0]["content"], "prompt_tokens": len(p.ids),
            "max_tokens": WARMUP_TOKENS, "completion_tokens": [len(r.completion_ids) for r in result.records],
            "ttft_s": [round(r.ttft_s, 4) if r.ttft_s is not None else None for r in result.records],
            "wall_s": round(result.wall_s, 3)}
