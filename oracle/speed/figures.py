"""Speed figures of one streamed request, from the arrival time of each generated token (seconds since the
request was sent; every token of one streamed piece carries the time that piece's bytes arrived).

    conventional_rate(times)   # 99 / (t100 - t1): the field's decode rate, None under 101 tokens
    prompt_figures(times)      # TTFT, conventional, after-TTFT, full-output and event-counting rates

The conventional rate counts tokens. A rate that counts stream events (100 events instead of 100 tokens)
is a different number under speculation (one event carries several tokens): it is kept apart, as
`event_rate`, and labelled wherever it is shown.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

__all__ = ["BYTES_ARRIVAL", "CONVENTIONAL_SPAN", "EVENT_RATE_LABEL", "MIN_TOKENS", "after_ttft_rate", "conventional_rate",
           "event_rate", "events", "full_output_rate", "prompt_figures", "spread"]

BYTES_ARRIVAL = "bytes-arrival"  # the clock of token times: taken when each streamed piece's bytes arrive
CONVENTIONAL_SPAN = 99  # intervals between generated tokens 1 and 100
MIN_TOKENS = 101  # a request that generated fewer is left out of the conventional rate
EVENT_RATE_LABEL = "event-counting rate (stream events, not tokens: one event can carry several tokens)"


def conventional_rate(times: Sequence[float]) -> float | None:
    """99 / (t100 - t1) in tokens/s, or None: fewer than 101 tokens, or tokens 1..100 arrived in one piece."""
    if len(times) < MIN_TOKENS:
        return None
    span = times[CONVENTIONAL_SPAN] - times[0]
    return CONVENTIONAL_SPAN / span if span > 0 else None


def after_ttft_rate(times: Sequence[float]) -> float | None:
    """(n - 1) / (t_n - t1): every token after the first, over the time after the first."""
    if len(times) < 2 or times[-1] <= times[0]:
        return None
    return (len(times) - 1) / (times[-1] - times[0])


def full_output_rate(times: Sequence[float]) -> float | None:
    """n / t_n: all tokens over the whole request (wall clock from sending to the last token)."""
    if not times or times[-1] <= 0:
        return None
    return len(times) / times[-1]


def events(times: Sequence[float]) -> list[float]:
    """The arrival time of each stream event (consecutive tokens with one time arrived in one piece)."""
    out: list[float] = []
    for t in times:
        if not out or t != out[-1]:
            out.append(t)
    return out


def event_rate(times: Sequence[float]) -> float | None:
    """99 / (e100 - e1) over stream events instead of tokens: the number an event-counting script reports."""
    return conventional_rate(events(times))


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, digits)


def prompt_figures(times: Sequence[float]) -> dict:
    """One request's row of the speed card."""
    return {"tokens": len(times), "ttft_s": _round(times[0], 4) if times else None,
            "conventional_tok_s": _round(conventional_rate(times)),
            "after_ttft_tok_s": _round(after_ttft_rate(times)),
            "full_output_tok_s": _round(full_output_rate(times)),
            "events": len(events(times)), "event_rate": _round(event_rate(times))}


def spread(values: Sequence[float]) -> dict | None:
    """median / p10 / mean / min / max over prompts, with the count; None for no values."""
    if not len(values):
        return None
    a = np.asarray(values, dtype=np.float64)
    return {"median": _round(float(np.median(a))), "p10": _round(float(np.percentile(a, 10))),
            "mean": _round(float(a.mean())), "min": _round(float(a.min())), "max": _round(float(a.max())),
            "prompts": int(a.size)}
