"""The chunked-prefill ladder (logits/prefill_ladder.py) and its part of the chunked-prefill check; the raw logit
cosine beside the centered one (logits/stats.py)."""

from __future__ import annotations

import numpy as np
import pytest

from oracle.logits.chunked import chunked_check
from oracle.logits.prefill_ladder import ladder_lengths, ladder_prompt, ladder_report
from oracle.logits.stats import compare_position, summarize


def test_lengths_beyond_the_context_are_dropped_and_listed():
    assert ladder_lengths((8192, 1, 64, 16384), 8192) == ((1, 64, 8192), (16384,))
    assert ladder_lengths((7, 1), None) == ((1, 7), ())


def test_the_prompt_is_the_haystack_cycled_to_the_exact_length():
    ids = ladder_prompt([5, 6, 7], [1, 2], 9)
    assert ids == [1, 2, 5, 6, 7, 5, 6, 7, 5] and len(ladder_prompt([5], [], 8192)) == 8192
    with pytest.raises(ValueError, match="--haystack"):
        ladder_prompt([], [], 4)


def _scored(moved_at: int | None = None) -> dict:
    one = {n: ([3, 4, 5], [-0.1, -2.0, -3.0]) for n in (1, 7, 64, 300)}
    chunked = {n: ([3, 4, 5], [-0.1, -2.01, -3.0]) for n in (1, 7, 64, 300)}
    if moved_at:
        chunked[moved_at] = ([4, 3, 5], [-0.5, -0.9, -3.0])
    return {"one-pass": one, "chunks-16": chunked}


def test_a_chunk_size_is_compared_only_at_lengths_longer_than_one_chunk():
    report = ladder_report((1, 7, 64, 300), _scored(), chunks=(16,))
    mode = report["modes"]["chunks-16"]
    assert [r["tokens"] for r in mode["lengths"]] == [64, 300] and mode["not_chunked"] == [1, 7]
    assert mode["top1_differs"] == [] and mode["max_abs_delta"] == pytest.approx(0.01, abs=1e-6)
    check = chunked_check({"modes": {}, "ladder": {"context": 8192, "beyond_context": [], **report}})
    assert check.verdict == "pass" and "chunks-16 ladder: top-1 equal at 2/2 prompt lengths" in check.detail


def test_a_moved_top1_at_a_ladder_length_fails_naming_the_length_and_both_tokens():
    report = ladder_report((1, 7, 64, 300), _scored(moved_at=300), chunks=(16,))
    check = chunked_check({"modes": {}, "ladder": {"context": None, "beyond_context": [], **report}})
    assert check.verdict == "fail"
    assert "chunks-16: top-1 differs from one pass at 1 ladder length(s), first 300 tokens (one pass 3, chunked 4)" \
        in check.detail


def test_the_raw_cosine_needs_both_shifts_and_is_not_shift_invariant():
    logits_a = np.array([4.0, 1.0, -2.0, 0.5])
    logits_b = logits_a + np.array([0.0, 0.3, 0.0, -0.2])
    lse = lambda x: float(np.log(np.exp(x).sum()))  # noqa: E731
    ids = [0, 1, 2, 3]
    la, lb = (logits_a - lse(logits_a)).tolist(), (logits_b - lse(logits_b)).tolist()
    without = compare_position(0, ids, la, ids, lb, reference_token=0)
    assert without.logit_cosine_raw is None and without.logit_cosine is not None
    raw = compare_position(0, ids, la, ids, lb, reference_token=0, reference_shift=lse(logits_a),
                           candidate_shift=lse(logits_b))
    want = float(logits_a @ logits_b / np.linalg.norm(logits_a) / np.linalg.norm(logits_b))
    assert raw.logit_cosine_raw == pytest.approx(want, abs=1e-12) and raw.logit_cosine_raw != raw.logit_cosine
    s = summarize([raw, without])
    assert s["logit_cosine_raw"] == pytest.approx(want) and s["logit_cosine_raw_min"] == pytest.approx(want)


def test_the_runner_section_shows_each_chunk_sizes_ladder_row():
    from oracle.logits import runner_report

    ladder = {"context": 8192, "beyond_context": [], **ladder_report((1, 64, 300), _scored(moved_at=300), chunks=(16,))}
    lines = runner_report.markdown({"chunked_prefill": {"modes": {}, "ladder": ladder}})
    assert "| chunks-16 (ladder: 64, 300) | 1/2 | 1.5 | 300 |" in lines
    assert "chunks-16 (ladder: 64, 300)" in runner_report.html({"chunked_prefill": {"modes": {}, "ladder": ladder}})
