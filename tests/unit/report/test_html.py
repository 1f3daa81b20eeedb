"""The HTML report's grid, split viewer and self-containment from a hand-built report (fast)."""

from __future__ import annotations

from oracle.checks import SECTIONS, fresh_states
from oracle.report.html import grid, render_html
from oracle.report.writer import ReportState
from oracle.compare.verdicts import Check


def split(position):
    side = {"ids": [5, 6], "text": "ab", "top": [[5, -0.1, "a"], [9, -2.5, "<b>"]], "finish": "length", "length": 32}
    return {"position": position, "shared_text": "x < y", "shared_ids": [1], "reference": side, "candidate": side}


def state() -> ReportState:
    s = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p1", "p2"], states=fresh_states())
    s.checks = [
        Check("tokens[p1]", "tokens", "exact", "32/32", evidence={"first_divergence": None}, outcome="passed"),
        Check("tokens[p2]", "tokens", "divergent", "first divergence at token 7",
              evidence={"first_divergence": 7, "split": split(7)}, outcome="failed"),
        Check("ladder[c16]", "ladder", "inconclusive", "c16: 2/2", outcome="failed", evidence={
            "overlap": {"asked": 16, "reached": 8},
            "rows": [{"prompt": "p1", "record": "p1", "verdict": "exact", "vs_c1": {"verdict": "exact",
                      "first_divergence": None}, "vs_reference": None},
                     {"prompt": "p2", "record": "p2~1", "verdict": "near-tie", "split": split(3),
                      "vs_c1": {"verdict": "near-tie", "first_divergence": 3}, "vs_reference": None}]}),
    ]
    s.apply({"ladder": {"c16": {"counts": {"exact": 1}, "records": 2, "overlap": {"asked": 16, "reached": 8}}}})
    s.complete = s.closed = True
    return s


def test_grid_has_a_row_per_prompt_and_a_column_per_condition():
    columns, cells = grid(state().as_json())
    assert [c["title"] for c in columns] == ["vs reference", "c16"]
    assert "overlap 8/16 (not proven)" == columns[1]["note"]
    assert cells["p2"]["reference"]["label"] == "divergent @7"
    assert cells["p1"]["ladder[c16]"]["verdict"] == "inconclusive"
    assert cells["p2"]["ladder[c16]"]["label"] == "inconclusive: near-tie @3"


def test_page_is_self_contained_escaped_and_labelled():
    page = render_html(state().as_json(), SECTIONS)
    assert "<script" not in page and "http://" not in page and "https://" not in page
    assert "x &lt; y" in page and "&#x27;&lt;b&gt;&#x27;" in page  # decoded text is escaped, never markup
    assert "data-verdict='divergent'>" in page and "divergent @7</a>" in page
    assert "id='split-p2-reference'" in page and "href='#split-p2-reference'" in page
    assert "<svg" in page and "Achieved overlap per ladder level" in page


def test_counts_show_their_wilson_interval_on_hover_and_in_the_detail():
    s = state()
    s.states["conditions"].ladder["c16"]["confidence"] = {"exact": {"k": 1, "n": 2, "wilson95": [0.0945, 0.9055]}}
    s.apply({"canaries": {"code[a]": {"family": "code", "ok": True, "verdict": "pass"}}})
    page = render_html(s.as_json(), SECTIONS)
    assert "<span title='Wilson 95% 0.09–0.91'>1/2 exact</span>" in page  # the header's exact prompts
    assert "<span title='Wilson 95% 0.09–0.91'>c16 1/2</span>" in page
    assert "title='code 1/1: Wilson 95% 0.21–1.00'" in page
    assert "<th title='exact 1/2, Wilson 95% 0.09–0.91'>c16" in page  # the condition's column head
    assert "title='exact 1/2, Wilson 95% 0.09–0.91'>vs reference" in page
    assert "<summary>Counts with their Wilson 95% intervals</summary>" in page
    for row in ("<td>exact prompts</td><td>1/2</td><td>0.0945–0.9055</td>",
                "<td>c16 exact</td><td>1/2</td><td>0.0945–0.9055</td>",
                "<td>canaries code</td><td>1/1</td><td>0.2065–1.0000</td>"):
        assert row in page


def test_a_prompt_sent_several_times_at_a_level_shows_its_own_interval_on_hover():
    s = state()
    rows = s.checks[2].evidence["rows"]
    rows.append(dict(rows[0], record="p1~2"))  # p1 twice at c16, both exact
    columns, cells = grid(s.as_json())
    assert cells["p1"]["ladder[c16]"]["hover"] == "2/2 of this prompt's requests exact, Wilson 95% 0.34–1.00"
    assert "title='2/2 of this prompt&#x27;s requests exact, Wilson 95% 0.34–1.00'" in render_html(s.as_json(), SECTIONS)
