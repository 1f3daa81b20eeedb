"""The distribution check's statistics against scipy, and over many synthetic trials with a known shift: the
false-positive rate stays at the stated level, the power at the stated detectable shift is near 80%."""

from __future__ import annotations

from math import comb, inf, sqrt

import numpy as np
import pytest
from scipy import stats

from oracle.compare.distribution import (ScoredSequence, _chi_square, detectable_shift, distribution_check,
                                         permutation_pvalues, rank_bins, rank_histogram)

TOP_K = 20
TOKENS = 24
TAU, SIGMA = 0.25, 1.0  # between-sequence SD of the mean log-likelihood, and the token SD around it


def synthetic(rng, n: int, shift: float = 0.0, *, rank_shift: float = 0.0) -> list[ScoredSequence]:
    """n sequences of TOKENS tokens: each sequence its own level (tokens of one sequence are dependent), plus
    `shift` nats/token; ranks geometric (rank 1 more often with rank_shift > 0)."""
    out = []
    for i in range(n):
        level = -1.5 + shift + rng.normal(0, TAU)
        lps = level + rng.normal(0, SIGMA, TOKENS)
        ranks = np.minimum(rng.geometric(min(0.95, 0.45 + rank_shift), TOKENS) - 1, TOP_K)
        ranks = np.where(ranks >= TOP_K, -1, ranks)
        out.append(ScoredSequence(f"s{i}", tuple(lps), tuple(int(r) for r in ranks)))
    return out


def _means(seqs):
    return np.array([s.mean_loglik for s in seqs])


def test_the_mean_difference_p_value_is_scipys_exact_permutation_test():
    rng = np.random.default_rng(7)
    ref, cand = synthetic(rng, 6), synthetic(rng, 6, -0.3)
    means = np.concatenate([_means(ref), _means(cand)])
    hists = np.array([rank_histogram(s.ranks, TOP_K) for s in ref + cand])
    p, _, how = permutation_pvalues(means, hists, 6)
    expected = stats.permutation_test((_means(cand), _means(ref)), lambda a, b, axis: a.mean(axis) - b.mean(axis),
                                      vectorized=True, n_resamples=inf, alternative="two-sided").pvalue
    assert how == f"exact, all {comb(12, 6)} assignments"
    assert p == pytest.approx(expected, abs=1e-12)


def test_the_random_permutation_p_value_agrees_with_scipy_within_its_resampling_error():
    rng = np.random.default_rng(8)
    ref, cand = synthetic(rng, 15), synthetic(rng, 15, -0.15)
    means = np.concatenate([_means(ref), _means(cand)])
    hists = np.array([rank_histogram(s.ranks, TOP_K) for s in ref + cand])
    p, _, how = permutation_pvalues(means, hists, 15, rounds=9999, seed=3)
    expected = stats.permutation_test((_means(cand), _means(ref)), lambda a, b, axis: a.mean(axis) - b.mean(axis),
                                      vectorized=True, n_resamples=99999, rng=1).pvalue
    assert how.startswith("9999 random assignments")
    assert abs(p - expected) < 4 * sqrt(expected * (1 - expected) / 9999) + 1e-3


def test_the_rank_statistic_is_scipys_chi_square_of_the_table():
    table = np.array([[30.0, 12, 9, 5, 0, 2], [22.0, 15, 11, 9, 0, 6]])
    expected = stats.chi2_contingency(table[:, table.sum(0) > 0], correction=False).statistic
    assert _chi_square(table[0], table[1]) == pytest.approx(expected)


def test_rank_bins_and_histogram():
    assert [label for label, _, _ in rank_bins(20)] == ["1", "2", "3-5", "6-20", ">20"]
    assert list(rank_histogram([0, 0, 1, 4, 5, 19, -1], 20)) == [2, 1, 1, 2, 1]


