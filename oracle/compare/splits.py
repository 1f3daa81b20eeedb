"""A split, described for people: decoded text around the first divergence and the top-k there."""

from __future__ import annotations

from typing import Callable

from oracle.compare.tokens import TokenComparison
from oracle.store.records import Record

__all__ = ["describe_split", "split_view"]

CONTEXT_TOKENS = 12
TOP_SHOWN = 5


def _top(record: Record, i: int, decode: Callable[[list[int]], str]) -> str:
    if i >= len(record.top_ids) or not record.top_ids[i]:
        return "no logprobs"
    pairs = list(zip(record.top_ids[i], record.top_logprobs[i]))[:TOP_SHOWN]
    return ", ".join(f"{decode([t])!r}#{t} {lp:.3f}" for t, lp in pairs)


def describe_split(reference: Record, candidate: Record, result: TokenComparison,
                   decode: Callable[[list[int]], str]) -> list[str]:
    """At most about ten lines: the shared text before the split and both continuations."""
    i = result.first_divergence
    if i is None:
        return [f"finish reason: reference {reference.finish_reason!r}, candidate {candidate.finish_reason!r}"]
    lo = max(0, i - CONTEXT_TOKENS)
    before = decode(reference.completion_ids[lo:i]) if i > lo else ""
    ref_after = decode(reference.completion_ids[i:i + CONTEXT_TOKENS])
    cand_after = decode(candidate.completion_ids[i:i + CONTEXT_TOKENS])
    lines = [
        f"tokens: reference {len(reference.completion_ids)} (finish {reference.finish_reason}), "
        f"candidate {len(candidate.completion_ids)} (finish {candidate.finish_reason})",
        f"shared text before token {i}: {before!r}",
        f"reference continues: {ref_after!r}",
        f"candidate continues: {cand_after!r}",
    ]
    if result.margin_nats is not None:
        lines.append(f"reference margin at the split: {result.margin_nats:.4f} nats "
                     f"(its token #{result.reference_token} vs the candidate's #{result.candidate_token})")
    if i < len(reference.completion_ids):
        lines.append(f"reference top-{TOP_SHOWN} at {i}: {_top(reference, i, decode)}")
    if i < len(candidate.completion_ids):
        lines.append(f"candidate top-{TOP_SHOWN} at {i}: {_top(candidate, i, decode)}")
    return lines


def split_view(reference: Record, candidate: Record, position: int | None, decode: Callable[[list[int]], str],
               *, window: int = CONTEXT_TOKENS, top: int = TOP_SHOWN) -> dict:
    """The split as data for the HTML viewer: shared text, both continuations (ids and text), top-k at the split."""
    if position is None:
        return {"position": None, "reference": {"finish": reference.finish_reason},
                "candidate": {"finish": candidate.finish_reason}}
    lo = max(0, position - window)

    def side(record: Record) -> dict:
        ids = record.completion_ids[position:position + window]
        tops = []
        if position < len(record.top_ids):
            tops = [[t, round(lp, 4), decode([t])] for t, lp in zip(record.top_ids[position][:top],
                                                                     record.top_logprobs[position][:top])]
        return {"ids": ids, "text": decode(ids) if ids else "", "top": tops, "finish": record.finish_reason,
                "length": len(record.completion_ids)}

    shared = reference.completion_ids[lo:position]
    return {"position": position, "shared_ids": shared, "shared_text": decode(shared) if shared else "",
            "reference": side(reference), "candidate": side(candidate)}
