"""Decode vs prefill, pure: bit-identical positions, max |Δlogprob| with where it is, Same top p, KLD, the check."""

from __future__ import annotations

import math

from oracle.logits.decode_prefill import compare_rows, dvp_check, summarize_rows

TOKENS = [5, 7, 9]
IDS = [[5, 1], [7, 2], [9, 3]]
LPS = [[-0.1, -2.5], [-0.2, -1.9], [-0.3, -1.5]]


def _report(rows, **mode_extra) -> dict:
    return {"modes": {"one-pass": {**summarize_rows(rows), "errors": {}}, **mode_extra}}


def test_equal_rows_are_bit_identical_and_position_0_is_left_out():
    row = compare_rows(TOKENS, IDS, LPS, IDS, LPS)
    assert row.positions == 2 and row.bit_identical == 2  # positions 1 and 2
    assert row.max_abs_delta == 0.0 and row.same_top1 == 2 and row.klds == [0.0, 0.0]
    assert row.as_json()["same_top1"] == 1.0


def test_the_largest_difference_is_named_with_both_values_in_float32():
    prefill = [list(r) for r in LPS]
    prefill[2] = [-0.3, -1.25]  # token 3 moved by 0.25 nats at position 2
    row = compare_rows(TOKENS, IDS, LPS, IDS, prefill)
    assert row.bit_identical == 1 and math.isclose(row.max_abs_delta, 0.25, rel_tol=1e-6)
    assert row.worst["position"] == 2 and row.worst["token"] == 3
    assert row.worst["decode"] == float(__import__("numpy").float32(-1.5))
    assert row.klds[1] > 0.0  # KL(prefill || decode) over the shared top-k + tail


def test_a_float64_difference_below_float32_resolution_is_identical():
    prefill = [[x + 1e-12 for x in r] for r in LPS]
    assert compare_rows(TOKENS, IDS, LPS, IDS, prefill).bit_identical == 2


def test_top1_swap_counts_against_same_top_and_reordered_ids_are_not_bit_identical():
    prefill_ids = [IDS[0], [2, 7], IDS[2]]
    prefill_lps = [LPS[0], [-0.2, -1.9], LPS[2]]
    row = compare_rows(TOKENS, IDS, LPS, prefill_ids, prefill_lps)
    assert row.same_top1 == 1 and row.bit_identical == 1
    assert math.isclose(row.max_abs_delta, 1.7, rel_tol=1e-6)  # token 7: -0.2 vs -1.9


def test_positions_without_a_row_on_either_side_are_skipped():
    row = compare_rows(TOKENS, IDS, LPS, [[], [], IDS[2]], [[], [], LPS[2]])
    assert row.positions == 1


def test_check_fails_over_the_tolerance_naming_prompt_position_and_values():
    prefill = [LPS[0], LPS[1], [-0.3, -1.0]]
    rows = {"p1": compare_rows(TOKENS, IDS, LPS, IDS, prefill), "p2": compare_rows(TOKENS, IDS, LPS, IDS, LPS)}
    report = _report(rows)
    o = report["modes"]["one-pass"]["overall"]
    assert o["positions"] == 4 and o["bit_identical"] == 3 and o["worst"]["prompt"] == "p1"
    check = dvp_check(report, max_delta=0.1)
    assert check.verdict == "fail" and check.id == "decode-vs-prefill"
    assert "p1 position 2 (token 3: decode -1.5, prefill -1.0)" in check.detail
    assert "> --dvp-max-delta 0.1" in check.detail
    assert dvp_check(report, max_delta=0.5).verdict == "pass"
    info = dvp_check(report, max_delta=None)
    assert info.verdict == "info" and "bit-identical at 3/4 positions" in info.detail


def test_modes_not_offered_or_not_reached_are_said_and_never_faked():
    rows = {"p1": compare_rows(TOKENS, IDS, LPS, IDS, LPS)}
    report = _report(rows, **{"chunks-served": {"chunk": None, "not_offered": "the server does not say"},
                              "chunks-64": {"chunk": 64, "not_reached": "every prefix fits in one chunk"}})
    check = dvp_check(report, max_delta=0.0)
    assert check.verdict == "pass"
    assert "chunks-served: not offered: the server does not say" in check.lines
    assert "chunks-64: not reached: every prefix fits in one chunk" in check.lines


def test_nothing_compared_or_a_failed_request_does_not_pass():
    assert dvp_check({"modes": {"one-pass": {**summarize_rows({}), "errors": {}}}}, max_delta=0.0).verdict == "not-run"
    rows = {"p1": compare_rows(TOKENS, IDS, LPS, IDS, LPS)}
    report = {"modes": {"one-pass": {**summarize_rows(rows), "errors": {"p2": "HTTP 500"}}}}
    check = dvp_check(report, max_delta=1.0)
    assert check.verdict == "not-run" and "p2: not compared: HTTP 500" in check.detail
