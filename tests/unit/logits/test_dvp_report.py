"""The decode-vs-prefill section: identity.md lines and the HTML fragment from one identity.json dict."""

from __future__ import annotations

from oracle.logits import dvp_report
from oracle.logits.decode_prefill import compare_rows, summarize_rows

TOKENS, IDS = [5, 7, 9], [[5, 1], [7, 2], [9, 3]]
LPS = [[-0.1, -2.5], [-0.2, -1.9], [-0.3, -1.5]]


def _data() -> dict:
    rows = {"p1": compare_rows(TOKENS, IDS, LPS, IDS, [LPS[0], LPS[1], [-0.3, -1.25]])}
    return {"decode_vs_prefill": {
        "definition": "what is compared", "scoring": "one request per position", "top_k": 2, "tolerance_nats": None,
        "modes": {"one-pass": {"chunk": None, **summarize_rows(rows), "errors": {"p2": "HTTP 500"}},
                  "chunks-64": {"chunk": 64, "not_offered": "a launch setting"},
                  "chunks-512": {"chunk": 512, "served_batch": True, "not_reached": "every prefix fits"}}}}


def test_markdown_states_each_mode_and_exactness_as_such():
    text = "\n".join(dvp_report.markdown(_data()))
    assert "## Decode vs prefill" in text and "reported only (no --dvp-max-delta)" in text
    assert "| one-pass | **overall** | 2 | 1/2 | 0.25 | 2: -1.5 / -1.25 | 100.00 % |" in text
    assert "| one-pass | p2 | not compared: HTTP 500 |" in text
    assert "| chunks-64 | not offered: a launch setting |" in text
    assert "| chunks-512 (the server's batch) | not reached: every prefix fits |" in text


def test_html_has_the_same_rows_and_nothing_without_the_key():
    page = dvp_report.html(_data())
    assert page.startswith("<h2>Decode vs prefill</h2>") and "not offered: a launch setting" in page
    assert "<td>1/2</td>" in page
    assert dvp_report.html({}) == "" and dvp_report.markdown({"decode_vs_prefill": None}) == []
    assert "Not offered: no prefill" in dvp_report.html({"decode_vs_prefill": {"not_offered": "no prefill"}})
