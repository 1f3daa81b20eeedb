"""The sequential speed test (speed/sequential.py) on seeded simulated passes, 1,000 sessions each at 1% and 8%
pass-to-pass CV, with and without an A/A control measured first: an identical config passes in at most alpha of them
(the Wilson interval printed: `pytest -s`), a 1.5x case passes in 2 rounds in >= 95% of sessions (at 8% CV with the
control's spread as the prior), a 0.8x case fails; the LLR path and the bounds; A/A sessions formed from a file of
alternating passes of one config."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracle.speed.sequential import (CONTINUE, Sequential, aa_calibration, calibrated_z, control_prior, llr,
                                     round_logs, simulate, spread, verdict_words)

RUNS = 1000


def share(block: dict, decision: str) -> float:
    return block[decision]["count"]["k"] / RUNS


def figures(sim: dict) -> str:
    """'pass 32/1000 (Wilson 95% 0.023-0.045), fail 85, inconclusive 883; 2 rounds 34%' for the log."""
    rounds = [n for block in sim.values() for n in block["rounds"]]
    lo, hi = sim["pass"]["count"]["wilson95"]
    return (f"pass {sim['pass']['count']['k']}/{RUNS} (Wilson 95% {lo:.3f}-{hi:.3f}), fail {sim['fail']['count']['k']}, "
            f"inconclusive {sim['inconclusive']['count']['k']}; decided in <= 2 rounds {np.mean(np.array(rounds) <= 2):.1%}")


@pytest.mark.parametrize("control", [0, 1])
@pytest.mark.parametrize("cv", [0.01, 0.08])
def test_an_identical_config_passes_in_at_most_alpha_of_simulated_sessions(cv, control):
    sim = simulate(1.0, cv, RUNS, seed=11, control=control)
    print(f"cv {cv:.0%}, {control} A/A control(s): identical config {figures(sim)}")
    k = sim["pass"]["count"]["k"]
    assert k / RUNS <= 0.05, sim["pass"]["count"]
    assert sim["pass"]["count"]["wilson95"][0] < 0.05  # the interval says the rate is consistent with alpha
    if cv == 0.01:  # a quiet machine decides an identical config: fail (`same speed` in words), not a shrug
        assert share(sim, "fail") >= 0.9


def test_drift_both_sides_share_never_raises_the_false_claims():
    """The level's spread joins the ratio's in the pooled spread: drift that both passes of a round share widens it
    (fewer decisions), never narrows it (no more claims)."""
    calm, drifting = simulate(1.0, 0.08, RUNS, seed=3), simulate(1.0, 0.08, RUNS, seed=3, drift=0.08)
    print(f"cv 8%, no drift: {figures(calm)}; drift 8%: {figures(drifting)}")
    assert drifting["pass"]["count"]["k"] <= max(calm["pass"]["count"]["k"], 0.05 * RUNS)


@pytest.mark.parametrize("cv", [0.01, 0.08])
def test_a_clear_speed_up_passes_in_two_rounds_and_a_slow_down_fails(cv):
    """1.5x stops in 2 rounds in >= 95% of sessions: on a quiet machine from the session's own rounds (ratios and
    levels pooled, 2 df, beside the ratios' own); at 8% CV two rounds' own passes cannot carry it (about a fifth),
    one A/A control measured first can (its spread the prior)."""
    alone = simulate(1.5, cv, RUNS, seed=12)
    fast = simulate(1.5, cv, RUNS, seed=12, control=1)
    print(f"cv {cv:.0%}: 1.5x alone {figures(alone)}; after one A/A control {figures(fast)}")
    for sim in (alone, fast):
        assert share(sim, "pass") == 1.0, {k: v["count"] for k, v in sim.items()}
    assert np.mean(np.asarray(fast["pass"]["rounds"]) <= 2) >= 0.95
    if cv == 0.01:
        assert np.mean(np.asarray(alone["pass"]["rounds"]) <= 2) >= 0.95
    else:
        assert np.median(alone["pass"]["rounds"]) <= 3 and max(alone["pass"]["rounds"]) <= 8
    for control in (0, 1):
        slow = simulate(0.8, cv, RUNS, seed=13, control=control)
        assert share(slow, "fail") >= 0.99 and share(slow, "pass") == 0, {k: v["count"] for k, v in slow.items()}


def test_the_spread_pools_ratios_levels_and_the_control_prior():
    logs, levels = [0.40, 0.42], [12.0, 12.5]
    assert spread(logs) == (pytest.approx(0.0002), 1)
    assert spread(logs, levels) == (pytest.approx((0.0002 + 0.125) / 2), 2)
    assert spread(logs, levels, (0.01, 6)) == (pytest.approx((0.0002 + 0.125 + 0.06) / 8), 8)
    assert control_prior([([0.01], [1.0])]) is None  # one round: no spread
    assert control_prior([([0.01, -0.01], [1.0, 1.0]), ([0.0, 0.02, 0.01], [1.0, 1.0, 1.0])])[1] == 2 + 4
    assert round_logs([(2.0, 1.0, 6), None, (1.0, 0.0, 6)]) == ([pytest.approx(math.log(2))], [pytest.approx(math.log(2))])
    with_prior = Sequential(prior=(0.0001, 10)).run([0.4, 0.3], [1.0, 1.0])
    assert with_prior["decision"] == "pass" and "the A/A control's (10 df)" in with_prior["spread"]
    assert with_prior["bounds"] == [pytest.approx(math.log(0.025 / 0.975), abs=1e-4), pytest.approx(3.6636, abs=1e-4)]
    assert set(with_prior["path"][0]["llrs"]) == {"paired", "pooled"}


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
