"""Pure comparison of the returned logprobs of two records whose tokens are equal, exactly, as the float32 values
the records keep (`--oracle-compare logprobs`): arrays in, a result dataclass out, never asserts.

    moved = compare_logprobs(TokenSide.of(c1_record), TokenSide.of(record))
    moved.equal          # False: some logprob differs, even by one float32 ulp
    moved.describe()     # "logprobs moved at 3 of 160 values; largest 5.96e-08 nats at token 4 (id 281)"

Each position's chosen-token logprob and every top-k (token id, logprob) pair are compared (the first k of each,
k the smaller of the two sides' top-k there); a top-k id that one side returned and the other did not counts as
moved (its difference is infinite: no number to compare). Positions
where neither side returned logprobs are not compared (`compared` counts the values that were).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

__all__ = ["LogprobComparison", "LogprobSide", "compare_logprobs"]


@dataclass(frozen=True)
class LogprobSide:
    """What a logprob comparison reads of a record (`TokenSide` has these fields)."""

    completion_ids: Sequence[int]
    logprobs: Sequence[float] = ()
    top_ids: Sequence[Sequence[int]] = ()
    top_logprobs: Sequence[Sequence[float]] = ()


@dataclass(frozen=True)
class LogprobComparison:
    equal: bool
    compared: int  # logprob values compared (chosen tokens' and top-k)
    moved: int  # of them, those that differ
    max_difference: float | None = None  # |reference - candidate| in nats, as float32 values (inf: id missing)
    position: int | None = None  # the completion position of the largest difference
    token: int | None = None  # the token id whose logprob moved most there
    reference_value: float | None = None
    candidate_value: float | None = None

    def describe(self) -> str:
        if self.equal:
            return f"{self.compared} logprobs bit-identical"
        size = ("a top-k token returned by one side only" if self.max_difference == math.inf
                else f"largest {self.max_difference:.3g} nats ({self.reference_value!r} -> {self.candidate_value!r})")
        return (f"logprobs moved at {self.moved} of {self.compared} values; {size} at token {self.position} "
                f"(id {self.token})")

    def as_json(self) -> dict:
        out = asdict(self)
        if out["max_difference"] == math.inf:
            out["max_difference"] = "inf"  # JSON has no infinity
        return out


def _f32(value) -> np.float32:
    return np.float32(value)


def _top_k(side, i: int) -> int:
    return len(side.top_ids[i]) if i < len(side.top_ids) else 0


def _pairs(side, i: int, k: int) -> dict[int, np.float32]:
    """Position i's logprobs by token id: its first k top-k entries, and its chosen token's."""
    out = {}
    if i < len(side.top_ids):
        out = {int(t): _f32(lp) for t, lp in list(zip(side.top_ids[i], side.top_logprobs[i]))[:k]
               if not math.isinf(lp)}
    if i < len(side.logprobs) and i < len(side.completion_ids):
        out[int(side.completion_ids[i])] = _f32(side.logprobs[i])
    return out


def compare_logprobs(reference, candidate) -> LogprobComparison:
    """Every logprob both records returned at each common position, compared as float32 (bit for bit)."""
    n = min(len(reference.completion_ids), len(candidate.completion_ids))
    compared = moved = 0
    worst: tuple[float, int, int, float | None, float | None] | None = None
    for i in range(n):
        k = min(_top_k(reference, i), _top_k(candidate, i))  # a reference kept with a larger --logprobs
        ref, cand = _pairs(reference, i, k), _pairs(candidate, i, k)
        if not ref or not cand:  # a side returned none here: nothing to compare
            continue
        for token in sorted(ref.keys() | cand.keys()):
            a, b = ref.get(token), cand.get(token)
            compared += 1
            if a is not None and b is not None and a == b:
                continue
            moved += 1
            diff = math.inf if a is None or b is None else abs(float(a) - float(b))
            if worst is None or diff > worst[0]:
                worst = (diff, i, token, None if a is None else float(a), None if b is None else float(b))
    if worst is None:
        return LogprobComparison(True, compared, 0)
    diff, position, token, a, b = worst
    return LogprobComparison(False, compared, moved, diff, position, token, a, b)
