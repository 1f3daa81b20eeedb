"""Seeded identity under sampling: no near-ties, and the token match rate over tokens from the same prefix."""

from __future__ import annotations

from oracle.compare.sampled import match_rate_json, rows_match, side_match, token_match
from oracle.compare.tokens import SAMPLED_SPLIT, TokenSide, compare_tokens


def test_a_sampled_split_is_divergent_even_where_greedy_would_call_it_a_near_tie():
    ref = TokenSide([1, 2, 3], "length", [-0.1, -0.7, -0.1], [[1], [2, 9], [3]], [[-0.1], [-0.7, -0.71], [-0.1]])
    cand = TokenSide([1, 9, 3], "length", [-0.1, -0.71, -0.1], [[1], [9, 2], [3]], [[-0.1], [-0.71, -0.7], [-0.1]])
    assert compare_tokens(ref, cand).verdict == "near-tie"
    sampled = compare_tokens(ref, cand, sampled=True)
    assert (sampled.verdict, sampled.first_divergence, sampled.reason) == ("divergent", 1, SAMPLED_SPLIT)
    assert compare_tokens(ref, ref, sampled=True).verdict == "exact"


def test_token_match_counts_the_common_prefix_and_the_split_itself():
    assert token_match([1, 2, 3, 4], [1, 2, 3, 4]) == (4, 4)
    assert token_match([1, 2, 3, 4], [1, 2, 9, 9]) == (2, 3)
    assert token_match([1, 2, 3, 4], [1, 2]) == (2, 3)  # one ended where the other went on: a split there
    rate = match_rate_json([(4, 4), (2, 3)])
    assert (rate["k"], rate["n"], rate["rate"], rate["records"], rate["exact_records"]) == (6, 7, 0.8571, 2, 1)
    assert rate["wilson95"][0] < 0.8571 < rate["wilson95"][1]


def test_a_condition_rows_match_rate_against_c1_and_the_reference():
    side = lambda first, n: {"first_divergence": first, "reference_length": n}  # noqa: E731
    rows = [{"vs_c1": side(None, 24), "vs_reference": side(None, 24)},
            {"vs_c1": side(None, 24), "vs_reference": side(10, 24)}]
    assert side_match(side(10, 24)) == (10, 11)
    out = rows_match(rows)
    assert (out["vs_c1"]["k"], out["vs_c1"]["n"]) == (48, 48)
    assert (out["vs_reference"]["k"], out["vs_reference"]["n"], out["vs_reference"]["exact_records"]) == (34, 35, 1)
