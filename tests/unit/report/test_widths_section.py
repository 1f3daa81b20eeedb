"""The width map's section (identity.md, identity.html, the terminal) and the split density beside every count."""

from __future__ import annotations

from oracle.checks import SECTIONS, fresh_states
from oracle.compare.verdicts import Check
from oracle.compare.width_map import width_map
from oracle.report.html import render_html
from oracle.report.markdown import markdown
from oracle.report.state import ReportState
from oracle.report.widths import terminal_lines

SPLITS = {"near_tie_nats": 0.5, "positions": 48, "near_tie_positions": 6, "unmeasured_positions": 0, "flips": 3,
          "tie_flips": 1, "confident_flips": 2, "unmeasured_flips": 0}


def _row(prompt: str, sha: str, first=None, margin=None) -> dict:
    return {"prompt": prompt, "completion_sha256": sha, "c1_sha256": "x",
            "vs_c1": {"verdict": "exact" if sha == "x" else "divergent", "first_divergence": first,
                      "margin_nats": margin, "reason": ""}}


def _report(ladder: str, never_tried=(), *, high: int = 4) -> dict:
    wm = width_map({2: [_row("p", "x")], 3: [_row("p", "y", 4, 0.2)], high: [_row("p", "x")]},
                   proven={2: True, 3: True, high: False}, near_tie_nats=0.5, ladder=ladder, never_tried=never_tried)
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p"], states=fresh_states())
    state.checks = [Check("tokens[p]", "tokens", "near-tie", "", evidence={"first_divergence": 2, "margin_nats": 0.3,
                                                                        "reason": "margin 0.300 nats < 0.5 nats"})]
    counts = {"exact": 2, "near-tie": 1, "within-reference-noise": 0, "divergent": 0}
    state.apply({"ladder": {"c3": {"counts": counts, "records": 3, "required": 3, "verdict": "near-tie",
                                   "first_divergences": [4], "overlap": {"asked": 3, "reached": 3},
                                   "splits": SPLITS}},
                 "width_map": wm.as_json() | {"near_tie_nats": 0.5},
                 "near_tie_density": dict(SPLITS, flips=0, tie_flips=0, confident_flips=0)})
    state.complete = state.closed = True
    return state.as_json()


def test_the_map_in_markdown_and_the_terminal_names_the_first_width_that_parts():
    data = _report("every:4")
    text = markdown(data, SECTIONS)
    assert "## Width map (`--ladder every:4`)" in text
    assert "| c1 | A | c1 run | 1 | 0 | 0 | 0 |" in text  # no level 1: width 1 is the c1 run
    assert "| c3 | B ≈ | yes | 1 | 1 | 1 | 0 |" in text and "| c4 | A | no (inconclusive) |" in text
    assert "- first width that parts from c1: 3" in text and "- class B (width 3): p @4" in text
    assert "never tried" not in text
    assert terminal_lines(data["width_map"]) == [
        "width map (every:4): c1 A · c2 A · c3 B ≈ · c4 A (not proven); first width that parts from c1: 3",
        "class B (width 3): p @4"]


def test_a_plain_list_names_the_widths_it_never_tried():
    data = _report("2,3,8", never_tried=(4, 5, 6, 7), high=8)
    assert "- widths never tried: 4-7" in markdown(data, SECTIONS)
    assert terminal_lines(data["width_map"])[-1] == "widths never tried: 4-7"
    page = render_html(data, SECTIONS)
    at = page.index("aria-label='width map'")
    svg = page[page.rindex("<svg", 0, at):page.index("</svg>", at)]
    assert "url(#untried)" in svg and "widths 4-7 never tried" in svg and "≈" in svg
    assert "http://" not in page and "https://" not in page  # self-contained


def test_every_split_table_gives_the_density_beside_its_flips():
    text = markdown(_report("every:4"), SECTIONS)
    assert "| tie / confident flips | near-tie positions |" in text
    assert "| c3 | 2/3 (0.21–0.94) | 1 | 0 | 0 | 3 | 3/3 | near-tie | 4 | 1 / 2 | 6/48 (12.5%) |" in text
    assert ("Splits vs the reference: 0/1 exact, 1 near-tie, 0 divergent; flips: 1 tie, 0 confident; near-tie "
            "density 6/48 positions (12.5%) < 0.5 nats") in text


def test_no_ladder_no_map():
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p"], states=fresh_states())
    state.complete = state.closed = True
    data = state.as_json()
    assert data["width_map"] is None and "Width map" not in markdown(data, SECTIONS)
    assert terminal_lines(data["width_map"]) == []
