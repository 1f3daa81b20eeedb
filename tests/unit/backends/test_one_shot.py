"""`Backend.one_shot`: the gate's request sent once, not streamed (what `oracle repro`'s curl command carries), and
its answer's ids read back; llama-server's /completion, an OpenAI-compatible text route, none on the chat route."""

from __future__ import annotations

import httpx
import pytest

from oracle.backends import CompletionRequest, RequestFailed, make_backend
from oracle.backends.http import send_one_shot

MODELS = {"object": "list", "data": [{"id": "m", "root": "/nonexistent/m"}]}
REQUEST = CompletionRequest(prompt_ids=(1, 2, 3), max_tokens=12, logprobs=5, seed=7)


def backend(family: str):
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=MODELS)

    return make_backend(family, "http://test", transport=httpx.MockTransport(handler))


def test_llamacpp_is_the_streamed_body_with_stream_false():
    b = backend("llamacpp")
    route, body = b.one_shot(REQUEST)
    assert route == "/completion"
    assert body == {**b.request_body(REQUEST), "stream": False}
    assert body["prompt"] == [1, 2, 3] and body["n_predict"] == 12 and body["return_tokens"] is True
    assert body["temperature"] == 0.0 and body["top_k"] == 1 and body["seed"] == 7 and body["cache_prompt"] is False
    assert b.one_shot_ids({"tokens": [5, 6], "content": "ab"}) == ([5, 6], "ab")


def test_openai_text_route_without_stream_options_and_vllm_ids_read_back():
    b = backend("vllm")
    route, body = b.one_shot(REQUEST)
    assert route == "/v1/completions" and body["stream"] is False and "stream_options" not in body
    assert body["prompt"] == [1, 2, 3] and body["max_tokens"] == 12 and body["model"] == "m"
    assert b.one_shot_ids({"choices": [{"token_ids": [9, 8], "text": "x"}]}) == ([9, 8], "x")
    assert b.one_shot_ids({"choices": [{"text": "x"}]}) == ([], "x")  # a server without ids gives none


def test_the_chat_route_has_no_one_shot_request():
    b = backend("openai")
    b.route = "chat"
    assert b.one_shot(REQUEST) is None


def test_a_replayed_one_shot_fails_in_the_backends_words():
    """`send_one_shot` (what `oracle repro` replays): the answer's JSON; an HTTP error quotes the server's own
    message and a lost connection says so, as a generation request's failure does (faults.py)."""
    def answers(status: int, body: bytes):
        return httpx.MockTransport(lambda request: httpx.Response(status, content=body))

    ok = send_one_shot("http://s", "/completion", {"n_predict": 1}, timeout_s=5,
                       transport=answers(200, b'{"tokens": [5], "content": "a"}'))
    assert ok == {"tokens": [5], "content": "a"}
    with pytest.raises(RequestFailed) as failed:
        send_one_shot("http://s", "/completion", {}, timeout_s=5,
                      transport=answers(503, b'{"error": {"code": 503, "message": "Loading model"}}'))
    assert str(failed.value) == "the server answered HTTP 503 on POST /completion (the server failed): Loading model"

    def gone(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    with pytest.raises(RequestFailed) as failed:
        send_one_shot("http://s/", "/v1/completions", {}, timeout_s=5, transport=httpx.MockTransport(gone))
    assert str(failed.value) == ("POST http://s/v1/completions: could not connect: the server is gone "
                                 "(ConnectError: refused)")
