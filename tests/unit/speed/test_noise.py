"""The speed verdict's noise band and its words, from replayed round medians (no server): an identical config whose
own interval happens to exclude 1.0 is `inconclusive: within the measured noise` when an A/A control ran; a candidate
20% slower still fails; a ratio within half a percent of 1 reads `same speed`; a gate whose only failure is a speed
it could not judge says so in its headline."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from oracle.compare.verdicts import Check
from oracle.checks.speed import SpeedChecks, SpeedSettings, SpeedState
from oracle.report.header import _headline
from oracle.speed.interleave import (Measurement, between_run_ratio, control_summary, interleaved_comparison,
                                     round_medians)
from oracle.speed.noise import NOISE_FLOOR, judge, noise_band, ratio_words
from oracle.speed.report import markdown_lines, not_judged_words, speed_words

CARD = {"label": "headline", "reasons": [], "token_times": "bytes-arrival", "condition": "boot1-c1",
        "warmup": {"requests": 1}, "excluded": {}, "min_tokens": 101, "summary": {}, "prompts": {}}
REFERENCE = [100.0, 96.0, 103.0, 99.0]  # replayed per-round medians of the reference config, tok/s


def session(ratios: list[float]) -> list[tuple[Measurement, Measurement]]:
    """(candidate, reference) passes per round: two prompts each, the candidate at `ratio` times the reference."""
    return [(Measurement({"a": r * ref, "b": r * ref * 1.01}, "after_ttft_tok_s", cache="pass"),
             Measurement({"a": ref, "b": ref * 1.01}, "after_ttft_tok_s", cache="pass"))
            for r, ref in zip(ratios, REFERENCE)]


def control(*sessions: list[float]) -> dict:
    ratios = [between_run_ratio([m[:2] for m in (round_medians(c, r) for c, r in session(s)) if m]) or {}
              for s in sessions]
    return control_summary([r.get("ci95") for r in ratios], [r.get("median") for r in ratios])


def gate(card: dict, bar: float = 1.0, floor: float = NOISE_FLOOR):
    settings = SpeedSettings(min_speedup=bar, noise_floor=floor)
    plan = SimpleNamespace(options=SimpleNamespace(check=lambda name: settings))
    state = SimpleNamespace(states={"speed": SpeedState(card)}, complete=True, interruption=None)
    return SpeedChecks(plan, state).speed_check().check


def test_the_same_config_with_a_control_is_within_the_measured_noise_though_its_interval_excludes_one():
    versus = interleaved_comparison(session([1.004, 1.003, 1.005, 1.004]), diagnostics=[], launch=None,
                                    figure="after_ttft_tok_s")
    lo, hi = versus["ci95"]
    assert versus["label"] == "headline" and 1.0 < lo < hi < 1.01  # narrow by luck: alone it would pass 1.0
    aa = control([1.02, 1.04, 1.03, 1.05], [0.995, 1.0, 1.003, 0.998])
    assert aa["excluded_one"] == 1  # the control's own pairs: one of them a false claim too (as on the H100)
    band = noise_band(aa)
    # the band is where the A/A points landed (1.035 and 0.999), not how far their intervals reached (~8%)
    assert band["measured"] and 0.03 < band["fraction"] < 0.04 and band["source"].startswith("the A/A control")
    assert max(abs(x - 1) for ci in aa["intervals"] for x in ci) > 0.05
    check = gate({"vs_reference": versus, "interleave": {"control": aa}})
    assert check.verdict == "inconclusive" and check.kind == "speed"
    pct = f"{100 * band['fraction']:.2g}%"
    assert f"--min-speedup 1: inconclusive: within the measured noise (+-{pct}): the interval lies above it" in \
        check.detail
    assert check.evidence["not_judged"] == f"within the measured noise (+-{pct})"
    assert check.evidence["noise"] == band
    shown = "\n".join(markdown_lines({**CARD, "vs_reference": {**versus, "noise": band}}))
    assert f"- noise band +-{pct} (the A/A control (--speed-control): 2 point(s)" in shown
    # without the control the stated floor (5%) is the band: the same verdict, its source said
    alone = gate({"vs_reference": versus})
    assert alone.verdict == "inconclusive" and "(+-5%)" in alone.detail and "--speed-noise-floor" in alone.detail
    # a floor of 0 judges the interval alone: then the same config "passes", the false claim the band prevents
    assert gate({"vs_reference": versus}, floor=0.0).verdict == "pass"


def test_a_candidate_twenty_percent_slower_still_fails_beyond_the_band():
    versus = interleaved_comparison(session([0.79, 0.81, 0.80, 0.80]), diagnostics=[], launch=None,
                                    figure="after_ttft_tok_s")
    aa = control([1.02, 1.05, 1.01, 1.06])
    check = gate({"vs_reference": versus, "interleave": {"control": aa}})
    assert check.verdict == "fail" and check.detail.endswith("--min-speedup 1: the whole interval is below it")
    assert check.detail.startswith("0.80x slower [")
    faster = interleaved_comparison(session([1.52, 1.50, 1.53, 1.51]), diagnostics=[], launch=None,
                                    figure="after_ttft_tok_s")
    assert gate({"vs_reference": faster, "interleave": {"control": aa}}).verdict == "pass"
    # the band is around the bar: 1.21 against --min-speedup 1.2 is within 5% of it
    near = {"median": 1.21, "ci95": [1.205, 1.215]}
    assert judge(near, bar=1.2, band=noise_band(None))[0] == "inconclusive"
    assert judge(near, bar=1.0, band=noise_band(None))[0] == "pass"


@pytest.mark.parametrize("ratio, words", [(0.9998, "same speed (0.9998x)"), (1.004, "same speed (1.004x)"),
                                          (0.995, "same speed (0.995x)"), (1.006, "1.01x faster"),
                                          (0.994, "0.99x slower"), (1.42, "1.42x faster")])
def test_ratios_within_half_a_percent_of_one_read_same_speed(ratio, words):
    assert ratio_words(ratio) == words


def test_a_point_of_0_9998_reads_same_speed_in_the_headline():
    versus = {"label": "headline", "median": 0.9998, "ci95": [0.99, 1.01], "candidate_median": 50.0,
              "reference_median": 50.01, "prompts": 11}
    assert speed_words(versus).startswith("same speed (0.9998x) [0.99, 1.01] (conventional decode median")


def test_an_inconclusive_only_failure_headlines_fail_speed_not_judged():
    versus = {"label": "headline", "median": 1.02, "ci95": [0.96, 1.10], "candidate_median": 102.0,
              "reference_median": 100.0, "prompts": 12, "interval": "within-run"}
    speed = gate({"vs_reference": versus})
    assert speed.verdict == "inconclusive"
    speed.outcome = "failed"
    tokens = Check("tokens", "tokens", "exact", outcome="passed")
    data = {"verdict": "fail", "mode": "gate", "summary": {"exact": [12, 12]},
            "checks": [tokens.as_dict(), speed.as_dict()], "speed": {"label": "headline", "vs_reference": versus}}
    assert _headline(data) == ("FAIL (speed not judged: 1 lies inside the interval [0.96, 1.10]): 12/12 exact · "
                               "1.02x faster [0.96, 1.10] (conventional decode median 102.0 vs 100.0 tok/s, "
                               "12 prompts, headline)")
    # another failure beside it: the headline is the plain FAIL
    broken = Check("cache-zero", "cache", "fail", outcome="failed").as_dict()
    assert not_judged_words(data["checks"] + [broken]) is None
    assert _headline({**data, "checks": data["checks"] + [broken]}).startswith("FAIL: 12/12 exact · ")
