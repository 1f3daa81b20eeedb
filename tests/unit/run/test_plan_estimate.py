"""The run plan's arithmetic: durations, the rates of a warm-up row, a part's estimate, the ETA's correction."""

from __future__ import annotations

import pytest

from oracle.run.eta import RunEta
from oracle.run.plan_estimate import Part, Rates, RunPlan, duration_words, parse_duration, plan_words

WARMUP = {"requests": 1, "prompt_tokens": 60, "completion_tokens": [64], "ttft_s": [1.2], "wall_s": 7.5}


@pytest.mark.parametrize("value, seconds", [("10m", 600), ("600s", 600), ("1.5h", 5400), ("90", 90), ("off", None),
                                            (" 2min ", 120)])
def test_durations_read_as_seconds(value, seconds):
    assert parse_duration("--oracle-budget", value) == seconds


@pytest.mark.parametrize("value", ["10x", "", "-5m", "0", "ten minutes"])
def test_a_bad_duration_names_the_fix(value):
    with pytest.raises(ValueError, match=r"--oracle-budget .*expected a duration above 0 such as 10m, 600s or 1h"):
        parse_duration("--oracle-budget", value)


def test_the_rates_are_the_warm_ups_prefill_and_decode():
    rates = Rates.from_warmup(WARMUP)
    assert rates.prefill_tps == pytest.approx(60 / 1.2) and rates.decode_tps == pytest.approx(63 / 6.3)
    assert rates.seconds(500, 100) == pytest.approx(500 / 50 + 100 / 10)


def test_without_a_warm_up_nothing_is_estimated():
    rates = Rates.from_warmup({"requests": 0})
    assert not rates.known and "--warmup 0" in rates.source
    part = Part.of("primary prompts (c1)", [(100, 10)], rates)
    assert part.estimate_s is None and RunPlan(rates, [part]).total_s is None


def test_the_eta_is_corrected_by_what_the_finished_parts_took(monkeypatch):
    rates = Rates.from_warmup(WARMUP)
    plan = RunPlan(rates, [Part.of("a", [(500, 100)], rates), Part.of("b", [(500, 100)], rates)])  # 20 s each
    clock = iter([0.0, 40.0, 40.0])  # part a: 40 s, twice its estimate
    monkeypatch.setattr("oracle.run.eta.time.perf_counter", lambda: next(clock))
    eta = RunEta(plan, {"item-a": 0, "item-b": 1})
    eta.started("item-a")
    line = eta.finished("item-a")
    assert line.startswith("oracle run: a took 40 s (estimated 20 s)")
    assert eta.correction() == pytest.approx(2.0) and eta.remaining_s() == pytest.approx(40.0)
    assert plan.parts[0].actual_s == 40.0 and "ETA 40 s" in eta.suffix()


def test_the_plan_in_words_names_what_the_budget_dropped():
    rates = Rates.from_warmup(WARMUP)
    plan = RunPlan(rates, [Part.of("a", [(500, 100)], rates)], budget_s=60, budget_source="--oracle-budget 1m",
                   dropped=[{"item": "needles 8176", "length": 8176, "estimate_s": 160.0,
                             "reason": "needle 8176 would take ~160 s"}])
    words = plan_words(plan.as_json())
    assert words.startswith("~20 s estimated (prefill 50.0 tok/s, decode 10.0 tok/s, from the warm-up)")
    assert "budget 60 s (--oracle-budget 1m); dropped: needle 8176 would take ~160 s" in words
    assert duration_words(600) == "10.0 min" and duration_words(None) == "?"
