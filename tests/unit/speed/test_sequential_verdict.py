"""The speed item under the sequential test (replayed round medians, no server): a clear speed-up passes with its LLR
path in the report, an identical config fails worded `same speed` within the session's measured band, a close call
at the cap is inconclusive with its rounds and LLR; the band without a control is the session's pass-to-pass spread;
the run plan prices the interleaved rounds, controls, boots and cells; a PASS that allowed near-ties says so in its headline."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import pytest

from oracle.checks.descriptor import PlanContext
from oracle.checks.speed import SpeedChecks, SpeedSettings, SpeedState
from oracle.checks.speed_ab.check import expected_rounds, plan_part
from oracle.checks.speed_ab.options import InterleaveOptions
from oracle.checks.speed_cells.check import plan_part as cells_plan_part
from oracle.compare.verdicts import Check
from oracle.report.header import _headline
from oracle.run.plan_estimate import Part, Rates, duration_words
from oracle.speed.interleave import Measurement, interleaved_comparison
from oracle.speed.noise import spread_band
from oracle.speed.report import headline, markdown_lines, speed_words
from oracle.speed.sequential import Sequential

CARD = {"label": "headline", "reasons": [], "token_times": "bytes-arrival", "condition": "boot1-c1",
        "warmup": {"requests": 1}, "excluded": {}, "min_tokens": 101, "summary": {}, "prompts": {}}
REFERENCE = [100.0, 96.0, 103.0, 99.0, 101.0, 98.0, 100.0, 102.0]  # replayed per-round medians, tok/s


def comparison(ratios: list[float], bar: float = 1.0) -> dict:
    pairs = [(Measurement({"a": r * ref}, "after_ttft_tok_s", cache="pass"),
              Measurement({"a": ref}, "after_ttft_tok_s", cache="pass")) for r, ref in zip(ratios, REFERENCE)]
    versus = interleaved_comparison(pairs, diagnostics=[], launch=None, figure="after_ttft_tok_s",
                                    test=Sequential(bar=bar))
    versus["noise"] = spread_band([math.log(c.median) for c, _ in pairs], [math.log(r.median) for _, r in pairs])
    return versus


def gate(versus: dict, bar: float = 1.0, interleave: dict | None = None):
    settings = SpeedSettings(min_speedup=bar)
    plan = SimpleNamespace(options=SimpleNamespace(check=lambda name: settings))
    card = {**CARD, "vs_reference": versus, **({"interleave": interleave} if interleave else {})}
    state = SimpleNamespace(states={"speed": SpeedState(card)}, complete=True, interruption=None)
    return SpeedChecks(plan, state).speed_check().check


def test_a_pass_with_both_servers_up_and_no_control_says_what_it_cannot_tell():
    """On an H100 two servers of one config, kept up side by side, differed by up to 3% and the sequential test
    passed 5 of 48 A/A sessions: a both-up pass without an A/A control says so; one server at a time does not."""
    for servers, control, caveat in (("both-up", None, True), ("one-at-a-time", None, False),
                                     ("both-up", {"sessions": 1}, False)):
        versus = comparison([1.50, 1.49])
        check = gate(versus, interleave={"servers": servers, "control": control})
        assert check.verdict == "pass", check.detail
        assert check.detail.endswith("; both servers up without --speed-control: two servers of one config differ "
                                     "too (up to 3% on an H100, docs/speed.md), and this session cannot tell that "
                                     "from the config's speed-up; --interleave-servers one-at-a-time or "
                                     "--speed-control N can") is caveat, (servers, control, check.detail)
    slow = gate(comparison([0.80, 0.79, 0.81]), interleave={"servers": "both-up", "control": None})
    assert slow.verdict == "fail" and "both servers up" not in slow.detail


def test_a_clear_speed_up_passes_after_two_rounds_with_its_llr_path_shown():
    versus = comparison([1.50, 1.49])
    check = gate(versus)
    assert (check.verdict, versus["sequential"]["rounds"]) == ("pass", 2), check.detail
    assert "--min-speedup 1: sequential test: pass after 2 rounds (LLR " in check.detail
    assert check.evidence["sequential"]["path"][0]["round"] == 2
    assert check.lines[0].startswith("  LLR by round: r2 ")  # the terminal's lines under the item
    shown = "\n".join(markdown_lines({**CARD, "vs_reference": versus}))
    assert "- LLR by round: r2 " in shown and "bounds [-3.66, 3.66]" in shown
    assert "- sequential test: pass after 2 rounds" in shown


def test_an_identical_config_fails_as_same_speed_within_the_measured_band():
    versus = comparison([1.001, 0.999, 1.0, 1.002, 0.998])
    check = gate(versus)
    assert check.verdict == "fail" and versus["sequential"]["decision"] == "fail", check.detail
    assert versus["noise"]["kind"] == "spread" and "pass-to-pass spread" in versus["noise"]["source"]
    assert ": same speed (within the measured noise +-" in check.detail and "of 1.0: this run's pass-to-pass" in \
        check.detail
    # a candidate truly slower fails without the words `same speed`
    slow = gate(comparison([0.80, 0.79, 0.81]))
    assert slow.verdict == "fail" and "same speed" not in slow.detail and "0.80x slower" in slow.detail


def test_a_close_call_at_the_cap_is_inconclusive_with_its_rounds_and_llr():
    versus = comparison([1.03, 0.99, 1.05, 1.0, 1.06, 0.98, 1.04, 1.01])
    check = gate(versus)
    seq = versus["sequential"]
    assert (seq["decision"], seq["rounds"]) == ("inconclusive", 8), seq
    assert check.verdict == "inconclusive" and check.kind == "speed"
    assert "sequential test: inconclusive after 8 of at most 8 rounds (LLR " in check.detail
    assert check.evidence["not_judged"].startswith("the sequential test reached its cap of 8 rounds undecided (LLR ")


def test_the_run_plan_prices_interleaved_rounds_controls_boots_and_cells():
    """Issue 53: the plan said "about 5 s in all" for a 6-minute A/A gate. Its `interleaved A/B` line prices both
    sides' passes over the sequential test's expected rounds (and says the most it may take), the A/A control's
    sessions alike, a warm-up per boot and, one server at a time, a boot per pass at this run's own boot time; the
    `speed cells` line its repeats on each side and a warm-up per cell and boot."""
    ab = InterleaveOptions(command="x {port}")
    cells = SimpleNamespace(cells=[(512, 128)], repeats=3)
    options = SimpleNamespace(warmup=1, check=lambda name: {"speed_ab": ab, "speed_cells": cells}[name])
    rates = Rates(prefill_tps=1000.0, decode_tps=100.0, source="test")
    context = PlanContext(((100, 24), (80, 24)), options, True, boot_s=30.0)
    part = plan_part("speed_ab", None, context)
    assert expected_rounds(ab) == 5 and len(part.shapes) == 2 * 5 * 2 + 2 * 5  # 10 passes of 2 prompts, a warm-up each
    requests_s = sum(rates.seconds(p, g) for p, g in part.shapes)
    line = Part.of(part.name, list(part.shapes), rates, note=part.note, extra_s=part.extra_s).line()
    assert part.extra_s == 11 * 30.0  # a boot per pass and the candidate's return
    assert line == (f"  interleaved A/B: 30 requests, 2800 prompt + 720 generated tokens, "
                    f"~{duration_words(requests_s + 330.0)} (sequential test: ~5 ABBA rounds expected, at most 8 "
                    "(up to 1.6x this estimate); reference and candidate each pass; 11 server boot(s) at 30 s each "
                    "(this run's boot))"), line
    ab = InterleaveOptions(command="x {port}", rounds=4, control=2, servers="both-up")
    part = plan_part("speed_ab", None, context)
    assert len(part.shapes) == 3 * 2 * 4 * 2 + 3 and "4 ABBA rounds, 2 A/A control session(s) alike" in part.note
    assert part.extra_s == 2 * 30.0 and "; 2 server boot(s) at 30 s each" in part.note  # the reference's, the control's
    unlaunched = plan_part("speed_ab", None, PlanContext(((100, 24),), options, True))
    assert unlaunched.extra_s == 0 and "2 server boot(s), not priced (this run's server was not launched" in unlaunched.note
    # the cells, one server at a time: each side's repeat on a boot of its own, a warm-up per cell on each
    ab = InterleaveOptions(command="x {port}")
    cell_part = cells_plan_part("speed_cells", None, context)
    assert len(cell_part.shapes) == 3 * 2 + 3 * 2 and cell_part.extra_s == (2 * 3 + 1) * 30.0
    assert cell_part.note == ("3 repeats and 6 warm-up(s) per cell, on each side (interleaved); 7 server boot(s) at "
                              "30 s each (this run's boot)")


def test_a_pass_that_allowed_near_ties_says_so_in_its_headline():
    checks = [Check(f"tokens[p{i}]", "tokens", "exact", outcome="passed").as_dict() for i in range(9)]
    checks += [Check(f"tokens[q{i}]", "tokens", "near-tie", outcome="passed").as_dict() for i in range(3)]
    data = {"verdict": "pass", "mode": "gate", "summary": {"exact": [9, 12]}, "checks": checks}
    assert _headline(data) == "PASS: 9/12 exact, 3 near-ties allowed"
    data["checks"] = checks[:9] + [Check("tokens[q]", "tokens", "near-tie", outcome="failed").as_dict()]
    assert _headline({**data, "verdict": "fail", "summary": {"exact": [9, 10]}}) == "FAIL: 9/10 exact"


def test_the_headline_and_the_items_detail_give_one_ratio_definition():
    """Issue 53: `0.99x slower [0.88, 1.12]` beside medians that favoured the candidate. The headline's speed part and
    the speed item's detail are the same words, and the figures they show are the ratio's own terms: the quotient of
    the geometric means shown is the point."""
    versus = comparison([1.30, 1.21, 1.26])
    said = speed_words(versus)
    assert headline({**CARD, "vs_reference": versus}) == said
    assert gate(versus).detail.startswith(said + "; --min-speedup 1: sequential test: "), gate(versus).detail
    shown = re.search(r"geometric mean ([\d.]+) vs ([\d.]+) tok/s", said)
    assert shown and float(shown[1]) / float(shown[2]) == pytest.approx(versus["median"], rel=2e-3), said
