"""The interleaved session in the report: its section (Markdown and HTML), the comparison's words with the
interval each comparison has (between-run, or within-run when the reference was measured in another run)."""

from __future__ import annotations

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
    assert said.endswith("(post-first decode median 50.5 vs 100.5 tok/s, 3 rounds interleaved, headline)"), said
    title, sentence = comparison_words(versus)
    assert title == "Against the reference, interleaved in this session"
    assert "(Student t 95% interval over 3 paired ABBA rounds: between-run)." in sentence
    assert headline({"label": "insufficient", "vs_reference": versus}) == said


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
    html = interleave_report.html(_data())
    assert html.startswith("<h2>Interleaved A/B speed (speed-ab)</h2>") and "<td>reference</td>" in html
    assert interleave_report.markdown({"speed": {}}) == [] and interleave_report.html({}) == ""
