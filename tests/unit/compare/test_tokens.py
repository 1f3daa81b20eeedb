"""compare is pure: hand-built arrays in, verdicts out; every branch can fail."""

from oracle.compare.tokens import TokenSide, compare_tokens, first_divergence
from oracle.compare.verdicts import DIVERGENT, EXACT, NEAR_TIE


def side(ids, finish="length", tops=None):
    tops = tops or {}
    top_ids = [[t for t, _ in tops.get(i, [(tok, -0.1)])] for i, tok in enumerate(ids)]
    top_lps = [[lp for _, lp in tops.get(i, [(tok, -0.1)])] for i, tok in enumerate(ids)]
    logprobs = [dict(tops.get(i, [(tok, -0.1)])).get(tok, -0.1) for i, tok in enumerate(ids)]
    return TokenSide(ids, finish, logprobs, top_ids, top_lps)


def test_first_divergence():
    assert first_divergence([1, 2, 3], [1, 2, 3]) is None
    assert first_divergence([1, 2, 3], [1, 9, 3]) == 1
    assert first_divergence([1, 2], [1, 2, 3]) == 2
    assert first_divergence([], [5]) == 0


def test_exact_needs_equal_arrays_and_finish():
    assert compare_tokens(side([1, 2, 3]), side([1, 2, 3])).verdict == EXACT
    r = compare_tokens(side([1, 2, 3], "stop"), side([1, 2, 3], "length"))
    assert r.verdict == DIVERGENT and "finish reason" in r.reason


def test_near_tie_when_margin_small_and_both_in_each_others_topk():
    ref = side([1, 2, 3], tops={1: [(2, -0.60), (7, -0.80)]})
    cand = side([1, 7, 3], tops={1: [(7, -0.65), (2, -0.70)]})
    r = compare_tokens(ref, cand, near_tie_nats=0.5)
    assert r.verdict == NEAR_TIE and r.first_divergence == 1
    assert abs(r.margin_nats - 0.2) < 1e-9


def test_margin_at_or_above_epsilon_is_divergent():
    ref = side([1, 2, 3], tops={1: [(2, -0.1), (7, -0.6)]})
    cand = side([1, 7, 3], tops={1: [(7, -0.1), (2, -0.2)]})
    assert compare_tokens(ref, cand, near_tie_nats=0.5).verdict == DIVERGENT
    assert compare_tokens(ref, cand, near_tie_nats=0.51).verdict == NEAR_TIE


def test_candidate_token_outside_reference_topk_is_divergent():
    ref = side([1, 2, 3], tops={1: [(2, -0.1), (5, -0.2)]})
    r = compare_tokens(ref, side([1, 7, 3]))
    assert r.verdict == DIVERGENT and "outside the reference's top-k" in r.reason


def test_reference_token_outside_candidate_topk_is_divergent():
    ref = side([1, 2, 3], tops={1: [(2, -0.6), (7, -0.7)]})
    cand = side([1, 7, 3], tops={1: [(7, -0.1), (9, -0.2)]})
    r = compare_tokens(ref, cand)
    assert r.verdict == DIVERGENT and "outside the candidate's top-k" in r.reason


def test_prefix_is_divergent_at_the_shorter_length():
    r = compare_tokens(side([1, 2, 3], "stop"), side([1, 2], "stop"))
    assert r.verdict == DIVERGENT and r.first_divergence == 2 and "continued" in r.reason
