"""Pure comparison of token arrays: arrays in, a result dataclass out, never asserts.

    result = compare_tokens(reference, candidate, near_tie_nats=0.5)
    result.verdict  # "exact", "near-tie" or "divergent"

Near-tie follows the metric definition: at the first divergence, with a the reference's
token and b the candidate's, b must be in the reference's top-k with
logprob_ref(a) - logprob_ref(b) < epsilon, and where the candidate returned logprobs,
a must be in the candidate's top-k (vLLM's check_logprobs_close rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from oracle.backends.base import IDS_FROM_TEXT
from oracle.compare.verdicts import DIVERGENT, EXACT, NEAR_TIE

__all__ = ["OUTSIDE_REFERENCE_TOP_K", "SAMPLED_SPLIT", "TokenComparison", "TokenSide", "compare_tokens",
           "first_divergence"]


@dataclass(frozen=True)
class TokenSide:
    """The parts of a record that a token comparison reads."""

    completion_ids: Sequence[int]
    finish_reason: str
    logprobs: Sequence[float] = ()
    top_ids: Sequence[Sequence[int]] = ()
    top_logprobs: Sequence[Sequence[float]] = ()

    @classmethod
    def of(cls, record) -> "TokenSide":
        if record.ids_source == IDS_FROM_TEXT:
            # A server that returned no ids: its characters stand in for tokens (positions are characters),
            # so ladder and boot rows still compare something real; the report carries the downgrade note.
            return cls([ord(c) for c in record.text], record.finish_reason)
        return cls(record.completion_ids, record.finish_reason, record.logprobs,
                   record.top_ids, record.top_logprobs)

    def logprob_of(self, position: int, token: int) -> float | None:
        """This side's logprob of token at position, from its chosen token or its top-k."""
        if position < len(self.completion_ids) and self.completion_ids[position] == token \
                and position < len(self.logprobs):
            return float(self.logprobs[position])
        if position < len(self.top_ids):
            for tid, lp in zip(self.top_ids[position], self.top_logprobs[position]):
                if tid == token:
                    return float(lp)
        return None

    def has_logprobs_at(self, position: int) -> bool:
        return position < len(self.top_ids) and len(self.top_ids[position]) > 0


@dataclass(frozen=True)
class TokenComparison:
    verdict: str
    first_divergence: int | None  # None when the arrays are equal
    reference_length: int
    candidate_length: int
    reference_token: int | None = None
    candidate_token: int | None = None
    margin_nats: float | None = None  # logprob_ref(a) - logprob_ref(b)
    reason: str = ""

    @property
    def exact(self) -> bool:
        return self.verdict == EXACT

    @property
    def split_position(self) -> int:
        """Where the two stop agreeing: the first divergence, or the reference's end when only finish reasons differ."""
        return self.first_divergence if self.first_divergence is not None else self.reference_length


def first_divergence(a: Sequence[int], b: Sequence[int]) -> int | None:
    """Smallest index where the arrays differ, the shorter length if one is a prefix, None if equal."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return None if len(a) == len(b) else n


# Why a split has no margin: the candidate's token has no logprob in the reference's top-k (a confident flip).
OUTSIDE_REFERENCE_TOP_K = "the candidate's token is outside the reference's top-k"

# Under sampling a split is exact or divergent: a sampled token is a draw, not an argmax a small margin can excuse.
SAMPLED_SPLIT = "sampled with the same seed: near-tie classification does not apply under sampling"


def compare_tokens(reference: TokenSide, candidate: TokenSide, *, near_tie_nats: float = 0.5,
                   sampled: bool = False) -> TokenComparison:
    """sampled: both sides sampled with the same settings and seed; any split is divergent (no near-tie)."""
    ref, cand = list(reference.completion_ids), list(candidate.completion_ids)
    i = first_divergence(ref, cand)
    lengths = dict(reference_length=len(ref), candidate_length=len(cand))
    if i is None:
        if reference.finish_reason == candidate.finish_reason:
            return TokenComparison(EXACT, None, **lengths)
        return TokenComparison(DIVERGENT, None, **lengths,
                               reason=f"same tokens, finish reason {candidate.finish_reason!r} "
                                      f"instead of {reference.finish_reason!r}")
    if i >= len(ref) or i >= len(cand):
        longer = "candidate" if len(cand) > len(ref) else "reference"
        return TokenComparison(DIVERGENT, i, **lengths,
                               reference_token=ref[i] if i < len(ref) else None,
                               candidate_token=cand[i] if i < len(cand) else None,
                               reason=f"the {longer} continued past the other's end "
                                      f"(finish {reference.finish_reason!r} vs {candidate.finish_reason!r})")
    a, b = ref[i], cand[i]
    if sampled:
        return TokenComparison(DIVERGENT, i, **lengths, reference_token=a, candidate_token=b, reason=SAMPLED_SPLIT)
    lp_a = reference.logprob_of(i, a)
    lp_b = reference.logprob_of(i, b)
    common = dict(reference_token=a, candidate_token=b)
    if lp_a is None or lp_b is None:
        why = ("the reference has no logprobs at the split" if lp_a is None
               else "the candidate's token is outside the reference's top-k")
        return TokenComparison(DIVERGENT, i, **lengths, **common, reason=why)
    margin = lp_a - lp_b
    if margin >= near_tie_nats:
        return TokenComparison(DIVERGENT, i, **lengths, **common, margin_nats=margin,
                               reason=f"margin {margin:.3f} nats >= {near_tie_nats} nats")
    if candidate.has_logprobs_at(i) and candidate.logprob_of(i, a) is None:
        return TokenComparison(DIVERGENT, i, **lengths, **common, margin_nats=margin,
                               reason="the reference's token is outside the candidate's top-k")
    return TokenComparison(NEAR_TIE, i, **lengths, **common, margin_nats=margin,
                           reason=f"margin {margin:.3f} nats < {near_tie_nats} nats")
