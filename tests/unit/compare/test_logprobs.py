"""--oracle-compare logprobs: the returned logprobs compared bit for bit as float32, and the verdict
logprobs-moved in a condition's rows and checks; pure, fast."""

from __future__ import annotations

import math

import numpy as np

from oracle.compare.conditions import compare_condition, condition_check, verdict_rank
from oracle.compare.logprobs import LogprobSide, compare_logprobs
from oracle.compare.verdicts import EXACT, LOGPROBS_MOVED, NEAR_TIE, Check, passed
from oracle.store.records import Condition, Record


def side(ids, lps, tops=None) -> LogprobSide:
    """tops: per position [(id, logprob), ...]; default: the chosen token alone."""
    tops = tops or [[(t, lp)] for t, lp in zip(ids, lps)]
    return LogprobSide(list(ids), list(lps), [[t for t, _ in row] for row in tops],
                       [[lp for _, lp in row] for row in tops])


def ulp_up(value: float) -> float:
    """One float32 ulp above value's float32."""
    return float(np.nextafter(np.float32(value), np.float32(np.inf)))


def test_equal_logprobs_are_equal_and_count_every_value():
    a = side([5, 6], [-0.25, -1.5], [[(5, -0.25), (9, -2.0)], [(6, -1.5), (3, -1.75)]])
    result = compare_logprobs(a, a)
    assert result.equal and result.compared == 4 and result.moved == 0
    assert result.describe() == "4 logprobs bit-identical"


def test_one_float32_ulp_on_one_top_k_value_is_moved_and_says_where():
    ref = side([5, 6], [-0.25, -1.5], [[(5, -0.25), (9, -2.0)], [(6, -1.5), (3, -1.75)]])
    cand = side([5, 6], [-0.25, -1.5], [[(5, -0.25), (9, -2.0)], [(6, -1.5), (3, ulp_up(-1.75))]])
    result = compare_logprobs(ref, cand)
    assert not result.equal and result.moved == 1 and result.compared == 4
    assert (result.position, result.token) == (1, 3)
    assert result.max_difference == abs(ulp_up(-1.75) + 1.75) and 0 < result.max_difference < 1e-6
    assert "logprobs moved at 1 of 4 values" in result.describe() and "token 1 (id 3)" in result.describe()


def test_values_equal_as_float32_are_equal():
    """The records keep float32: a float64 difference below float32's resolution is no difference."""
    value = -0.123456789
    nudged = value + 1e-12
    assert np.float32(value) == np.float32(nudged)
    assert compare_logprobs(side([5], [value]), side([5], [nudged])).equal


def test_a_top_k_id_one_side_lacks_is_moved_with_no_number():
    ref = side([5], [-0.25], [[(5, -0.25), (9, -2.0)]])
    cand = side([5], [-0.25], [[(5, -0.25), (8, -2.0)]])
    result = compare_logprobs(ref, cand)
    assert not result.equal and result.max_difference == math.inf
    assert result.as_json()["max_difference"] == "inf"
    assert "returned by one side only" in result.describe()


def test_a_larger_top_k_on_one_side_compares_the_common_k():
    ref = side([5], [-0.25], [[(5, -0.25), (9, -2.0), (4, -3.0)]])
    cand = side([5], [-0.25], [[(5, -0.25), (9, -2.0)]])
    assert compare_logprobs(ref, cand).equal


def test_positions_without_logprobs_are_not_compared():
    assert compare_logprobs(side([5], []), LogprobSide([5], [], [[]], [[]])).compared == 0


def rec(ids, lps, cond=Condition()) -> Record:
    return Record(id="p", condition=cond, prompt_ids=[1, 2], completion_ids=list(ids), finish_reason="length",
                  logprobs=list(lps), top_ids=[[t] for t in ids], top_logprobs=[[lp] for lp in lps])


def test_a_condition_row_with_equal_tokens_and_moved_logprobs_is_logprobs_moved_only_when_asked():
    c1 = {"p": rec([5, 6], [-0.25, -1.5])}
    moved = rec([5, 6], [-0.25, ulp_up(-1.5)], Condition(concurrency=8))
    tokens_only = compare_condition([moved], c1, None, None, near_tie_nats=0.5)
    assert tokens_only[0]["verdict"] == EXACT
    rows = compare_condition([moved], c1, None, None, near_tie_nats=0.5, logprobs=True)
    assert rows[0]["verdict"] == LOGPROBS_MOVED and rows[0]["vs_c1"]["logprobs"]["position"] == 1
    check = condition_check("ladder[c8]", "ladder", "c8", rows, required=1, recording=False)
    assert check.verdict == LOGPROBS_MOVED and "1 logprobs-moved (tokens equal)" in check.detail
    assert check.lines == ["p: vs c1: logprobs moved at 1 of 2 values; largest 1.19e-07 nats "
                           f"({-1.5!r} -> {ulp_up(-1.5)!r}) at token 1 (id 6)"]
    same = compare_condition([rec([5, 6], [-0.25, -1.5])], c1, None, None, near_tie_nats=0.5, logprobs=True)
    assert same[0]["verdict"] == EXACT and same[0]["vs_c1"]["logprobs"]["equal"]


def test_logprobs_moved_ranks_between_noise_and_near_tie_and_passes_only_when_allowed():
    assert verdict_rank(EXACT) < verdict_rank(LOGPROBS_MOVED) < verdict_rank(NEAR_TIE)
    check = Check("tokens[p]", "tokens", LOGPROBS_MOVED)
    assert not passed(check, allow_near_ties=True, allow_inconclusive=("overlap",))
    assert passed(check, allow_near_ties=False, allow_inconclusive=(), allow_logprobs_moved=True)
