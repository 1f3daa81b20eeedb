"""Logit statistics against hand-computed cases and full-vocabulary KL on random distributions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracle.logits.stats import compare_position, same_top1_uncertainty, summarize, top_k_kld


def _top(logprobs: np.ndarray, k: int) -> tuple[list[int], list[float]]:
    order = np.argsort(-logprobs)[:k]
    return order.tolist(), logprobs[order].tolist()


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max()
    return x - np.log(np.exp(x).sum())


def test_hand_computed_two_token_case():
    # Reference (0.5, 0.3 | tail 0.2), candidate (0.4, 0.4 | tail 0.2), both top-2 sets {0, 1}.
    kl = top_k_kld([0, 1], np.log([0.5, 0.3]), [1, 0], np.log([0.4, 0.4]))
    expected = 0.5 * math.log(0.5 / 0.4) + 0.3 * math.log(0.3 / 0.4) + 0.2 * math.log(0.2 / 0.2)
    assert kl == pytest.approx(expected, rel=1e-12)


def test_tokens_in_one_top_k_only_go_to_the_tail():
    # Shared {0}; reference keeps token 1 (0.3) in its tail, candidate token 2 (0.3) in its.
    kl = top_k_kld([0, 1], np.log([0.6, 0.3]), [0, 2], np.log([0.5, 0.3]))
    expected = 0.6 * math.log(0.6 / 0.5) + 0.4 * math.log(0.4 / 0.5)
    assert kl == pytest.approx(expected, rel=1e-12)


def test_identical_distributions_give_zero():
    ids, lps = [3, 1, 2], list(np.log([0.7, 0.2, 0.05]))
    assert top_k_kld(ids, lps, ids, lps) == 0.0
    pos = compare_position(0, ids, lps, ids, lps, reference_token=3)
    assert pos.same_top1 and pos.delta_p == 0.0 and pos.logprob_cosine == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(20))
def test_top_k_kld_is_a_lower_bound_of_full_vocabulary_kl(seed):
    rng = np.random.default_rng(seed)
    vocab = 50
    ref = _log_softmax(rng.normal(0, 2, vocab))
    cand = _log_softmax(ref + rng.normal(0, 0.5 + seed / 10, vocab))
    full = float(np.sum(np.exp(ref) * (ref - cand)))
    for k_ref, k_cand in ((1, 1), (5, 3), (10, 20), (30, 30), (49, 49)):
        approx = top_k_kld(*_top(ref, k_ref), *_top(cand, k_cand))
        assert 0.0 <= approx <= full + 1e-12, (k_ref, k_cand)
    assert top_k_kld(*_top(ref, vocab), *_top(cand, vocab)) == pytest.approx(full, rel=1e-9, abs=1e-12)


def test_more_top_k_never_lowers_the_bound():
    rng = np.random.default_rng(7)
    ref = _log_softmax(rng.normal(0, 2, 200))
    cand = _log_softmax(ref + rng.normal(0, 1, 200))
    values = [top_k_kld(*_top(ref, k), *_top(cand, k)) for k in (1, 2, 5, 20, 64, 200)]
    # Not monotone in general (the shared set is not nested), but the full-vocabulary value is the largest.
    assert max(values) == pytest.approx(values[-1])


def test_position_figures_and_summary():
    # Reference top-1 is token 5 (p=0.6); the candidate prefers token 6.
    a = compare_position(0, [5, 6], np.log([0.6, 0.3]), [6, 5], np.log([0.5, 0.4]), reference_token=5)
    assert not a.same_top1 and a.candidate_top1 == 6
    assert a.delta_p == pytest.approx(0.4 - 0.6)
    b = compare_position(1, [5, 6], np.log([0.6, 0.3]), [5, 6], np.log([0.6, 0.3]), reference_token=5)
    c = compare_position(2, [7], [math.log(0.9)], [8], [math.log(0.8)], reference_token=7)
    assert c.p_candidate is None and c.delta_p == pytest.approx(-0.9) and c.logprob_cosine is None
    s = summarize([a, b, c])
    assert s["positions"] == 3
    assert s["same_top1"] == pytest.approx(1 / 3)
    assert s["same_top1_uncertainty"] == pytest.approx(math.sqrt((1 / 3) * (2 / 3) / 2))
    klds = np.array([a.kld, b.kld, c.kld])
    assert s["mean_kld"] == pytest.approx(klds.mean())
    assert s["mean_kld_uncertainty"] == pytest.approx(math.sqrt((np.mean(klds ** 2) - klds.mean() ** 2) / 2))
    assert s["kld_percentiles"]["max"] == pytest.approx(klds.max())
    assert s["kld_percentiles"]["median"] == pytest.approx(np.median(klds))
    dps = np.array([-0.2, 0.0, -0.9])
    assert s["mean_delta_p"] == pytest.approx(dps.mean())
    assert s["rms_delta_p"] == pytest.approx(math.sqrt(np.mean(dps ** 2)))
    assert s["reference_token_outside_candidate_top_k"] == 1
    assert s["mean_logprob_candidate"] == pytest.approx(np.mean([math.log(0.4), math.log(0.6)]))
    # c: no shared token, so both sides are one tail bucket holding all the mass: the bound says nothing
    assert c.kld == pytest.approx(0.0)


def test_same_top1_uncertainty_matches_llama_cpp():
    assert same_top1_uncertainty(0.99739, 1001) == pytest.approx(math.sqrt(0.99739 * 0.00261 / 1000))