def test_the_detectable_shift_is_the_normal_power_formula_with_the_pooled_sd():
    a, b = [-1.0, -1.2, -0.8, -1.1, -0.9], [-1.3, -1.0, -1.2, -0.7, -1.1, -1.0]
    delta, s = detectable_shift(a, b, alpha=0.025)
    pooled = sqrt((4 * np.var(a, ddof=1) + 5 * np.var(b, ddof=1)) / 9)
    z = stats.norm.ppf(1 - 0.025 / 2) + stats.norm.ppf(0.8)
    assert s == pytest.approx(pooled) and delta == pytest.approx(z * pooled * sqrt(1 / 5 + 1 / 6))


def test_four_against_four_sequences_can_never_reject_so_they_are_insufficient():
    rng = np.random.default_rng(1)
    result = distribution_check(synthetic(rng, 4), synthetic(rng, 4, -3.0), max_shift=10, top_k=TOP_K)
    assert 2 / comb(8, 4) > 0.025 and result.detectable == inf
    assert result.p_loglik == pytest.approx(2 / 70) and result.verdict == "insufficient"


def test_same_samples_are_consistent_and_a_large_shift_is_shifted():
    rng = np.random.default_rng(2)
    ref = synthetic(rng, 8)
    same = distribution_check(ref, ref, max_shift=1.0, top_k=TOP_K)
    assert same.verdict == "consistent" and same.p_loglik == 1.0 and same.effect == 0
    shifted = distribution_check(ref, synthetic(rng, 8, -1.0), max_shift=1.0, top_k=TOP_K)
    assert shifted.verdict == "shifted" and shifted.effect < -0.5 and shifted.effect_size < -1


def test_a_rank_shift_alone_is_found_by_the_rank_test():
    rng = np.random.default_rng(4)
    result = distribution_check(synthetic(rng, 12), synthetic(rng, 12, rank_shift=0.4), max_shift=1.0, top_k=TOP_K)
    assert result.p_ranks < 0.025 and result.p_loglik > 0.025 and result.verdict == "shifted"


def test_false_positive_rate_stays_at_the_stated_level_over_many_trials():
    """Under no shift, `shifted` comes at most at alpha = 0.05 (both tests, Bonferroni); a test that treats
    tokens as independent (Welch's t over tokens) rejects far more often: why sequences are permuted whole."""
    rng = np.random.default_rng(11)
    trials, shifted, token_level = 400, 0, 0
    for _ in range(trials):
        ref, cand = synthetic(rng, 10), synthetic(rng, 10)
        shifted += distribution_check(ref, cand, max_shift=1.0, top_k=TOP_K, rounds=999).verdict == "shifted"
        tokens = lambda side: np.concatenate([s.logprobs for s in side])  # noqa: E731
        token_level += stats.ttest_ind(tokens(ref), tokens(cand)).pvalue < 0.05
    assert shifted / trials <= 0.05 + 0.02  # binomial SD at 400 trials: 0.011
    assert token_level / trials > 0.15


def test_power_at_the_stated_detectable_shift_is_near_80_percent():
    rng = np.random.default_rng(12)
    n = 20
    sd = sqrt(TAU ** 2 + SIGMA ** 2 / TOKENS)  # the population SD of a sequence's mean
    z = stats.norm.ppf(1 - 0.025 / 2) + stats.norm.ppf(0.8)
    delta = z * sd * sqrt(2 / n)
    trials = 300
    hits = sum(distribution_check(synthetic(rng, n), synthetic(rng, n, -delta), max_shift=1.0, top_k=TOP_K,
                                  rounds=999).p_loglik < 0.025 for _ in range(trials))
    assert 0.68 <= hits / trials <= 0.90, hits / trials
    # The run's own statement estimates that delta from its sample.
    stated = distribution_check(synthetic(rng, n), synthetic(rng, n), max_shift=1.0, top_k=TOP_K).detectable
    assert stated == pytest.approx(delta, rel=0.35)
