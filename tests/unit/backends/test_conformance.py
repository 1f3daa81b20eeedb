"""Answers checked against the request (oracle/backends/conformance.py) and the total deadline per request, on
scripted streams a real server does not send on demand (httpx.MockTransport): a stream that goes past max_tokens
ends at the first token too many, one kept open by comments ends at --request-timeout, and ids outside the
vocabulary, unknown stop types and text without ids are `AnswerBroken` naming the field and the value."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from oracle.backends import CompletionRequest, RequestFailed, make_backend
from oracle.backends.base import IDS_FROM_TEXT, Completion, RouteMissing
from oracle.backends.conformance import check_completion, check_text
from oracle.backends.schemas import AnswerBroken

MODELS = {"object": "list", "data": [{"id": "m", "meta": {"n_vocab": 100}}]}
REQUEST = CompletionRequest(prompt_ids=(1, 2), max_tokens=4, logprobs=0)


def _event(chunk) -> bytes:
    return f"data: {json.dumps(chunk)}\n\n".encode()


class Stream(httpx.AsyncByteStream):
    """An answer's events, counted as they are read; `forever` yields comments after them until the client goes."""

    def __init__(self, events: list, *, forever: bool = False) -> None:
        self.events, self.forever, self.sent = events, forever, 0

    async def __aiter__(self):
        for e in self.events:
            self.sent += 1
            yield e if isinstance(e, bytes) else _event(e)
        while self.forever:
            await asyncio.sleep(0.05)
            yield b": keep-alive\n\n"


def _backend(family: str, stream: Stream, **kw):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json=MODELS)
        return httpx.Response(200, stream=stream, headers={"content-type": "text/event-stream"})

    return make_backend(family, "http://test", transport=httpx.MockTransport(handler),
                        async_transport=httpx.MockTransport(handler), **kw)


def _complete(b, request: CompletionRequest = REQUEST) -> Completion:
    async def go():
        async with b.async_client() as client:
            return await b.complete(client, request)
    return asyncio.run(go())


def _token(i: int) -> dict:
    return {"content": f"t{i}", "tokens": [i], "stop": False}


FINAL = {"content": "", "tokens": [], "stop": True, "stop_type": "limit", "timings": {"cache_n": 0}}


def test_a_stream_past_max_tokens_ends_at_the_first_token_too_many():
    stream = Stream([_token(i) for i in range(450)] + [FINAL])
    with pytest.raises(AnswerBroken, match=r"POST /completion: the server's answer breaks the request: 5 completion "
                                           r"tokens \(and counting\) for max_tokens 4"):
        _complete(_backend("llamacpp", stream))
    assert stream.sent == 5  # the other 445 were never read


def test_keep_alive_comments_do_not_extend_the_total_request_timeout():
    stream = Stream([_token(1)], forever=True)
    started = time.monotonic()
    with pytest.raises(RequestFailed, match=r"POST http://test/completion: the server sent no token for 1 s after 1 "
                                            r"tokens \(keep-alive comments are not tokens\), and the request reached "
                                            r"--request-timeout 1 s in all: it hangs.*--request-timeout 4"):
        _complete(_backend("llamacpp", stream, timeout_s=1))
    assert time.monotonic() - started < 5


def test_openai_keep_alive_and_extra_tokens_alike():
    chunk = lambda i: {"choices": [{"text": f"t{i}", "token_ids": [i], "finish_reason": None}]}  # noqa: E731
    with pytest.raises(AnswerBroken, match=r"POST /v1/completions: .*5 completion tokens \(and counting\) for "
                                           r"max_tokens 4"):
        _complete(_backend("openai", Stream([chunk(i) for i in range(50)])))
    with pytest.raises(RequestFailed, match=r"the request reached --request-timeout 1 s in all"):
        _complete(_backend("openai", Stream([chunk(1)], forever=True), timeout_s=1))


@pytest.mark.parametrize("events, said", [
    ([_token(1), {"content": "x", "tokens": [], "stop": False}, FINAL],
     "an event with text 'x' and no token ids (field tokens is empty; return_tokens was asked) after 1 tokens"),
    ([_token(1), FINAL | {"stop_type": "exploded"}],
     "field stop_type: stop reason 'exploded' is neither a stop nor the length limit (known: eos, limit, none, word)"),
    ([_token(1), {"content": "", "tokens": [], "stop": True, "timings": {}}],
     "field stop_type: stop reason absent is neither a stop nor the length limit"),
    ([_token(1), {"tokens": [2, -1]}, FINAL], "field tokens[1] = -1 (Expected `int` >= 0)"),
], ids=["text-without-ids", "unknown-stop-type", "no-stop-type", "negative-id"])
def test_llamacpp_answers_that_break_the_request_name_field_and_value(events, said):
    with pytest.raises(AnswerBroken) as caught:
        _complete(_backend("llamacpp", Stream(events)))
    assert said in str(caught.value) and str(caught.value).startswith("POST /completion: the server's answer breaks")


