"""Logit statistics with llama.cpp's names (`llama-perplexity --kl-divergence`), from top-k logprobs; beside them
the logit cosine (centered, over the ids both sides hold: the full vocabulary when both give it, --logprobs >= the
vocabulary, as python runners and hf can) and, where both sides kept each row's logit shift (raw logit = logprob +
shift: backends that hold raw logits and gave the whole vocabulary), the raw logit cosine over the whole vocabulary.

    position = compare_position(ref_ids, ref_logprobs, cand_ids, cand_logprobs, reference_token=t)
    stats = summarize([position, ...])   # Mean KLD ± uncertainty, percentiles, Same top p, delta-p, ...

Servers return only the top k logprobs of each position (normalized over the full vocabulary).
KLD(reference || candidate) is taken over the tokens present in both top-k sets, with the rest of
each distribution lumped into one tail bucket. Both sides are coarse-grained onto the same
buckets, so by the log-sum inequality the figure can only be lower than the full-vocabulary KLD:
it is a lower bound, equal to the true value when k covers the vocabulary.
Pure numpy: arrays in, numbers out, never asserts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["KLD_PERCENTILES", "PositionLogits", "centered_cosine", "compare_position", "raw_cosine",
           "same_top1_uncertainty", "summarize", "top_k_kld"]

# llama.cpp prints these (Maximum, 99.9%, 99.0%, 95.0%, 90.0%, Median, 10.0%, 5.0%, 1.0%); we keep its order.
KLD_PERCENTILES = (("max", 100.0), ("p99.9", 99.9), ("p99", 99.0), ("p95", 95.0), ("p90", 90.0),
                   ("median", 50.0), ("p10", 10.0), ("p5", 5.0), ("p1", 1.0))

_TAIL_EPS = 1e-9  # below this a tail bucket is empty (rounding of 1 - sum of the top-k)
_FLOOR = 1e-30  # a candidate tail that rounds to zero: finite and very large, not infinite


def top_k_kld(ref_ids: Sequence[int], ref_logprobs: Sequence[float], cand_ids: Sequence[int],
              cand_logprobs: Sequence[float]) -> float:
    """KL(reference || candidate) over the shared top-k tokens plus one tail bucket (a lower bound)."""
    ref = dict(zip(map(int, ref_ids), map(float, ref_logprobs)))
    cand = dict(zip(map(int, cand_ids), map(float, cand_logprobs)))
    shared = [t for t in ref if t in cand]
    lp = np.array([ref[t] for t in shared], dtype=np.float64)
    lq = np.array([cand[t] for t in shared], dtype=np.float64)
    p = np.exp(lp)
    kl = float(np.sum(p * (lp - lq))) if shared else 0.0
    p_tail = 1.0 - float(p.sum())
    q_tail = 1.0 - float(np.exp(lq).sum())
    if p_tail > _TAIL_EPS:
        kl += p_tail * (math.log(p_tail) - math.log(max(q_tail, _FLOOR)))
    return max(kl, 0.0)  # rounding can leave -1e-9; KL is never negative


@dataclass(frozen=True)
class PositionLogits:
    """One completion position compared along the reference's path."""

    position: int
    reference_token: int
    kld: float
    same_top1: bool
    p_reference: float  # reference's probability of its own token
    p_candidate: float | None  # candidate's probability of the reference token (None: outside its top-k)
    logprob_cosine: float | None  # over the shared top-k (None: fewer than one shared token)
    candidate_top1: int
    logit_cosine: float | None = None  # centered, over the shared top-k (None: fewer than two shared tokens)
    shared: int = 0  # ids in both top-k: the whole vocabulary when both sides give it
    logit_cosine_raw: float | None = None  # the raw logits' cosine (None: a side has no logit shift)

    @property
    def delta_p(self) -> float:
        """p_candidate(ref token) - p_reference(ref token); a token outside the candidate's top-k counts as 0."""
        return (self.p_candidate or 0.0) - self.p_reference

    def as_json(self) -> dict:
        return {"position": self.position, "reference_token": self.reference_token, "kld": self.kld,
                "same_top1": self.same_top1, "p_reference": self.p_reference, "p_candidate": self.p_candidate,
                "delta_p": self.delta_p, "candidate_top1": self.candidate_top1}


