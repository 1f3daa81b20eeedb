"""The sequential speed test (speed/sequential.py) on seeded simulated passes, 1,000 sessions each at 1% and 8%
pass-to-pass CV: an identical config passes in at most alpha of them (the Wilson interval printed), a 1.5x case
passes (at 1% CV in 2 rounds in most sessions, never more than 3), a 0.8x case fails; the LLR path and the bounds;
A/A sessions formed from a file of alternating passes of one config."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracle.compare.confidence import count_words
from oracle.speed.sequential import (CONTINUE, Sequential, aa_calibration, calibrated_z, llr, simulate,
                                     verdict_words)

RUNS = 1000


def share(block: dict, decision: str) -> float:
    return block[decision]["count"]["k"] / RUNS


@pytest.mark.parametrize("cv", [0.01, 0.08])
def test_an_identical_config_passes_in_at_most_alpha_of_simulated_sessions(cv):
    sim = simulate(1.0, cv, RUNS, seed=11)
    k = sim["pass"]["count"]["k"]
    print(f"cv {cv:.0%}: identical config passed {count_words(k, RUNS)} of sessions; "
          f"failed {sim['fail']['count']['k']}, inconclusive {sim['inconclusive']['count']['k']}")
    assert k / RUNS <= 0.05, sim["pass"]["count"]
    assert sim["pass"]["count"]["wilson95"][0] < 0.05  # the interval says the rate is consistent with alpha
    if cv == 0.01:  # a quiet machine decides an identical config: fail (`same speed` in words), not a shrug
        assert share(sim, "fail") >= 0.9


@pytest.mark.parametrize("cv", [0.01, 0.08])
def test_a_clear_speed_up_passes_early_and_a_slow_down_fails(cv):
    fast = simulate(1.5, cv, RUNS, seed=12)
    assert share(fast, "pass") == 1.0, {k: v["count"] for k, v in fast.items()}
    rounds = np.asarray(fast["pass"]["rounds"])
    print(f"cv {cv:.0%}: 1.5x passed in 2 rounds in {np.mean(rounds <= 2):.0%} of sessions, at most {rounds.max()}")
    if cv == 0.01:
        assert np.median(rounds) == 2 and rounds.max() <= 3
    else:
        assert np.median(rounds) <= 4 and rounds.max() <= 8
    slow = simulate(0.8, cv, RUNS, seed=13)
    assert share(slow, "fail") >= 0.99 and share(slow, "pass") == 0, {k: v["count"] for k, v in slow.items()}


def test_the_llr_path_and_bounds_are_kept_round_by_round():
    test = Sequential(bar=1.0, rounds_max=4)
    lower, upper = test.bounds
    assert (lower, upper) == pytest.approx((math.log(0.05 / 0.95), math.log(0.95 / 0.05)))
    logs = [0.02, -0.01, 0.015, 0.0]  # an identical config on a noisy day: no decision within the cap
    result = test.run(logs)
    assert [p["round"] for p in result["path"]] == list(range(2, 2 + len(result["path"])))
    assert result["decision"] in ("fail", "inconclusive")
    if result["decision"] == "inconclusive":
        assert result["rounds"] == 4 and lower < result["llr"] < upper
        assert "inconclusive after 4 of at most 4 rounds (LLR " in verdict_words(result)
    clear = test.run([math.log(1.5), math.log(1.49)])
    assert clear["decision"] == "pass" and clear["rounds"] == 2 and clear["llr"] >= upper
    assert verdict_words(clear).startswith("sequential test: pass after 2 rounds (LLR ")
    assert test.run([math.log(1.5)])["decision"] == CONTINUE  # one round: no spread yet
    assert test.run([0.1, 0.3])["decision"] in (CONTINUE, "pass")  # under the cap, undecided goes on


def test_the_z_is_calibrated_by_student_t_and_the_llr_is_signed():
    assert calibrated_z(12.706, 1) == pytest.approx(1.95996, abs=1e-3)  # t(0.975, 1) has the tail of z 1.96
    assert calibrated_z(-2.776, 4) == pytest.approx(-1.95996, abs=1e-3)
    assert calibrated_z(float("inf"), 3) == 8.0
    assert llr([0.3, 0.31, 0.29], 1.0, 0.03) > 0 > llr([-0.3, -0.31, -0.29], 1.0, 0.03)
    with pytest.raises(ValueError, match="needs 2 rounds"):
        llr([0.1], 1.0, 0.03)


def test_alternating_passes_of_one_config_become_aa_sessions_with_a_wilson_interval():
    rng = np.random.default_rng(5)
    rates = list(500.0 * np.exp(rng.normal(0, 0.01, 200)))  # ~200 passes of one config, 1% pass-to-pass CV
    aa = aa_calibration(rates)
    assert aa["passes"] == 200 and aa["rounds"] == 100
    assert sum(aa["decisions"].values()) == len(aa["sessions"]) >= 15
    assert sum(s["rounds"] for s in aa["sessions"]) <= 100
    assert aa["false_claim_rate"]["n"] == len(aa["sessions"]) and aa["false_claim_rate"]["k"] <= 2
    assert aa["words"].startswith("A/A sequential sessions: ") and "nominal 0.05" in aa["words"]
    # a config whose second pass of each ABBA pair is faster is still one config: ABBA undoes the order effect
    biased = [r * (1.05 if i % 2 else 1.0) for i, r in enumerate(rates)]
    assert aa_calibration(biased)["decisions"]["pass"] <= 2
