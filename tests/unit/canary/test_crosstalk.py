"""Crosstalk canary, fast layer: markers, the prompt, and the detection of another request's content."""

from __future__ import annotations

import pytest

from oracle.canary import crosstalk_report
from oracle.canary.crosstalk import (KGRAM, MARKER_WORDS, MARKER_WORDS_POOL, find_contamination,
                                     level_verdict, marker_prompt, request_names, wave_markers)
from oracle.canary.report import markdown_lines
from oracle.canary.results import canary_summary, family_counts
from oracle.compare.verdicts import CONTAMINATED, INCONCLUSIVE, PASS, Check, passed
from oracle.checks import INCONCLUSIVE_KINDS

# Token ids stand for words: 1-9 the template and newline, 10s request 0's marker, 20s request 1's, 30s
# request 2's.
TEMPLATE = [1, 2, 3]
MARKERS = [[11, 12, 13, 14], [21, 22, 23, 24], [31, 32, 33, 34]]
NL = 9


def _prompt(m):
    return TEMPLATE + m + [4] + m + [NL] + m + [NL]


def _copy(m, times=3):
    out = []
    for _ in range(times):
        out += m + [NL]
    return out


PROMPTS = [_prompt(m) for m in MARKERS]
BASELINES = [_copy(m) for m in MARKERS]


def _find(outputs, baselines=BASELINES):
    return find_contamination(outputs, baselines, PROMPTS)


def test_markers_are_reproducible_unique_and_share_no_word_within_a_wave():
    a = wave_markers(8, seed=1234, level=8)
    assert a == wave_markers(8, seed=1234, level=8)
    assert a != wave_markers(8, seed=1235, level=8) and a != wave_markers(8, seed=1234, level=4)[:8]
    words = [w for m in a for w in m.split()]
    assert all(len(m.split()) == MARKER_WORDS for m in a)
    assert len(words) == len(set(words))
    assert len(MARKER_WORDS_POOL) == len(set(MARKER_WORDS_POOL)) >= 180
    many = wave_markers(200, seed=1, level=200)  # beyond the pool: words repeat, markers never do
    assert len(set(many)) == 200


def test_the_prompt_asks_for_the_marker_and_opens_a_numbered_list_of_it():
    messages, opening = marker_prompt("apple river candle marble")
    content = "Write the code apple river candle marble five times, numbered."
    assert messages == [{"role": "user", "content": content}]
    assert opening == "1. apple river candle marble\n2. apple river candle marble\n3."


def test_own_marker_copied_is_clean():
    assert _find(BASELINES) == []


def test_failing_to_copy_its_own_marker_the_same_way_as_at_c1_is_not_contamination():
    wrong = [11, 12, 5, 6, NL, 7, 7, 7]  # request 0 garbles its own marker, at c1 and under load alike
    assert _find([wrong, BASELINES[1], BASELINES[2]], [wrong, BASELINES[1], BASELINES[2]]) == []


def test_another_requests_whole_marker_is_contamination_naming_both_and_the_position():
    out = MARKERS[0] + [NL] + MARKERS[2] + [NL]
    found = _find([out, BASELINES[1], BASELINES[2]])
    assert len(found) == 1
    f = found[0]
    assert (f.victim, f.source, f.position) == (0, 2, 5)
    assert f.sign == "divergence"  # its first split from c1 (token 5) starts request 2's text
    assert f.describe() == ("request 1 holds request 3's content at token 5: its first divergence from its "
                            "own c1 output continues request 3's text [31]")
    assert "r1 holds r3's content at token 5" in f.describe(names=["r1", "r2", "r3"])


def test_a_partial_kgram_later_in_the_completion_is_found():
    # request 1 diverges on its own (a token nobody has) and only later shows 3 tokens of request 0's marker
    out = MARKERS[1] + [NL, 21, 8, 8, 8, 12, 13, 14, NL]
    found = _find([BASELINES[0], out, BASELINES[2]])
    assert [(f.victim, f.source, f.position, f.piece, f.sign) for f in found] == [
        (1, 0, 9, (12, 13, 14), "k-gram")]


def test_a_single_swapped_token_at_the_first_divergence_is_found():
    out = list(BASELINES[2])
    out[6] = 23  # one token of request 1's marker where request 2 had its own
    found = _find([BASELINES[0], BASELINES[1], out])
    assert [(f.victim, f.source, f.position, f.sign) for f in found] == [(2, 1, 6, "divergence")]


def test_both_requests_of_a_swap_are_named():
    a, b = list(BASELINES[0]), list(BASELINES[1])
    a[5:8], b[5:8] = b[5:8], a[5:8]
    found = _find([a, b, BASELINES[2]])
    assert {(f.victim, f.source, f.position) for f in found} == {(0, 1, 5), (1, 0, 5)}