def compare_position(position: int, ref_ids: Sequence[int], ref_logprobs: Sequence[float], cand_ids: Sequence[int],
                     cand_logprobs: Sequence[float], *, reference_token: int, reference_shift: float | None = None,
                     candidate_shift: float | None = None) -> PositionLogits:
    """Both sides' top-k at one position of the reference path (the candidate teacher-forced onto it); with both
    sides' logit shifts, the raw logits' cosine (raw = logprob + shift) over the ids both hold."""
    ref = dict(zip(map(int, ref_ids), map(float, ref_logprobs)))
    cand = dict(zip(map(int, cand_ids), map(float, cand_logprobs)))
    ref_top1 = max(ref, key=ref.get)
    cand_top1 = max(cand, key=cand.get)
    shared = [t for t in ref if t in cand]
    cosine = logit_cosine = raw = None
    if shared:
        a = np.array([ref[t] for t in shared])
        b = np.array([cand[t] for t in shared])
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        cosine = float(a @ b / norm) if norm > 0 else 1.0
        logit_cosine = centered_cosine(a, b) if len(shared) > 1 else None
        if reference_shift is not None and candidate_shift is not None:
            raw = raw_cosine(a + reference_shift, b + candidate_shift)
    p_ref = math.exp(ref[reference_token]) if reference_token in ref else 0.0
    p_cand = math.exp(cand[reference_token]) if reference_token in cand else None
    return PositionLogits(position=position, reference_token=int(reference_token),
                          kld=top_k_kld(ref_ids, ref_logprobs, cand_ids, cand_logprobs),
                          same_top1=ref_top1 == cand_top1, p_reference=p_ref, p_candidate=p_cand,
                          logprob_cosine=cosine, candidate_top1=int(cand_top1), logit_cosine=logit_cosine,
                          shared=len(shared), logit_cosine_raw=raw)


def raw_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The plain cosine of two raw logit vectors (the field's "logit cosine"): not shift-invariant, so it needs the
    raw logits themselves, not only the logprobs."""
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / norm) if norm > 0 else float(np.array_equal(a, b))


def centered_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The cosine of two logit vectors with each one's mean taken out: a logprob row is its logit row shifted by the
    log-partition, so logprobs give the same figure as the logits they came from (1.0 for equal rows)."""
    a, b = a - a.mean(), b - b.mean()
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / norm) if norm > 0 else float(np.array_equal(a, b))


def same_top1_uncertainty(p: float, n: int) -> float:
    """llama.cpp's standard error of "Same top p": sqrt(p (1 - p) / (n - 1))."""
    return math.sqrt(p * (1.0 - p) / (n - 1)) if n > 1 else float("nan")


def _mean_uncertainty(x: np.ndarray) -> float:
    """llama.cpp's uncertainty of a mean: sqrt((<x^2> - <x>^2) / (n - 1))."""
    n = len(x)
    if n < 2:
        return float("nan")
    var = float(np.mean(x * x) - np.mean(x) ** 2)
    return math.sqrt(max(var, 0.0) / (n - 1))


def summarize(positions: Sequence[PositionLogits], *, reference_logprobs: Sequence[float] = ()) -> dict:
    """llama.cpp's figures over these positions: Mean KLD ± uncertainty and percentiles, Same top p ±,
    mean and RMS delta-p, logprob cosine, mean log-prob of the reference tokens on both sides."""
    n = len(positions)
    if n == 0:
        return {"positions": 0}
    kld = np.array([p.kld for p in positions])
    dp = np.array([p.delta_p for p in positions])
    same = sum(p.same_top1 for p in positions) / n
    cosines = [p.logprob_cosine for p in positions if p.logprob_cosine is not None]
    logit_cosines = [p.logit_cosine for p in positions if p.logit_cosine is not None]
    raw = [p.logit_cosine_raw for p in positions if p.logit_cosine_raw is not None]
    cand_lp = [math.log(p.p_candidate) for p in positions if p.p_candidate]
    ref_lp = list(reference_logprobs) or [math.log(p.p_reference) for p in positions if p.p_reference > 0]
    return {
        "positions": n,
        "mean_kld": float(kld.mean()),
        "mean_kld_uncertainty": _mean_uncertainty(kld),
        "kld_percentiles": {name: float(np.percentile(kld, q)) for name, q in KLD_PERCENTILES} | {
            "min": float(kld.min())},
        "same_top1": same,
        "same_top1_uncertainty": same_top1_uncertainty(same, n),
        "mean_delta_p": float(dp.mean()),
        "mean_delta_p_uncertainty": _mean_uncertainty(dp),
        "rms_delta_p": float(np.sqrt(np.mean(dp * dp))),
        "delta_p_percentiles": {name: float(np.percentile(dp, q)) for name, q in
                                (("max", 100.0), ("p99", 99.0), ("p95", 95.0), ("median", 50.0), ("p5", 5.0),
                                 ("p1", 1.0))} | {"min": float(dp.min())},
        "logprob_cosine": float(np.mean(cosines)) if cosines else None,
        "logprob_cosine_min": float(np.min(cosines)) if cosines else None,
        "logit_cosine": float(np.mean(logit_cosines)) if logit_cosines else None,
        "logit_cosine_min": float(np.min(logit_cosines)) if logit_cosines else None,
        "logit_cosine_ids": min(p.shared for p in positions),  # fewest ids a position's cosine was taken over
        "logit_cosine_raw": float(np.mean(raw)) if raw else None,  # raw logits, where both sides kept the shift
        "logit_cosine_raw_min": float(np.min(raw)) if raw else None,
        "mean_logprob_reference": float(np.mean(ref_lp)) if ref_lp else None,
        "mean_logprob_candidate": float(np.mean(cand_lp)) if cand_lp else None,
        "reference_token_outside_candidate_top_k": sum(p.p_candidate is None for p in positions),
    }