def test_a_completion_is_checked_against_the_vocabulary_and_the_request():
    ok = Completion(completion_ids=[1, 99], finish_reason="stop", top_ids=[[1, 2], [99]])
    check_completion(ok, REQUEST, vocab=100, where="W")
    for bad, said in ((Completion([1, 100], "stop"), "field completion token 1 = 100 is outside the vocabulary's "
                                                     "100 ids (0..99)"),
                      (Completion([1], "stop", top_ids=[[3, 250]]), "field top_logprobs of token 0 holds id 250"),
                      (Completion([-4], "stop"), "field completion token 0 = -4 is outside the vocabulary (ids are "
                                                 "never negative)"),
                      (Completion([1] * 5, "stop"), "5 completion tokens for max_tokens 4"),
                      (Completion([1], "stop", prompt_ids=[1, 100]), "field prompt_token_ids holds id 100")):
        with pytest.raises(AnswerBroken) as caught:
            check_completion(bad, REQUEST, vocab=None if "negative" in said else 100, where="W")
        assert str(caught.value).startswith("W: the server's answer breaks the request: ") and said in str(caught.value)


def test_llamacpp_reads_the_vocabulary_size_from_v1_models_and_refuses_garbage_there():
    assert _backend("llamacpp", Stream([])).vocab_size() == 100

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=[{"id": "m"}])

    garbage = make_backend("llamacpp", "http://test", transport=httpx.MockTransport(handler))
    with pytest.raises(AnswerBroken, match=r"GET /v1/models: the server's answer breaks its schema: the answer is "):
        garbage.vocab_size()
    with pytest.raises(AnswerBroken, match=r"GET /props: the server's answer breaks its schema: the answer is "):
        garbage.served_context()


def test_vllm_teacher_forcing_reads_ranked_rows_and_refuses_another_shape():
    def answering(body):
        def handler(request: httpx.Request) -> httpx.Response:
            if request.url.path == "/v1/models":
                return httpx.Response(200, json=MODELS)
            return httpx.Response(200, json=body)
        return httpx.MockTransport(handler)

    row = {"5": {"logprob": -0.1, "rank": 1}, "9": {"logprob": -2.0, "rank": 2}, "3": {"logprob": -4.0, "rank": 7}}
    good = make_backend("vllm", "http://test", transport=answering({"choices": [{"prompt_logprobs": [None, None,
                                                                                                     row]}]}))
    forced = good.teacher_forced([1, 2], [5], logprobs=2)
    assert forced.top_ids == [[5, 9]] and forced.top_logprobs == [[-0.1, -2.0]]
    bad = make_backend("vllm", "http://test", transport=answering({"choices": [{"prompt_logprobs": [None, None,
                                                                                                    {"5": -0.1}]}]}))
    with pytest.raises(AnswerBroken, match=r"teacher forcing.*field choices\[0\].prompt_logprobs\[2\]\[...\] = "
                                           r"\{\"5\": -0.1\} \(Expected `object`, got `float`\)"):
        bad.teacher_forced([1, 2], [5], logprobs=2)


# A toy detokenizer: id i is the piece PIECES[i]; 3 and 4 are the two bytes of one character, 9 the end of
# generation (whose text no server streams).
PIECES = {1: " Paris", 2: " is", 3: b"\xc3", 4: b"\xa9", 5: "!", 9: "<|im_end|>"}


def _detokenize(ids: list[int]) -> str:
    raw = b"".join(p if isinstance(p, bytes) else p.encode() for p in map(PIECES.__getitem__, ids))
    return raw.decode("utf-8", errors="replace")


def _answer(ids, text, finish="length", **kw) -> Completion:
    return Completion(completion_ids=list(ids), finish_reason=finish, text=text, **kw)


