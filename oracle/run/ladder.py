"""Concurrency ladder: which requests a level sends, and in which waves.

Level 1 repeats the suite one request at a time in the same boot (run-to-run determinism).
Level c >= 2 sends waves of c requests at once, one connection each: `cycle` walks the
suite's prompts round-robin until every prompt was sent and the last wave is full
(c * ceil(n / c) requests); `same` sends c copies of the first prompt in one wave.

Arrivals (`--ladder-arrivals`): `at-once` sends a wave's requests together; `staggered` sends the wave's first
request alone and each next one the moment the one before it has streamed its first token (`run/runner.py`), so
that its prefill runs while the earlier requests decode (the mixed-batch condition), and the wave still overlaps.

    ladder_waves(prompts, 8, "cycle")  # [[(p0, 0), ..., (p7, 7)], [(p8, 8), ..., (p3, 15)]] for 12 prompts
"""

from __future__ import annotations

from math import ceil
from typing import Sequence

from oracle.run.prompting import RenderedPrompt
from oracle.store.records import REPEAT, Condition
from oracle.run.runner import one_at_a_time

__all__ = ["ladder_condition", "ladder_waves"]


def ladder_condition(level: int) -> Condition:
    """c1 is the repeat of the primary run (boot1-c1-r2); other levels are boot1-c<level>."""
    return REPEAT if level == 1 else Condition(boot=1, concurrency=level)


def ladder_waves(prompts: Sequence[RenderedPrompt], level: int, mode: str) -> list[list[tuple[RenderedPrompt, int]]]:
    if not prompts:
        return []
    if level == 1:
        return one_at_a_time(prompts)
    if mode == "same":
        return [[(prompts[0], i) for i in range(level)]]
    total = level * ceil(len(prompts) / level)
    requests = [(prompts[i % len(prompts)], i) for i in range(total)]
    return [requests[k:k + level] for k in range(0, total, level)]

