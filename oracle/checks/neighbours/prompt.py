"""The unrelated request sent beside a suite prompt: a prompt of exactly `length` token ids, made the same way
every run (a seeded draw from the ids the suite's own rendered prompts hold, so every id is one the server's
vocabulary has), with a few tokens to generate.

    neighbour = neighbour_prompt(9, prompts.rendered)   # RenderedPrompt "neighbour-9", 9 ids
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from oracle.run.prompting import RenderedPrompt
from oracle.run.suite import Prompt

__all__ = ["NEIGHBOUR_MAX_TOKENS", "neighbour_id", "neighbour_prompt"]

NEIGHBOUR_MAX_TOKENS = 8  # the neighbour's own answer: its prefill is what runs beside the prompt's decode


def neighbour_id(length: int) -> str:
    return f"neighbour-{length}"


def neighbour_prompt(length: int, rendered: Sequence[RenderedPrompt]) -> RenderedPrompt:
    """`length` ids drawn (seeded by the length) from the distinct ids of the suite's rendered prompts."""
    pool = sorted({i for p in rendered for i in p.ids})
    if not pool:
        raise ValueError("no rendered prompt to draw a neighbour's token ids from")
    draw = np.random.default_rng(length).integers(0, len(pool), size=length)
    ids = tuple(int(pool[k]) for k in draw)
    prompt = Prompt(id=neighbour_id(length), klass="neighbour", messages=(), max_tokens=NEIGHBOUR_MAX_TOKENS)
    return RenderedPrompt(prompt=prompt, text="", ids=ids)