@pytest.mark.parametrize("ids, text, finish", [
    ([1, 2], " Paris is", "length"),
    ([1, 3, 4, 5], " Parisé!", "length"),  # a character split over two tokens is whole in the path
    ([1, 3], " Paris", "length"),  # cut mid-character at the length limit: the server holds the byte back
    ([1, 2, 9], " Paris is", "stop"),  # the end-of-generation token's text is never streamed
    ([1, 2], "Paris is", "length"),  # the leading space a SentencePiece detokenizer drops
])
def test_ids_and_text_that_agree_pass(ids, text, finish):
    check_text(_answer(ids, text, finish), _detokenize, where="p")


@pytest.mark.parametrize("ids, text, finish, said", [
    ([1, 2], " Paris was", "length", "field text = ' Paris was' is not what its 2 token ids detokenize to "
                                     "(' Paris is'; first difference at character 7)"),
    ([1, 2, 9], " Paris is<|im_end|>!", "stop", "field text = ...'is is<|im_end|>!' is not what its 3 token ids "
                                                "detokenize to (...'is is<|im_end|>'; first difference at character 19)"),
    ([1, 2, 5], " Paris is", "stop", "(' Paris is!'; first difference at character 9)"),  # only a last EOS drops
    ([1, 2, 9], " Paris is", "length", "(' Paris is<|im_end|>'"),  # a length stop keeps every token's text
    ([2], "  is", "length", "field text = '  is'"),  # one leading space, never two
])
def test_ids_and_text_that_disagree_are_answer_broken_naming_field_and_value(ids, text, finish, said):
    with pytest.raises(AnswerBroken, match="the server's answer breaks its own ids") as e:
        check_text(_answer(ids, text, finish), _detokenize, where="the answer to prompt 'p'")
    assert said in str(e.value) and str(e.value).startswith("the answer to prompt 'p': ")


def test_an_answer_without_ids_or_text_has_nothing_to_agree():
    never = lambda ids: pytest.fail("detokenized an answer with nothing to compare")  # noqa: E731
    check_text(_answer([], " Paris", ids_source=IDS_FROM_TEXT), never, where="p")
    check_text(_answer([1, 2], ""), never, where="p")
    check_text(_answer([1], " Paris", ids_source=IDS_FROM_TEXT), never, where="p")


def test_openai_detokenize_without_the_route_is_route_missing_and_with_garbage_answer_broken():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json=MODELS)
        return httpx.Response(404 if request.url.host == "none" else 200, content=b"[1, 2]")

    assert issubclass(RouteMissing, RequestFailed)
    with pytest.raises(RouteMissing, match="POST /detokenize: HTTP 404"):
        make_backend("openai", "http://none", transport=httpx.MockTransport(handler)).detokenize([1])
    with pytest.raises(AnswerBroken, match="POST /detokenize"):
        make_backend("openai", "http://garbage", transport=httpx.MockTransport(handler)).detokenize([1])


def test_fewer_ids_than_the_servers_own_count_of_generated_tokens_is_answer_broken_or_text():
    """llama-server's two ways of dropping the ids of a character spread over tokens, as it streams them: the
    native route's `tokens` (only the last id per character: the native family promises ids, so AnswerBroken) and
    the OpenAI route's one logprobs entry per character (the openai family then compares text, as for a server
    without ids); the counts the server states itself give it away. As many ids as counted pass."""
    emoji = {"content": "🎉", "tokens": [227], "stop": False}
    with pytest.raises(AnswerBroken, match=r"POST /completion: the server's answer breaks its own ids: field tokens "
                                           r"gave 2 ids for timings.predicted_n 4 generated tokens \(llama-server "
                                           r"gives only the last id of a character that spans several tokens; "
                                           r"text 't1🎉'\)"):
        _complete(_backend("llamacpp", Stream([_token(1), emoji, FINAL | {"timings": {"predicted_n": 4}}])))
    assert _complete(_backend("llamacpp", Stream([_token(1), FINAL | {"timings": {"predicted_n": 1}}]))).text == "t1"

    entry = {"id": 227, "token": "🎉", "logprob": -0.1, "top_logprobs": []}
    chunks = [{"choices": [{"text": "🎉", "logprobs": {"content": [entry]}, "finish_reason": None}]},
              {"choices": [{"text": "", "finish_reason": "length"}], "usage": {"completion_tokens": 3}},
              b"data: [DONE]\n\n"]
    short = _complete(_backend("openai", Stream(chunks)))  # the openai family compares such an answer on text
    assert (short.completion_ids, short.logprobs, short.ids_source, short.text) == ([], [], "text", "🎉")
    chunks[1]["usage"]["completion_tokens"] = 1
    assert _complete(_backend("openai", Stream(chunks))).completion_ids == [227]
