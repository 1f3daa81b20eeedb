"""identity.json's `localize` key (--localize on a split) as the report shows it: a table in identity.md, the curve
in identity.html, the `not-run` reason; no section without the key; the state reads the key back. The key written by
a real gate: tests/servers/test_localize_gate.py."""

from __future__ import annotations

from oracle.report.localized import html, markdown, summary_of
from oracle.report.state import ReportState


def _localize_json() -> dict:
    rows = [{"name": n, "layer": k, "whole": w, "relative_error": rel, "cosine": 1.0, "max_abs_diff": rel,
             "band": 0.0, "limit": 1e-6, "out_of_band": rel > 1e-6, "lens_reference": None, "lens_candidate": None,
             "lens_changed": False}
            for n, k, w, rel in (("embed", -1, False, 0.0), ("layers.0.mlp", 0, False, 0.0), ("layers.0", 0, True, 0.0),
                                 ("layers.1.mlp", 1, False, 0.02), ("layers.1", 1, True, 0.03))]
    return {"status": "localized", "exit_code": 0, "answer": "first layer out of band: layers.1 (relative error "
            "0.03, band 0); first part out of band: layers.1.mlp", "prompt": "p", "split": 3,
            "reference": {"label": "hf-cpu float32"}, "candidate": {"label": "hf-cpu float16"},
            "localize": {"band_rule": {"factor": 2.0, "floor": 1e-6}, "first_out_of_band": "layers.1.mlp",
                         "first_layer_out_of_band": "layers.1", "first_lens_change": None, "notes": [], "rows": rows}}


def test_the_summary_keeps_the_curves_rows_and_the_first_row_out_of_band():
    loc = summary_of(_localize_json(), "/r/gate-localize")
    assert [r["name"] for r in loc["rows"]] == ["embed", "layers.0", "layers.1.mlp", "layers.1"]
    assert loc["folder"] == "/r/gate-localize" and loc["first_layer_out_of_band"] == "layers.1"


def test_the_table_and_the_curve():
    data = {"localize": summary_of(_localize_json(), "/r/gate-localize")}
    md = "\n".join(markdown(data))
    assert "## Localize (`--localize`)" in md and "**first layer out of band: layers.1" in md
    assert "| layers.1.mlp | 0.02 | 0 | **first** |" in md and "| layers.1 | 0.03 | 0 | yes |" in md
    page = html(data)
    assert "<section id=localize>" in page and "<svg" in page and "first out of band: layers.1" in page


def test_not_run_says_why_and_no_key_no_section():
    data = {"localize": {"status": "not-run", "detail": "not run: this runner shows no layers"}}
    assert "- not run: this runner shows no layers" in markdown(data) and "<svg" not in html(data)
    assert markdown({}) == [] and html({}) == ""


def test_the_state_writes_the_key_only_when_set_and_reads_it_back():
    state = ReportState(mode="gate", backend="hf-cpu")
    assert "localize" not in state.as_json()
    state.localize = summary_of(_localize_json(), "/r/gate-localize")
    assert ReportState.from_json(state.as_json()).localize == state.localize
