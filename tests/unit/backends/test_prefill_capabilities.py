"""Decode vs prefill per family: offered only where the decode-time top-k are real and a prefill can score the
same path; chunks of a chosen size only where they can be realised; the reasons said otherwise."""

from __future__ import annotations

import pytest

from oracle.backends import RequestFailed
from oracle.backends.hf import HfBackend
from oracle.backends.llamacpp import LlamaCppBackend
from oracle.backends.openai import OpenAIBackend
from oracle.backends.openvino import OpenVINOBackend
from oracle.backends.vllm import VLLMBackend


def test_prefill_scoring_is_declared_where_decode_and_prefill_are_apart():
    assert LlamaCppBackend.capabilities.prefill_scoring.startswith("llama-server: one request per position")
    assert VLLMBackend.capabilities.prefill_scoring == VLLMBackend.teacher_forcing_method
    assert HfBackend.capabilities.prefill_scoring == HfBackend.teacher_forcing_method
    assert OpenAIBackend.capabilities.prefill_scoring is None
    assert OpenVINOBackend.capabilities.prefill_scoring is None  # its top-k already come from the IR's one pass
    assert "not from GenAI's decode" in OpenVINOBackend.prefill_refusal


def test_chunks_of_a_chosen_size_are_refused_with_the_reason_where_not_built():
    vllm = VLLMBackend.__new__(VLLMBackend)
    assert "--max-num-batched-tokens" in vllm.prefill_chunking(64)
    with pytest.raises(RequestFailed, match="--max-num-batched-tokens"):
        vllm.prefill_forced([1], [2, 3], logprobs=5, chunk=64)
    assert "not built" in HfBackend.__new__(HfBackend).prefill_chunking(64)
    assert LlamaCppBackend("http://127.0.0.1:1").prefill_chunking(64) is None
