"""Report sections: each renders its Markdown and its HTML from the identity.json dict, and both documents are
the sections in their PLACE order; a new section is its module, with its PLACE, named by its check's descriptor."""

from types import SimpleNamespace

import pytest

from oracle.checks import CHECKS, SECTIONS, fresh_states
from oracle.compare.verdicts import Check
from oracle.report import sections
from oracle.report.html import render_html
from oracle.report.markdown import markdown
from oracle.report.state import ReportState


def _states() -> list[ReportState]:
    fresh = ReportState(mode="run", backend="llamacpp", states=fresh_states())
    ran = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p"], complete=True, closed=True,
                      states=fresh_states(), notes=["a note"])
    ran.apply({"canaries": {"code[a]": {"family": "code", "ok": False, "verdict": "fail", "expected": "14",
                                        "extracted": "15"}}})
    ran.checks = [Check("tokens[p]", "tokens", "exact", "ok", outcome="passed")]
    runner = ReportState(mode="gate", backend="python:r.py:make", prompt_ids=["p"], complete=True, closed=True,
                         states=fresh_states())
    runner.apply({"prompt_logprob": {"candidate": -3.5, "reference": -3.2, "delta": -0.3},
                  "chunked_prefill": {"modes": {"chunks-4": {"chunk": 4, "overall": {"positions": 3,
                                      "max_abs_delta": 0.01}, "top1_differs": [], "longest_prefix_tokens": 40},
                                      "chunks-64": {"chunk": 64, "not_reached": "fits in one chunk"}}}})
    return [fresh, ran, runner]


@pytest.mark.parametrize("state", _states(), ids=["fresh", "ran", "runner"])
def test_every_section_renders_both_documents_from_the_json_dict(state):
    data = state.as_json()
    for section in SECTIONS:
        lines, page = section.markdown(data), section.html(data)
        assert isinstance(lines, list) and all(isinstance(x, str) for x in lines), section.__name__
        assert isinstance(page, str), section.__name__
    md = markdown(data, SECTIONS)
    assert md == "\n".join(x for s in SECTIONS for x in s.markdown(data)) + "\n"
    page = render_html(data, SECTIONS)
    parts = [s.html(data) for s in SECTIONS if s.html(data)]
    positions = [page.index(part) for part in parts]
    assert positions == sorted(positions)  # the page shows the sections in the registry's order


def test_the_capabilities_own_their_sections():
    """speed, logits and canaries render both their documents from their own package."""
    owners = {s.__name__ for s in SECTIONS}
    assert {"oracle.speed.report", "oracle.logits.report", "oracle.canary.report"} <= owners
    data = _states()[1].as_json()
    assert "- canaries: code 0/1" in markdown(data, SECTIONS) and "<h2>Canaries</h2>" in render_html(data, SECTIONS)


def test_the_page_is_the_reports_frame_and_every_checks_sections_by_place():
    named = {m.__name__ for c in CHECKS for m in c.sections}
    assert {m.__name__ for m in SECTIONS} == named | {m.__name__ for m in sections.FRAME}
    places = [m.PLACE for m in SECTIONS]
    assert places == sorted(places) and len(set(places)) == len(places)
    assert SECTIONS[0].__name__ == "oracle.report.header" and SECTIONS[-1].__name__ == "oracle.report.notes"


def test_a_new_section_is_its_module_named_by_its_check():
    """No list to edit: a section a check names stands at its PLACE; one without PLACE, or at a taken one, is
    refused when the registry lays out the page."""
    extra = SimpleNamespace(__name__="oracle.example.report", PLACE=138,
                            markdown=lambda data: ["", f"## Extra: {data['mode']}"],
                            html=lambda data: f"<h2>Extra: {data['mode']}</h2>")
    page = sections.layout([*SECTIONS, extra])
    assert page[-2] is extra and page[-1].__name__ == "oracle.report.notes"
    data = _states()[0].as_json()
    assert "\n## Extra: run\n" in markdown(data, page)
    assert "<h2>Extra: run</h2>" in render_html(data, page)
    with pytest.raises(ValueError, match="has no PLACE"):
        sections.layout([SimpleNamespace(__name__="oracle.example.bare", markdown=None, html=None)])
    with pytest.raises(ValueError, match="both stand at PLACE 140"):
        sections.layout([SimpleNamespace(__name__="oracle.example.late", PLACE=140)])
