"""Protocol edge cases of the openai and vllm families that a real server does not produce on demand
(httpx.MockTransport); the real behaviour is tested on real servers in test_vllm_cpu.py."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from oracle.backends import CompletionRequest, Counters, RequestFailed, check_platform, make_backend, parse_backend
from oracle.backends.base import stop_reason
from oracle.backends.metrics import Metrics
from oracle.compare.evidence import cache_zero_check, speculation_summary
from oracle.backends.llamacpp import LlamaCppBackend
from oracle.backends.vllm import VLLMBackend
from oracle.store.records import Condition, Record

MODELS = {"object": "list", "data": [{"id": "m", "root": "/nonexistent/m", "max_model_len": 4096}]}


def sse(*chunks) -> bytes:
    return "".join(f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks).encode()


def backend(family: str, stream: bytes, *, status: int = 200, seen: list | None = None):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json=MODELS)
        if seen is not None:
            seen.append(json.loads(request.content))
        return httpx.Response(status, content=stream, headers={"content-type": "text/event-stream"})

    return make_backend(family, "http://test", transport=httpx.MockTransport(handler),
                        async_transport=httpx.MockTransport(handler))


def complete(b, logprobs: int = 2):
    async def go():
        async with b.async_client() as client:
            return await b.complete(client, CompletionRequest(prompt_ids=(1, 2), max_tokens=2, logprobs=logprobs))
    return asyncio.run(go())


def choice(text, finish=None, **extra):
    return {"choices": [{"index": 0, "text": text, "finish_reason": finish, **extra}]}


def test_every_vllm_platform_tag_and_openai_parse():
    for name in ("vllm-xpu", "vllm-cuda", "vllm-rocm", "vllm-cpu", "vllm", "openai"):
        assert parse_backend(name).family in ("vllm", "openai")


def test_vllm_ids_logprob_keys_usage_and_body():
    seen: list = []
    lp = lambda tid, alt: {"tokens": [f"token_id:{tid}"], "token_logprobs": [-0.1],  # noqa: E731
                           "top_logprobs": [{f"token_id:{alt}": -2.0, f"token_id:{tid}": -0.1}]}
    b = backend("vllm-xpu", sse(choice("a", token_ids=[7], prompt_token_ids=[1, 2], logprobs=lp(7, 9)),
                               choice("b", "length", token_ids=[8], logprobs=lp(8, 3)),
                               {"choices": [], "usage": {"prompt_tokens_details": {"cached_tokens": 0}},
                                "system_fingerprint": "vllm-x"}, "[DONE]"), seen=seen)
    out = complete(b)
    assert out.completion_ids == [7, 8] and out.prompt_ids == [1, 2] and out.finish_reason == "length"
    assert out.top_ids == [[7, 9], [8, 3]] and out.cached_prompt_tokens == 0 and out.system_fingerprint == "vllm-x"
    body = seen[0]
    assert body["return_token_ids"] and body["return_tokens_as_token_ids"] and body["temperature"] == 0
    assert body["prompt"] == [1, 2] and body["logprobs"] == 2 and "cache_prompt" not in body
    again = backend("vllm", sse(choice("a", "stop", token_ids=[7], prompt_token_ids=[1, 2]), "[DONE]"), seen=seen)
    complete(again)
    assert seen[0]["cache_salt"] != seen[1]["cache_salt"]  # one salt per request: no request hits another's cache


def test_vllm_refusing_more_than_20_logprobs_names_max_logprobs():
    error = {"error": {"message": "Requested sample logprobs of 25, which is greater than max allowed: 20",
                       "code": 400}}
    with pytest.raises(RequestFailed, match="--max-logprobs N.*lower --logprobs"):
        complete(backend("vllm-xpu", sse(error)), logprobs=25)
    with pytest.raises(RequestFailed, match="--max-logprobs"):
        complete(backend("vllm-xpu", json.dumps(error).encode(), status=400), logprobs=25)


def test_vllm_without_ids_is_refused_and_openai_downgrades_to_text():
    stream = sse(choice("Hello", None), choice(" there", "stop"), "[DONE]")
    with pytest.raises(RequestFailed, match="no token ids.*--backend=openai"):
        complete(backend("vllm", stream))
    out = complete(backend("openai", stream))
    assert out.ids_source == "text" and out.text == "Hello there" and out.completion_ids == []


def test_llamacpp_style_logprob_content_gives_ids():
    content = [{"id": 5, "token": "x", "logprob": -0.5, "top_logprobs": [{"id": 5, "logprob": -0.5},
                                                                         {"id": 6, "logprob": -1.5}]}]
    out = complete(backend("openai", sse(choice("x", "length", logprobs={"content": content}), "[DONE]")))
    assert out.completion_ids == [5] and out.top_ids == [[5, 6]] and out.ids_source == "server"


def test_a_stream_cut_before_done_or_an_abort_fails_the_request():
    with pytest.raises(RequestFailed, match="without its finish reason"):
        complete(backend("openai", sse(choice("a", None, token_ids=[1]))))
    with pytest.raises(RequestFailed, match="stop reason 'abort'"):
        complete(backend("openai", sse(choice("a", "abort", token_ids=[1]), "[DONE]")))


def test_one_stop_vocabulary_across_engines():
    assert [stop_reason("llamacpp", s) for s in ("eos", "word", "limit")] == ["stop", "stop", "length"]
    assert [stop_reason("openai", s) for s in ("stop", "length")] == ["stop", "length"]


def test_per_position_counters_and_their_delta():
    text = ('vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="0"} 5.0\n'
            'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="1"} 2.0\n')
    assert Metrics.parse(text).by_label("vllm:spec_decode_num_accepted_tokens_per_pos_total",
                                        "position") == {"0": 5.0, "1": 2.0}
    before = Counters(draft_tokens=4, accepted_tokens=1, drafts=1, accepted_per_position=(1.0,))
    after = Counters(draft_tokens=12, accepted_tokens=8, drafts=3, accepted_per_position=(5.0, 2.0))
    delta = after.delta(before)
    assert delta.accepted_per_position == (4.0, 2.0)
    summary = speculation_summary([], delta)
    assert summary["source"] == "server counters" and summary["accepted_per_position"] == [4.0, 2.0]


def _record(cached):
    return Record(id="p", condition=Condition(), prompt_ids=[1], completion_ids=[2], finish_reason="stop",
                  cached_prompt_tokens=cached)


def test_cache_zero_falls_back_to_vllm_counters_only_when_the_field_is_absent():
    still = Counters(prefix_cache_hits=0.0, prefix_cache_queries=40.0)
    check = cache_zero_check([_record(None)], still, cache=VLLMBackend.capabilities.cache)
    assert check.verdict == "pass" and "counters alone" in check.detail
    assert "--enable-prompt-tokens-details" in check.lines[0]
    moved = cache_zero_check([_record(None)], Counters(prefix_cache_hits=128.0), cache=VLLMBackend.capabilities.cache)
    assert moved.verdict == "fail"
    nothing = cache_zero_check([_record(None)], None, cache=VLLMBackend.capabilities.cache)
    assert nothing.verdict == "inconclusive"
    # llama.cpp: per-request counts are always there, so counters alone are not accepted in their place
    assert cache_zero_check([_record(None)], still, cache=LlamaCppBackend.capabilities.cache).verdict == "inconclusive"


def test_a_backend_without_an_embedded_server_asks_for_url_or_launch(pytester, tiny_suite):
    for name in ("vllm-xpu", "openai", "llamacpp-x-tpu9"):  # the embedded llama-server is a CPU build
        result = pytester.runpytest("-p", "no:cacheprovider", f"--backend={name}", f"--oracle-suite={tiny_suite}",
                                    "--canaries=none", f"--report-dir=rep-{name}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([f"*--backend {name}: no embedded server for this backend; give --oracle-url*"])


def test_an_unknown_platform_tag_is_refused_naming_the_nearest_and_the_form_of_ones_own(pytester, tiny_suite):
    """A platform tag is the label a report records: a misspelt one (with --oracle-url too) is refused before anything
    starts; the x-NAME form records a platform oracle does not list."""
    base = ["-p", "no:cacheprovider", f"--oracle-suite={tiny_suite}", "--canaries=none", "--oracle-url=http://127.0.0.1:9"]
    result = pytester.runpytest(*base, "--backend=vllm-xup", "--report-dir=rep-xup")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--backend 'vllm-xup': unknown platform tag 'xup'; did you mean vllm-xpu?*"
                                 "a platform of your own: vllm-x-xup*"])
    assert not (pytester.path / "rep-xup").exists()
    with pytest.raises(ValueError, match="known tags: cpu, cuda"):
        check_platform("llamacpp-tpu9")
    for name in ("llamacpp-x-tpu9", "vllm-xpu", "openvino-npu", "llamacpp", "python:m.py:f"):
        check_platform(name)  # known, own (x-) or none
