"""Interleaved A/B, pure: the ABBA schedule, the between-run t interval (against the printed t table, its coverage
on synthetic sessions by numpy, and scipy's t interval where scipy is installed: it is no dependency of oracle),
the comparison's labels, and the A/A control's false-claim count with its Wilson interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracle.compare.confidence import wilson_interval
from oracle.speed.interleave import (BETWEEN_RUN, Measurement, abba_order, between_run_ratio, control_summary,
                                     interleaved_comparison, round_medians, t_quantile)


def test_abba_order_alternates_which_side_goes_first():
    assert abba_order(4) == [("reference", "candidate"), ("candidate", "reference"),
                             ("reference", "candidate"), ("candidate", "reference")]
    assert abba_order(1, "reference", "control") == [("reference", "control")]
    flat = [s for pair in abba_order(6) for s in pair]
    assert "".join("A" if s == "reference" else "B" for s in flat) == "ABBAABBAABBA"
    with pytest.raises(ValueError):
        abba_order(0)


# t(0.975, df) as printed in every table of Student's t (three decimals)
T_TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 9: 2.262, 19: 2.093, 29: 2.045, 120: 1.980}


@pytest.mark.parametrize("df", sorted(T_TABLE))
def test_t_quantile_matches_the_table(df):
    assert t_quantile(df) == pytest.approx(T_TABLE[df], abs=6e-4)


def test_the_interval_covers_the_true_ratio_95_percent_of_the_time():
    """4000 synthetic sessions of 4 rounds: a true speed-up of 1.2 under multiplicative noise and a drift that both
    sides of a round share; the interval holds 1.2 in ~95% of them (binomial sd ~0.35 points)."""
    rng = np.random.default_rng(20261205)
    hits = 0
    for _ in range(4000):
        drift = rng.lognormal(0, 0.2, 4)
        reference = 100 * drift * rng.lognormal(0, 0.05, 4)
        candidate = 120 * drift * rng.lognormal(0, 0.05, 4)
        lo, hi = between_run_ratio(list(zip(candidate, reference)))["ci95"]
        hits += lo <= 1.2 <= hi
    assert 0.935 <= hits / 4000 <= 0.965


def test_between_run_ratio_is_scipys_t_interval_on_the_log_ratios():
    stats = pytest.importorskip("scipy.stats")  # a cross-check where scipy is installed; the table test always runs
    rng = np.random.default_rng(7)
    drift = np.linspace(1.0, 0.6, 8)  # the machine slows down over the session: both sides of a round alike
    reference = 100 * drift * rng.lognormal(0, 0.03, 8)
    candidate = 130 * drift * rng.lognormal(0, 0.03, 8)
    out = between_run_ratio(list(zip(candidate, reference)))
    logs = np.log(candidate / reference)
    lo, hi = stats.t.interval(0.95, len(logs) - 1, loc=logs.mean(), scale=stats.sem(logs))
    assert out["ci95"] == [pytest.approx(math.exp(lo), abs=1e-4), pytest.approx(math.exp(hi), abs=1e-4)]
    assert out["median"] == pytest.approx(math.exp(logs.mean()), abs=1e-4)
    assert out["rounds"] == 8 and out["ci95"][0] > 1.2 and out["ci95"][1] < 1.4  # drift cancelled in the pairs
    assert out["cv"]["reference"] > 0.1  # the drift is there, between rounds
    # unpaired, the same numbers' spread would swamp the difference: the pairing is what narrows it
    assert (out["ci95"][1] - out["ci95"][0]) < 0.1


def test_between_run_ratio_needs_two_rounds():
    assert between_run_ratio([(120.0, 100.0)]) is None
    same = between_run_ratio([(100.0, 100.0), (100.0, 100.0)])
    assert same["ci95"] == [1.0, 1.0] and same["median"] == 1.0


def _m(rates, **kw) -> Measurement:
    return Measurement(rates=rates, figure="after_ttft_tok_s", cache="pass", **kw)


def test_round_medians_pair_the_shared_keys():
    assert round_medians(_m({"a": 10, "b": 30, "c": 99}), _m({"a": 5, "b": 15})) == (20.0, 10.0, 2)
    assert round_medians(_m({"a": 10}), _m({"b": 5})) is None


def test_the_interleaved_comparison_labels():
    pairs = [(_m({"a": 60.0, "b": 62.0}), _m({"a": 100.0, "b": 101.0})),
             (_m({"a": 58.0, "b": 61.0}), _m({"a": 97.0, "b": 99.0})),
             (_m({"a": 59.0, "b": 60.0}), _m({"a": 98.0, "b": 100.0}))]
    launch = {"label": "matched", "speculation": [], "other": []}
    out = interleaved_comparison(pairs, diagnostics=[], launch=launch, figure="after_ttft_tok_s")
    assert out["label"] == "headline" and out["interval"] == BETWEEN_RUN and out["rounds"] == 3
    assert out["ci95"][1] < 1.0 and out["launch"] == "matched" and out["prompts"] == 2
    assert "post-first decode" in out["notes"][0]
    diag = interleaved_comparison(pairs, diagnostics=["no warm-up request before the timed run (--warmup 0)"],
                                  launch=None, figure="after_ttft_tok_s")
    assert diag["label"] == "diagnostic" and diag["ci95"] is not None
    burst = [(_m({"a": 1e5}, credible=["a burst"]), _m({"a": 100.0})), pairs[1]]
    bad = interleaved_comparison(burst, diagnostics=[], launch=None, figure="after_ttft_tok_s")
    assert bad["label"] == "not credible" and bad["median"] is None and bad["reasons"] == ["candidate round 1: a burst"]
    cached = [(Measurement(rates={"a": 60.0}, figure="x", cache="fail"), _m({"a": 100.0})), pairs[1]]
    assert interleaved_comparison(cached, diagnostics=[], launch=None, figure="x")["label"] == "diagnostic"
    one = interleaved_comparison(pairs[:1], diagnostics=[], launch=None, figure="conventional_tok_s")
    assert one["label"] == "insufficient" and one["median"] is None


def test_control_summary_counts_intervals_that_exclude_one():
    out = control_summary([[0.95, 1.04], [1.01, 1.08], [0.9, 0.99], [0.97, 1.0], None])
    assert (out["pairs"], out["judged"], out["excluded_one"]) == (5, 4, 2)
    lo, hi = wilson_interval(2, 4)
    assert out["false_claim_rate"] == {"k": 2, "n": 4, "wilson95": [round(lo, 4), round(hi, 4)]}
    assert out["words"].startswith("A/A control: 2 of 4 intervals excluded 1.0 (false-claim rate 2/4 (")
    assert control_summary([])["false_claim_rate"]["wilson95"] == [0.0, 1.0]
