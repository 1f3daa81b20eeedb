"""Which evidence a server gave, per family: token ids or text, logprobs, cached-token counts, counters.

The report says it beside the verdicts, so that a gate through a server that offers less (an
OpenAI-compatible server with no ids, no per-request cache field, no /metrics) reads as what it is.
"""

from __future__ import annotations

import math
from typing import Sequence

from oracle.backends import Counters
from oracle.backends.base import IDS_FROM_TEXT, TEXT_DOWNGRADE
from oracle.store.records import Record

__all__ = ["evidence_sources"]

def evidence_sources(records: Sequence[Record], delta: Counters | None, family: str) -> dict:
    positions = sum(len(r.completion_ids) for r in records)
    text_only = [r.id for r in records if r.ids_source == IDS_FROM_TEXT]
    with_top = sum(1 for r in records for t in r.top_ids if t)
    with_chosen = sum(1 for r in records for v in r.logprobs if not math.isnan(v))
    cached = sum(r.cached_prompt_tokens is not None for r in records)
    counters = sorted(k for k, v in (delta.as_dict() if delta else {}).items() if v is not None)
    out = {
        "family": family,
        "token_ids": (f"none for {len(text_only)} of {len(records)} requests: text compared"
                      if text_only else "returned by the server"),
        "logprobs": f"chosen token at {with_chosen}, top-k at {with_top} of {positions} positions",
        "cached_tokens": f"per request in {cached} of {len(records)} requests" if cached else "absent",
        "counters": counters or "none (/metrics absent or without known counters)",
    }
    if text_only:
        out["downgrade"] = f"{TEXT_DOWNGRADE} ({', '.join(text_only[:5])}{', ...' if len(text_only) > 5 else ''})"
    return out
