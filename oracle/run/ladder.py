"""Concurrency ladder: which requests a level sends, and in which waves.

Level 1 repeats the suite one request at a time in the same boot (run-to-run determinism).
Level c >= 2 sends waves of c requests at once, one connection each: `cycle` walks the
suite's prompts round-robin until every prompt was sent and the last wave is full
(c * ceil(n / c) requests); `same` sends c copies of the first prompt in one wave.

Arrivals (`--ladder-arrivals`): `at-once` sends a wave's requests together; `staggered` sends the wave's first
request alone and the others while it decodes, so that their prefills run beside its decode (the mixed-batch
condition): the second once its first token is due (1.5 x its c1 time to first token, + 20 ms), the rest spread
evenly over the first half of its c1 decode time, so the whole wave still overlaps.

    ladder_waves(prompts, 8, "cycle")  # [[(p0, 0), ..., (p7, 7)], [(p8, 8), ..., (p3, 15)]] for 12 prompts
"""

from __future__ import annotations

from math import ceil
from typing import Sequence

from oracle.run.prompting import RenderedPrompt
from oracle.store.records import REPEAT, Condition, Record
from oracle.run.runner import one_at_a_time

__all__ = ["ARRIVALS", "ladder_condition", "ladder_waves", "staggered_offsets"]

ARRIVALS = ("at-once", "staggered")
_FIRST_TOKEN_MARGIN, _FIRST_TOKEN_SLACK_S = 1.5, 0.02


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


def staggered_offsets(waves: Sequence[Sequence[tuple[RenderedPrompt, int]]], c1: dict[str, Record]
                      ) -> list[list[float]]:
    """Seconds after each wave's start at which each of its requests is sent (see the module's docstring), from
    the wave's first prompt's c1 record on this server."""
    out = []
    for wave in waves:
        first = c1.get(wave[0][0].id) if wave else None
        times = first.token_times_s if first is not None else []
        ttft = times[0] if times else 0.0
        decode = times[-1] - times[0] if len(times) > 1 else 0.0
        start = _FIRST_TOKEN_MARGIN * ttft + _FIRST_TOKEN_SLACK_S
        step = decode / (2 * max(len(wave) - 1, 1))
        out.append([0.0] + [start + k * step for k in range(len(wave) - 1)])
    return out
