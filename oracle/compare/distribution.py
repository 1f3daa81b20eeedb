"""The sampled distribution check: are the candidate's sampled tokens as likely under the reference model as the
reference's own samples? Pure numpy: scored sequences in, a `DistributionResult` out.

    result = distribution_check(reference_scored, candidate_scored, max_shift=0.1)
    result.verdict        # "consistent", "shifted" or "insufficient"

Each sequence (one prompt, one seed) is scored under the reference model: every token's log-likelihood and its
rank in the reference's top-k. Tokens of one sequence depend on each other, so the unit is the sequence: two tests
permute whole sequences between the two sides (exactly when the assignments are few, else a seeded random
sample). (1) the difference of the mean per-token log-likelihood (each sequence's mean, sequences weighted
equally); (2) the chi-square statistic of the rank histogram (tokens at rank 1, 2, 3-5, 6-k, beyond k), its
null distribution from the same permutations rather than the chi-square table. Each test runs at alpha/2
(Bonferroni), so the check's false-positive rate stays at or below alpha. The power statement is the shift of
mean log-likelihood this many sequences detect with 80% power at that level: (z(1-alpha/4) + z(0.8)) *
s * sqrt(1/n_ref + 1/n_cand), s the pooled standard deviation of the per-sequence means (normal approximation).
docs/sampling.md writes the statistics out.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import comb, inf, sqrt
from statistics import NormalDist
from typing import Sequence

import numpy as np

from oracle.compare.verdicts import CONSISTENT, INSUFFICIENT, SHIFTED

__all__ = ["ALPHA", "POWER", "TESTS", "DistributionResult", "ScoredSequence", "detectable_shift",
           "distribution_check", "distribution_verdict", "permutation_pvalues", "rank_bins", "rank_histogram"]

ALPHA, POWER = 0.05, 0.80
ROUNDS = 9999  # random permutations when the exact assignments are more; the exact set otherwise
TESTS = 2  # mean log-likelihood and rank histogram: Bonferroni over both


@dataclass(frozen=True)
class ScoredSequence:
    """One sampled completion scored under the reference model: per token its logprob and its 0-based rank in the
    reference's top-k (-1: outside it)."""

    record: str
    logprobs: tuple[float, ...]
    ranks: tuple[int, ...]

    @property
    def mean_loglik(self) -> float:
        return float(np.mean(self.logprobs)) if self.logprobs else 0.0


def rank_bins(top_k: int) -> list[tuple[str, int, int]]:
    """(label, lowest rank, highest rank) per histogram bin, 0-based; the last bin is "beyond k" (-1)."""
    edges = [("1", 0, 0), ("2", 1, 1), ("3-5", 2, 4), (f"6-{top_k}", 5, top_k - 1)]
    return [(label, lo, min(hi, top_k - 1)) for label, lo, hi in edges if lo < top_k] + [(f">{top_k}", -1, -1)]


def rank_histogram(ranks: Sequence[int], top_k: int) -> np.ndarray:
    r = np.asarray(ranks, dtype=int)
    return np.array([int(np.sum((r >= lo) & (r <= hi))) for _, lo, hi in rank_bins(top_k)], dtype=float)


def _chi_square(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson's chi-square of 2 x B tables, rows a and b (... x B), empty columns left out."""
    total = a + b
    n_a, n_b = a.sum(-1, keepdims=True), b.sum(-1, keepdims=True)
    n = n_a + n_b
    with np.errstate(divide="ignore", invalid="ignore"):
        e_a, e_b = total * n_a / n, total * n_b / n
        terms = np.where(total > 0, (a - e_a) ** 2 / e_a + (b - e_b) ** 2 / e_b, 0.0)
    return np.nan_to_num(terms).sum(-1)


def _assignments(n: int, n_ref: int, rounds: int, seed: int) -> tuple[np.ndarray, bool]:
    """Index rows: which sequences the reference side gets, every assignment (exact) or `rounds` random ones."""
    if comb(n, n_ref) <= rounds + 1:
        return np.array(list(itertools.combinations(range(n), n_ref)), dtype=int), True
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((rounds, n)), axis=1)[:, :n_ref], False


def permutation_pvalues(means: np.ndarray, hists: np.ndarray, n_ref: int, *, rounds: int = ROUNDS,
                        seed: int = 0) -> tuple[float, float, str]:
    """(p of the mean difference, two-sided; p of the rank chi-square; how) permuting whole sequences. The first
    n_ref rows are the reference's. Exact: the share of all assignments at least as extreme (the observed one
    among them); random: (1 + extreme) / (1 + rounds)."""
    n = len(means)
    n_cand = n - n_ref
    sum_all, hist_all = means.sum(), hists.sum(0)
    observed_diff = means[n_ref:].mean() - means[:n_ref].mean()
    observed_chi = _chi_square(hists[:n_ref].sum(0), hists[n_ref:].sum(0))
    rows, exact = _assignments(n, n_ref, rounds, seed)
    ref_sums = means[rows].sum(1)
    diffs = (sum_all - ref_sums) / n_cand - ref_sums / n_ref
    ref_hists = hists[rows].sum(1)
    chis = _chi_square(ref_hists, hist_all - ref_hists)
    tol = 1e-12 * max(1.0, abs(observed_diff))
    extreme_diff = int(np.sum(np.abs(diffs) >= abs(observed_diff) - tol))
    extreme_chi = int(np.sum(chis >= observed_chi - 1e-9 * max(1.0, observed_chi)))
    if exact:
        return extreme_diff / len(rows), extreme_chi / len(rows), f"exact, all {len(rows)} assignments"
    return ((1 + extreme_diff) / (1 + rounds), (1 + extreme_chi) / (1 + rounds),
            f"{rounds} random assignments (seed {seed})")


