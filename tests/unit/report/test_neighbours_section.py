"""The neighbours' section (identity.md, identity.html, the terminal) and the width map picture's neighbour row."""

from __future__ import annotations

import re

from oracle.checks import SECTIONS, fresh_states
from oracle.compare.width_map import outputs_of, width_map
from oracle.report.html import render_html
from oracle.report.markdown import markdown
from oracle.report.neighbours import terminal_lines
from oracle.report.state import ReportState

NATS = 0.5
DROPPED = ("neighbour of 9000 tokens not sent: with its 8 answer tokens it exceeds the server's context of 8192 "
           "tokens (--ctx-size); drop 9000 from --neighbours or give the server more context")


def _row(prompt: str, sha: str, first=None, margin=None) -> dict:
    same = sha == prompt + "1"
    return {"prompt": prompt, "completion_sha256": sha, "c1_sha256": prompt + "1",
            "verdict": "exact" if same else "divergent",
            "vs_c1": {"verdict": "exact" if same else "divergent", "first_divergence": None if same else first,
                      "margin_nats": margin, "reason": ""}, "vs_reference": None}


def _beside(rows: list[dict], overlap: dict[str, int], verdict: str | None = None) -> dict:
    """A neighbour length's identity.json row, as oracle/checks/neighbours/producer.py writes it."""
    exact = sum(r["verdict"] == "exact" for r in rows)
    return {"verdict": verdict or ("exact" if exact == len(rows) else "divergent"), "detail": "",
            "counts": {"exact": exact, "divergent": len(rows) - exact}, "records": len(rows), "overlap": overlap,
            "wall_s": 1.0, "exact_vs_c1": exact,
            "splits": [{"prompt": r["prompt"], "position": r["vs_c1"]["first_divergence"], "verdict": r["verdict"]}
                       for r in rows if r["verdict"] != "exact"]} | outputs_of(rows, near_tie_nats=NATS)


def _report(*, ladder: bool = True) -> dict:
    both = {"a": 2, "b": 2}
    neighbours = {
        "1": _beside([_row("a", "a1"), _row("b", "b1")], both),
        "9": _beside([_row("a", "a2", 3, 2.0), _row("b", "b1")], both),  # width 3's arrays: its class, B
        "10": _beside([_row("a", "a1"), _row("b", "b5", 6, 0.1)], both),  # arrays no width gave, a tie flip
        "64": _beside([_row("a", "a1"), _row("b", "b1")], {"a": 2, "b": 1}, "inconclusive"),  # b decoded alone
        "9000": {"verdict": "dropped", "detail": DROPPED}}
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["a", "b"], states=fresh_states())
    update: dict = {"neighbours": neighbours}
    if ladder:
        wm = width_map({2: [_row("a", "a1"), _row("b", "b1")], 3: [_row("a", "a2", 3, 2.0), _row("b", "b1")]},
                       proven={2: True, 3: True}, near_tie_nats=NATS, ladder="1,2,3")
        update["width_map"] = wm.as_json() | {"near_tie_nats": NATS}
    state.apply(update)
    state.complete = state.closed = True
    return state.as_json()


def _svg(page: str, label: str) -> str:
    at = page.index(f"aria-label='{label}'")
    return page[page.rindex("<svg", 0, at):page.index("</svg>", at)]


def test_markdown_names_each_length_its_counts_overlap_class_and_splits():
    text = markdown(_report(), SECTIONS)
    assert "## Neighbours (`--neighbours 1,9,10,64,9000`)" in text
    assert text.index("## Width map") < text.index("## Neighbours")
    assert "| neighbour | verdict | exact vs c1 | records | overlap proven | class | splits |" in text
    assert "| 1 token | exact | 2/2 | 2 | yes (2/2 prompts) | A | - |" in text
    assert "| 9 tokens | divergent | 1/2 | 2 | yes (2/2 prompts) | B | a at token 3 (divergent) beside a 9-token " \
           "neighbour |" in text
    assert "| 10 tokens | divergent | 1/2 | 2 | yes (2/2 prompts) | C ≈ | b at token 6 (divergent) beside a " \
           "10-token neighbour |" in text
    assert "| 64 tokens | inconclusive | 2/2 | 2 | no: 1 of 2 prompts decoded without their neighbour (inconclusive) | A |" \
           in text
    assert f"| 9000 tokens | dropped | - | - | - | - | {DROPPED} |" in text
    assert "- neighbour lengths that change the prompts' outputs: 9, 10 tokens" in text


def test_the_terminal_line_says_the_same():
    data = _report()
    assert terminal_lines(data["neighbours"]) == [
        "neighbours: 1 token 2/2 exact, c1's outputs · 9 tokens 1/2 exact, other outputs · 10 tokens 1/2 exact, "
        "other outputs ≈ · 64 tokens 2/2 exact, c1's outputs (overlap not proven) · 9000 tokens dropped; neighbour "
        "lengths that change the prompts' outputs: 9, 10 tokens"]
    assert terminal_lines(None) == terminal_lines({}) == []


def test_the_width_maps_picture_has_a_neighbour_row_in_the_widths_classes():
    page = render_html(_report(), SECTIONS)
    svg = _svg(page, "width map and neighbour lengths")
    assert ">neighbour</text>" in svg and ">width</text>" in svg
    cells = re.findall(r"<title>beside a (\d+)-token prompt: ([^<]*)</title><rect[^>]*fill='([^']*)'", svg)
    fills = {n: fill for n, _, fill in cells}
    widths = dict(re.findall(r"<title>c(\d): class \w[^<]*</title><rect[^>]*fill='([^']*)'", svg))
    assert fills["1"] == widths["2"] and fills["9"] == widths["3"] != widths["2"]  # A; width 3's class B
    assert fills["10"] not in widths.values() and fills["9000"] == "url(#untried)"
    tips = {n: tip for n, tip, _ in cells}
    assert tips["10"].startswith("class C, 1/2 records split from c1, 1 tie flip(s)")
    assert tips["64"].endswith("overlap not proven") and "exceeds the server&#x27;s context" in tips["9000"]
    assert svg.count("≈") == 1  # the 10-token neighbour's tie flip; no width has one
    section = page[page.index("<h2 id=neighbours>"):]
    assert "<td>no: 1 of 2 prompts decoded without their neighbour (inconclusive)</td>" in section
    assert "<svg" not in section and "under the width map above" in section


def test_without_a_ladder_the_neighbours_section_draws_the_row_itself():
    page = render_html(_report(ladder=False), SECTIONS)
    assert "Width map" not in page
    svg = _svg(page, "neighbour lengths")
    assert page.index("<h2 id=neighbours>") < page.index(svg)
    assert ">9<" in svg and ">C ≈" not in svg and ">B</text>" in svg  # no width classes: 9 is B, 10 is C
    assert "http://" not in page and "https://" not in page


def test_no_neighbours_no_section():
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p"], states=fresh_states())
    state.complete = state.closed = True
    data = state.as_json()
    assert "Neighbours" not in markdown(data, SECTIONS) and "id=neighbours" not in render_html(data, SECTIONS)
