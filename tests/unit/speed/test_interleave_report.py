"""The interleaved session in the report: its section (Markdown and HTML), the comparison's words with the
interval each comparison has (between-run, or within-run when the reference was measured in another run)."""

from __future__ import annotations

import pytest

from oracle.speed import interleave_report
from oracle.speed.interleave import Measurement, control_summary, interleaved_comparison
from oracle.speed.report import comparison_words, headline, speed_words


def _versus() -> dict:
    m = lambda r: Measurement(rates={"a": r, "b": r + 1}, figure="after_ttft_tok_s", cache="pass")  # noqa: E731
    return interleaved_comparison([(m(50.0), m(100.0)), (m(52.0), m(98.0)), (m(49.0), m(101.0))],
                                  diagnostics=[], launch={"label": "matched", "speculation": [], "other": []},
                                  figure="after_ttft_tok_s")


def _data() -> dict:
    p = Measurement(rates={"a": 50.0}, figure="after_ttft_tok_s", wall_s=0.5, tokens=24, cache="pass", boot=2)
    block = {"servers": "one-at-a-time", "rounds": 1, "order": ["ab: AB"], "figure": "after_ttft_tok_s",
             "reference_launch": "llama-server --port {port}", "control": control_summary([[0.9, 1.1], [1.01, 1.2]]),
             "passes": [{"session": "ab", "round": 1, "side": "reference", **p.as_json()}]}
    return {"speed": {"interleave": block, "vs_reference": _versus()}}


def test_the_interleaved_words_say_rounds_and_between_run():
    versus = _versus()
    said = speed_words(versus)
    assert said.startswith("0.5") and "x slower [" in said
    # the figures shown are the terms of the ratio: geometric means over the rounds, whose quotient is the point
    assert said.endswith("(post-first decode geometric mean 50.8 vs 100.2 tok/s over 3 rounds interleaved, "
                         "headline)"), said
    assert versus["candidate_geomean"] / versus["reference_geomean"] == pytest.approx(versus["median"], rel=1e-3)
    title, sentence = comparison_words(versus)
    assert title == "Against the reference, interleaved in this session"
    assert "(Student t 95% interval over 3 paired ABBA rounds: between-run)." in sentence
    assert headline({"label": "insufficient", "vs_reference": versus}) == said


def test_one_ratio_definition_no_slower_beside_medians_that_favour_the_candidate():
    """The H100 words `0.99x slower [0.88, 1.12]` beside `568.9 vs 564.7 tok/s`: medians over rounds favoured the
    candidate while the geometric mean of the paired ratios did not. The words now show the ratio's own terms."""
    rounds = [(570.0, 560.0), (571.0, 565.0), (500.0, 600.0), (572.0, 566.0)]  # (candidate, reference) medians
    pairs = [(Measurement({"a": c}, "after_ttft_tok_s", cache="pass"),
              Measurement({"a": r}, "after_ttft_tok_s", cache="pass")) for c, r in rounds]
    versus = interleaved_comparison(pairs, diagnostics=[], launch=None, figure="after_ttft_tok_s")
    assert versus["candidate_median"] > versus["reference_median"] and versus["median"] < 1  # the old disagreement
    said = speed_words(versus)
    cand, ref = versus["candidate_geomean"], versus["reference_geomean"]
    assert cand < ref and f"geometric mean {cand:.1f} vs {ref:.1f} tok/s" in said, said
    assert said.startswith(f"{versus['median']:.2f}x slower") or said.startswith("same speed")


def test_a_point_within_the_measured_band_reads_same_speed():
    versus = {**_versus(), "median": 0.985, "noise": {"fraction": 0.021, "measured": True, "source": "s"}}
    assert speed_words(versus).startswith("same speed (0.985x, within the measured noise +-2.1%) [")
    assert speed_words({**versus, "noise": {"fraction": 0.01, "measured": True, "source": "s"}}).startswith(
        "0.98x slower [")
    # the stated floor (a recorded reference) is no measurement: it never words a point `same speed`
    assert speed_words({**versus, "noise": {"fraction": 0.05, "measured": False, "source": "s"}}).startswith("0.98x")


def test_a_recorded_comparison_prints_its_ratio_definition_when_the_medians_would_say_otherwise():
    recorded = {"label": "headline", "median": 0.99, "ci95": [0.95, 1.03], "prompts": 11, "candidate_median": 101.0,
                "reference_median": 100.0, "interval": "within-run"}
    assert "(median of the per-prompt ratios; conventional decode median 101.0 vs 100.0 tok/s" in \
        speed_words(recorded)
    agreeing = {**recorded, "median": 1.01}
    assert "(conventional decode median 101.0 vs 100.0 tok/s, 11 prompts, headline)" in speed_words(agreeing)


def test_a_recorded_comparison_says_the_reference_ran_elsewhere():
    recorded = {"label": "headline", "median": 1.1, "ci95": [1.0, 1.2], "min": 0.9, "max": 1.3, "prompts": 11,
                "candidate_median": 110.0, "reference_median": 100.0, "interval": "within-run"}
    title, sentence = comparison_words(recorded, recorded=True)
    assert title == "Against the recorded reference (reference measured in another run)"
    assert sentence.endswith("(bootstrap 95% interval of the median over prompts: within-run).")


def test_the_section_lists_every_pass_and_the_control():
    md = "\n".join(interleave_report.markdown(_data()))
    assert "## Interleaved A/B speed (speed-ab)" in md and "order (A = reference, B = candidate" in md
    assert "| ab | 1 | reference | 50.0 | 1 | 24 | 0.50 | pass | credible | 2 |" in md
    assert "A/A control: 1 of 2 intervals excluded 1.0" in md and "[1.01, 1.20]" in md
    assert "- design: 1 fixed ABBA rounds" in md
    sequential = _data()
    sequential["speed"]["interleave"].update(design="sequential", rounds=None, rounds_max=8)
    assert "- design: the sequential test, each session until it decides, at most 8 rounds" in \
        "\n".join(interleave_report.markdown(sequential))
    html = interleave_report.html(_data())
    assert html.startswith("<h2>Interleaved A/B speed (speed-ab)</h2>") and "<td>reference</td>" in html
    assert interleave_report.markdown({"speed": {}}) == [] and interleave_report.html({}) == ""