def detectable_shift(reference_means: Sequence[float], candidate_means: Sequence[float], *, alpha: float,
                     power: float = POWER) -> tuple[float, float]:
    """(the shift of mean log-likelihood detected with `power` at two-sided level `alpha`, the pooled SD of the
    per-sequence means); inf when fewer than 3 sequences leave no spread, or when no assignment of this many
    sequences can reach the level (the smallest exact p-value above alpha)."""
    a, b = np.asarray(reference_means, float), np.asarray(candidate_means, float)
    n_a, n_b = len(a), len(b)
    if n_a < 2 or n_b < 1 or n_a + n_b < 3:
        return inf, inf
    pooled = ((n_a - 1) * a.var(ddof=1) + (n_b - 1) * (b.var(ddof=1) if n_b > 1 else 0.0)) / (n_a + n_b - 2)
    s = sqrt(pooled)
    smallest_p = (2 if n_a == n_b else 1) / comb(n_a + n_b, n_a)
    if smallest_p > alpha:
        return inf, s
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return z * s * sqrt(1 / n_a + 1 / n_b), s


@dataclass(frozen=True)
class DistributionResult:
    verdict: str
    effect: float  # candidate - reference mean per-token log-likelihood, nats/token (negative: less likely)
    effect_size: float  # effect / pooled SD of the per-sequence means (Cohen's d)
    p_loglik: float
    p_ranks: float
    permutations: str
    detectable: float  # nats/token, 80% power at alpha / TESTS
    pooled_sd: float
    max_shift: float
    alpha: float
    reference_mean: float
    candidate_mean: float
    sequences: tuple[int, int]
    tokens: tuple[int, int]
    bins: tuple[str, ...]
    reference_ranks: tuple[int, ...]
    candidate_ranks: tuple[int, ...]

    def as_json(self) -> dict:
        def r(x: float) -> float | None:
            return None if x == inf or x != x else round(x, 6)

        return {"verdict": self.verdict, "effect_nats_per_token": r(self.effect), "effect_size_d": r(self.effect_size),
                "p_value_loglik": r(self.p_loglik), "p_value_ranks": r(self.p_ranks), "permutations": self.permutations,
                "alpha": self.alpha, "per_test_alpha": self.alpha / TESTS, "power": POWER,
                "detectable_shift": r(self.detectable), "pooled_sd": r(self.pooled_sd), "max_shift": self.max_shift,
                "mean_loglik": {"reference": r(self.reference_mean), "candidate": r(self.candidate_mean)},
                "sequences": {"reference": self.sequences[0], "candidate": self.sequences[1]},
                "tokens": {"reference": self.tokens[0], "candidate": self.tokens[1]},
                "rank_histogram": {"bins": list(self.bins), "reference": list(self.reference_ranks),
                                   "candidate": list(self.candidate_ranks)}}


def distribution_verdict(p_loglik: float, p_ranks: float, detectable: float, *, max_shift: float,
                         alpha: float = ALPHA) -> str:
    """shifted: either test rejects at alpha / TESTS; else insufficient when the run cannot detect `max_shift` with
    80% power; else consistent (the ledger's audit re-derives a stored verdict by it too)."""
    if min(p_loglik, p_ranks) < alpha / TESTS:
        return SHIFTED
    if detectable > max_shift:
        return INSUFFICIENT
    return CONSISTENT


def distribution_check(reference: Sequence[ScoredSequence], candidate: Sequence[ScoredSequence], *,
                       max_shift: float, top_k: int, alpha: float = ALPHA, rounds: int = ROUNDS,
                       seed: int = 0) -> DistributionResult:
    """shifted: either test rejects at alpha / 2; else insufficient when the run cannot detect `max_shift` with 80%
    power; else consistent."""
    sequences = [s for s in (*reference, *candidate)]
    means = np.array([s.mean_loglik for s in sequences])
    hists = np.array([rank_histogram(s.ranks, top_k) for s in sequences]).reshape(len(sequences), -1)
    n_ref = len(reference)
    if n_ref and len(candidate):
        p_ll, p_rank, how = permutation_pvalues(means, hists, n_ref, rounds=rounds, seed=seed)
    else:
        p_ll, p_rank, how = 1.0, 1.0, "no sequences on one side"
    per_test = alpha / TESTS
    detectable, s = detectable_shift(means[:n_ref], means[n_ref:], alpha=per_test)
    ref_mean = float(means[:n_ref].mean()) if n_ref else float("nan")
    cand_mean = float(means[n_ref:].mean()) if len(candidate) else float("nan")
    effect = cand_mean - ref_mean
    return DistributionResult(
        distribution_verdict(p_ll, p_rank, detectable, max_shift=max_shift, alpha=alpha), effect, effect / s if s and s != inf else float("nan"), p_ll, p_rank, how, detectable, s, max_shift,
        alpha, ref_mean, cand_mean, (n_ref, len(candidate)),
        (sum(len(x.logprobs) for x in reference), sum(len(x.logprobs) for x in candidate)),
        tuple(label for label, _, _ in rank_bins(top_k)),
        tuple(int(v) for v in hists[:n_ref].sum(0)), tuple(int(v) for v in hists[n_ref:].sum(0)))
