"""Chunked-prefill invariance, pure: each chunk size against one pass, top-1 at every prefix length, the check; and
the centered logit cosine of the logits statistics."""

from __future__ import annotations

import numpy as np
import pytest

from oracle.logits.chunked import chunked_check, chunked_report
from oracle.logits.stats import centered_cosine, compare_position, summarize

TOKENS = [5, 7, 9]
IDS = [[], [7, 2], [9, 3]]  # row 0 is left out on both sides (as in decode vs prefill)
LPS = [[], [-0.2, -1.9], [-0.3, -1.5]]


def _dvp(*chunks: int, **extra) -> dict:
    modes = {"one-pass": {"chunk": None}} | {f"chunks-{c}": {"chunk": c, "longest_prefix_tokens": 40, "errors": {}}
                                            for c in chunks}
    return {"top_k": 2, "modes": modes | extra}


def test_the_same_rows_pass_with_every_length_kept():
    scored = {"one-pass": {"p": (TOKENS, IDS, LPS)}, "chunks-4": {"p": (TOKENS, IDS, LPS)}}
    report = chunked_report(_dvp(4), scored)
    mode = report["modes"]["chunks-4"]
    assert mode["top1_differs"] == [] and mode["overall"]["positions"] == 2 and mode["overall"]["bit_identical"] == 2
    check = chunked_check(report)
    assert check.verdict == "pass" and "top-1 equal at 2/2 prefix lengths (up to 40 tokens)" in check.detail


def test_a_moved_top_token_fails_naming_size_prompt_position_and_both_tokens():
    moved = [[], [7, 2], [3, 9]]
    scored = {"one-pass": {"p": (TOKENS, IDS, LPS)}, "chunks-4": {"p": (TOKENS, moved, [[], [-0.2, -1.9], [-0.3, -1.5]])}}
    check = chunked_check(chunked_report(_dvp(4), scored))
    assert check.verdict == "fail"
    assert "chunks-4: top-1 differs from one pass at 1 length(s), first p position 2 (one pass 9, chunked 3)" in check.detail


def test_nothing_chunked_is_not_run_and_a_failed_prompt_is_not_a_pass():
    scored = {"one-pass": {"p": (TOKENS, IDS, LPS)}}
    reached = chunked_report(_dvp(chunks_64={"chunk": 64, "not_reached": "every prefix fits"}), scored)
    assert chunked_check(reached).verdict == "not-run"
    failed = _dvp(4)
    failed["modes"]["chunks-4"]["errors"] = {"p": "runner raised"}
    assert chunked_check(chunked_report(failed, {**scored, "chunks-4": {}})).verdict == "not-run"


def test_the_centered_logit_cosine_ignores_the_log_partition_shift():
    logits = np.array([3.0, 1.0, -2.0, 0.5])
    logprobs = logits - np.log(np.exp(logits).sum())
    assert centered_cosine(logits, logprobs) == pytest.approx(1.0)
    assert centered_cosine(logits, -logits) == pytest.approx(-1.0)
    same = compare_position(0, [1, 2, 3], [-0.1, -2.0, -3.0], [1, 2, 3], [-0.1, -2.0, -3.0], reference_token=1)
    other = compare_position(1, [1, 2, 3], [-0.1, -2.0, -3.0], [2, 1, 3], [-0.2, -1.0, -3.0], reference_token=1)
    s = summarize([same, other])
    assert same.logit_cosine == pytest.approx(1.0) and other.logit_cosine < 0.9
    assert s["logit_cosine"] == pytest.approx((1.0 + other.logit_cosine) / 2) and s["logit_cosine_ids"] == 3
