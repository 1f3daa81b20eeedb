"""The candidate path along the reference: where the gated generation is reused and where teacher forcing
must take over (no server needed: records only)."""

from __future__ import annotations

import math

from oracle.logits.path import candidate_path, compare_path, logits_check, shared_prefix
from oracle.backends.openai import OpenAIBackend
from oracle.store.records import Condition, Record


def _record(tokens: list[int], *, prompt=(1, 2, 3)) -> Record:
    # Each position's top-2: the chosen token at p=0.6, token 99 at p=0.3.
    return Record(id="p", condition=Condition(), prompt_ids=list(prompt), completion_ids=list(tokens),
                  finish_reason="length", logprobs=[math.log(0.6)] * len(tokens),
                  top_ids=[[t, 99] for t in tokens], top_logprobs=[[math.log(0.6), math.log(0.3)]] * len(tokens))


def test_identical_generation_is_the_reference_path_and_gives_zero_kld():
    ref = _record([5, 6, 7, 8])
    path = candidate_path(OpenAIBackend("http://127.0.0.1:9"), ref, _record([5, 6, 7, 8]), logprobs=2)
    assert path.from_generation == 4 and path.teacher_forced == 0 and path.missing == []
    positions = compare_path(ref, path)
    assert [p.kld for p in positions] == [0.0] * 4 and all(p.same_top1 for p in positions)


def test_generation_is_reused_through_the_split_and_not_after():
    ref = _record([5, 6, 7, 8])
    cand = _record([5, 6, 9, 8])  # splits at token 2: positions 0, 1 and 2 share the reference's context
    assert shared_prefix(cand.completion_ids, ref.completion_ids) == 2
    path = candidate_path(OpenAIBackend("http://127.0.0.1:9"), ref, cand, logprobs=2)  # declares no teacher forcing
    assert path.from_generation == 3 and path.missing == [3]
    positions = compare_path(ref, path)
    assert [p.position for p in positions] == [0, 1, 2]
    assert not positions[2].same_top1 and positions[2].p_candidate is None


def test_other_prompt_tokens_are_never_reused():
    path = candidate_path(OpenAIBackend("http://127.0.0.1:9"), _record([5, 6]), _record([5, 6], prompt=(1, 2, 4)), logprobs=2)
    assert path.from_generation == 0 and path.missing == [0, 1]


def test_thresholds_fail_and_pass():
    summary = {"positions": 10, "mean_kld": 0.02, "mean_kld_uncertainty": 0.001, "same_top1": 0.9,
               "same_top1_uncertainty": 0.1, "rms_delta_p": 0.05, "logprob_cosine": 0.999}
    assert logits_check("logits", summary, kld_max=0.01, same_top1_min=None).verdict == "fail"
    assert logits_check("logits", summary, kld_max=0.05, same_top1_min=95).verdict == "fail"
    assert logits_check("logits", summary, kld_max=0.05, same_top1_min=90).verdict == "pass"
    assert logits_check("logits", summary, kld_max=None, same_top1_min=None).verdict == "info"
    assert logits_check("logits", {"positions": 0}, kld_max=1, same_top1_min=None).verdict == "fail"
