"""identity.md from a hand-built report: the condition table and the counts with their Wilson intervals."""

from __future__ import annotations

from oracle.checks import SECTIONS, fresh_states
from oracle.compare.verdicts import Check
from oracle.report.markdown import markdown
from oracle.report.state import ReportState


def test_condition_table_and_summary_line_carry_wilson_intervals():
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=[f"p{i}" for i in range(8)], states=fresh_states())
    state.checks = [Check(f"tokens[p{i}]", "tokens", "exact" if i else "near-tie", "") for i in range(8)]
    counts = {"exact": 7, "near-tie": 1, "within-reference-noise": 0, "divergent": 0}
    state.apply({"ladder": {"c8": {"counts": counts, "records": 8, "required": 8, "verdict": "near-tie",
                                   "first_divergences": [12], "overlap": {"asked": 8, "reached": 8}}},
                 "boots": {"2": {"counts": dict(counts, exact=8, **{"near-tie": 0}), "records": 8, "required": 8,
                                 "verdict": "exact", "first_divergences": []}}})
    state.complete = state.closed = True
    text = markdown(state.as_json(), SECTIONS)
    assert "| condition | exact (Wilson 95%) | near-tie |" in text
    assert "| c8 | 7/8 (0.53–0.98) | 1 | 0 | 0 | 8 | 8/8 | near-tie | 12 |" in text
    assert "| boot 2 | 8/8 (0.68–1.00) | 0 |" in text
    assert "- Wilson 95% intervals: exact 7/8 (0.53–0.98) · boots 2/2 (0.34–1.00)" in text


def test_the_headline_names_logprobs_moved_items_and_the_option_that_passed_them():
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p0", "p1"], states=fresh_states())
    state.checks = [Check("tokens[p0]", "tokens", "logprobs-moved", "", outcome="passed"),
                    Check("tokens[p1]", "tokens", "exact", "", outcome="passed")]
    state.complete = state.closed = True
    title = markdown(state.as_json(), SECTIONS).splitlines()[0]
    assert title.startswith("# oracle gate: PASS: 1/2 exact · logprobs moved in 1 item (1 passed by "
                            "--allow-logprobs-moved)"), title
    state.checks[0].outcome = "failed"
    title = markdown(state.as_json(), SECTIONS).splitlines()[0]
    assert title.startswith("# oracle gate: FAIL: 1/2 exact · logprobs moved in 1 item"), title
    assert "passed by" not in title