def test_near_misses_are_not_contamination():
    # A divergence to a token every request has (the newline) or one in its own prompt is its own business.
    shared = BASELINES[0][:2] + [NL] + BASELINES[0][3:]
    assert _find([shared, BASELINES[1], BASELINES[2]]) == []
    # A piece of another's marker that the victim's own prompt holds too is not distinctive.
    prompts = [PROMPTS[0] + [22, 23, 24], PROMPTS[1], PROMPTS[2]]
    out = MARKERS[0] + [NL, 8, 22, 23, 24]
    assert find_contamination([out, BASELINES[1], BASELINES[2]], BASELINES, prompts) == []
    # Shorter than a k-gram, away from the first divergence: not enough to say whose it is.
    out = MARKERS[0] + [NL, 8, 8, 22, 23, 8]
    assert KGRAM == 3 and _find([out, BASELINES[1], BASELINES[2]]) == []
    # A piece two other requests share names nobody.
    prompts = [PROMPTS[0], PROMPTS[1] + [77], PROMPTS[2] + [77]]
    out = MARKERS[0] + [77]
    assert find_contamination([out, BASELINES[1], BASELINES[2]], BASELINES, prompts) == []


def test_list_scaffolding_another_request_reached_alone_is_not_its_content():
    # Request 1 alone wrote past its list to "6." (60, 61); request 0 at once diverges and writes "6." too.
    baselines = [BASELINES[0], BASELINES[1] + [60, 61, 62], BASELINES[2]]
    out = MARKERS[0] + [NL, 60, 61, 62]
    assert find_contamination([out, baselines[1], baselines[2]], baselines, PROMPTS) == []


def test_the_earliest_sign_is_the_one_reported():
    out = MARKERS[0] + [NL, 8, 32, 33, 34, 21, 22, 23]
    (f,) = _find([out, BASELINES[1], BASELINES[2]])
    assert (f.source, f.position, f.sign) == (2, 6, "k-gram")


def test_mismatched_inputs_are_refused():
    with pytest.raises(ValueError, match="one entry per request"):
        find_contamination([[1]], [[1], [2]], [[1]])


# -- the verdict of a level and the verdict table --------------------------------------------
def test_contaminated_always_fails_whatever_the_allowances():
    check = Check("crosstalk[c4]", "canary", CONTAMINATED, "", inconclusive_kind="overlap")
    assert not passed(check, allow_near_ties=True, allow_inconclusive=INCONCLUSIVE_KINDS)


def test_level_verdict_contaminated_beats_an_unproven_overlap_and_names_both_requests():
    out = MARKERS[0][:2] + MARKERS[1][2:] + [NL]
    found = _find([out, BASELINES[1], BASELINES[2]])
    verdict, detail, lines, kind = level_verdict(3, 2, found, names=["r1", "r2", "r3"])
    assert (verdict, kind) == (CONTAMINATED, "")
    assert detail.startswith("c3: 1 of 3 completions hold another request's content; r1 holds r2's content "
                             "at token 2") and detail.endswith("overlap reached 2 of 3")
    assert lines == [found[0].describe(names=["r1", "r2", "r3"])]


def test_level_verdict_without_contamination_is_inconclusive_overlap_short_of_the_level_else_pass():
    verdict, detail, lines, kind = level_verdict(4, 3, [], names=request_names(4))
    assert (verdict, kind) == (INCONCLUSIVE, "overlap") and "overlap reached 3 of 4" in detail
    assert "llama-server -np N" in lines[0]
    verdict, detail, lines, kind = level_verdict(4, 4, [], names=request_names(4))
    assert (verdict, kind, lines) == (PASS, "", [])
    assert detail == "c4: none of 4 completions holds another request's content; overlap reached 4 of 4"


# -- the report section ----------------------------------------------------------------------
def _row(verdict, contamination=()):
    return {"family": "crosstalk", "level": 4, "verdict": verdict, "why": "...",
            "overlap": {"asked": 4, "reached": 4},
            "requests": [{"id": f"r{i}", "copied_c1": True, "copied": i != 2} for i in range(1, 5)],
            "contamination": list(contamination)}


def test_report_section_in_markdown_and_html_names_the_requests_and_the_position():
    found = {"victim": "r2", "source": "r3", "position": 1, "sign": "k-gram", "text": " river <b>"}
    data = {"canaries": {"crosstalk[c4]": _row(CONTAMINATED, [found]), "code[x]": {"family": "code"}}}
    md = crosstalk_report.markdown(data)
    assert ("| c4 | contaminated | 4 of 4 | 4/4 | 3/4 | r2 holds r3's content at token 1 "
            "(k-gram: ' river <b>') |") in md
    page = crosstalk_report.html(data)
    assert "<td>contaminated</td>" in page and "r2 holds r3&#x27;s content at token 1" in page
    assert "<b>" not in page.replace("<b>contaminated</b>", "")  # the tokens' text is escaped
    assert crosstalk_report.markdown({"canaries": {}}) == [] and crosstalk_report.html({}) == ""


def test_summary_and_counts_of_crosstalk_rows():
    rows = {"crosstalk[c4]": _row(CONTAMINATED, [{"victim": "r2"}]),
            "crosstalk[c2]": _row(PASS) | {"level": 2}}
    assert canary_summary(rows) == "crosstalk c2 pass, c4 contaminated"
    assert family_counts(rows)["crosstalk"] == (7, 8)
    # its own section (crosstalk_report) says more
    assert markdown_lines(rows) == ["- canaries: crosstalk c2 pass, c4 contaminated"]
