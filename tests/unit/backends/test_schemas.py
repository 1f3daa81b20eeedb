"""The declared shapes of server answers (oracle/backends/schemas.py): what they accept, and the field and value they
name when an answer breaks them."""

from __future__ import annotations

import pytest

from oracle.backends.faults import MalformedEvent
from oracle.backends.schemas import (UNSET, AnswerBroken, LlamaEvent, ModelList, OpenAIChunk, Props, Tokenized, parse,
                                     parse_object)

WHERE = "POST /completion"


def test_a_real_llama_event_is_read_with_its_ids_logprobs_and_timings():
    event = parse(b'{"content": " Hi", "tokens": [42], "stop": false, "id_slot": 0, "completion_probabilities": '
                  b'[{"id": 42, "token": " Hi", "bytes": [32], "logprob": -0.25, "top_logprobs": [{"id": 42, '
                  b'"token": " Hi", "bytes": [32], "logprob": -0.25}, {"id": 7, "logprob": -1}]}]}', LlamaEvent,
                  where=WHERE)
    assert event.tokens == [42] and event.content == " Hi" and not event.stop and event.error is UNSET
    tops = event.completion_probabilities[0].top_logprobs
    assert [(t.id, t.logprob) for t in tops] == [(42, -0.25), (7, -1.0)]
    final = parse(b'{"content": "", "tokens": [], "stop": true, "stop_type": "limit", "timings": {"cache_n": 0, '
                  b'"prompt_n": 5, "predicted_ms": 12.5, "draft_n": 3, "draft_n_accepted": 2}}', LlamaEvent, where=WHERE)
    assert final.stop_type == "limit" and final.timings.as_dict() == {"cache_n": 0, "prompt_n": 5, "predicted_ms": 12.5,
                                                                      "draft_n": 3, "draft_n_accepted": 2}


def test_nan_and_infinity_go_through_the_standard_parser_and_null_logprobs_are_kept_as_absent():
    event = parse(b'{"tokens": [1], "completion_probabilities": [{"logprob": null, "top_logprobs": []}], '
                  b'"x": NaN}', LlamaEvent, where=WHERE)
    assert event.tokens == [1] and event.completion_probabilities[0].logprob is None


@pytest.mark.parametrize("payload, said", [
    (b'[1, 2]', "the answer is [1, 2] (Expected `object`, got `array`)"),
    (b'{"tokens": [{"id": 5}]}', 'field tokens[0] = {"id": 5} (Expected `int`, got `object`)'),
    (b'{"tokens": [-3]}', "field tokens[0] = -3 (Expected `int` >= 0)"),
    (b'{"tokens": [1.5]}', "field tokens[0] = 1.5 (Expected `int`, got `float`)"),
    (b'{"tokens": [true]}', "field tokens[0] = true (Expected `int`, got `bool`)"),
    (b'{"tokens": "12"}', 'field tokens = "12" (Expected `array`, got `str`)'),
    (b'{"timings": []}', "field timings = [] (Expected `object`, got `array`)"),
    (b'{"timings": {"draft_n": null}}', "field timings.draft_n = null (Expected `int`, got `null`)"),
    (b'{"stop": "yes"}', 'field stop = "yes" (Expected `bool`, got `str`)'),
    (b'{"content": 5}', "field content = 5 (Expected `str`, got `int`)"),
    (b'{"completion_probabilities": [{"top_logprobs": [{"id": "x", "logprob": 0}]}]}',
     'field completion_probabilities[0].top_logprobs[0].id = "x" (Expected `int`, got `str`)'),
], ids=["a-list", "object-ids", "negative-id", "float-id", "bool-id", "ids-a-string", "timings-a-list",
        "draft-n-null", "stop-a-string", "content-a-number", "top-id-a-string"])
def test_an_event_of_another_shape_names_the_field_and_the_value(payload, said):
    with pytest.raises(AnswerBroken) as caught:
        parse(payload, LlamaEvent, where=WHERE)
    assert str(caught.value) == f"{WHERE}: the server's answer breaks its schema: {said}"


def test_bytes_that_are_not_json_are_a_malformed_event_not_a_schema_break():
    with pytest.raises(MalformedEvent, match=r"not JSON"):
        parse(b'{"tokens": [42, ', LlamaEvent, where=WHERE)
    with pytest.raises(MalformedEvent, match=r"not UTF-8"):
        parse(b'{"content": "\xff"}', LlamaEvent, where=WHERE)


def test_startup_answers():
    props = parse(b'{"chat_template": "t", "default_generation_settings": {"n_ctx": 8192, "params": {"a": 1}}, '
                  b'"total_slots": 1}', Props, where="GET /props")
    assert props.default_generation_settings.n_ctx == 8192 and props.chat_template == "t"
    assert parse(b'{"default_generation_settings": {}}', Props, where="GET /props").default_generation_settings.n_ctx \
        is None
    with pytest.raises(AnswerBroken, match=r"GET /props: .*missing required field `default_generation_settings`"):
        parse(b"{}", Props, where="GET /props")  # not a llama-server's answer
    with pytest.raises(AnswerBroken, match=r"GET /props: .*field total_slots = \"1\""):
        parse(b'{"default_generation_settings": {}, "total_slots": "1"}', Props, where="GET /props")
    assert parse_object({"tokens": [1, {"id": 2, "piece": "x"}]}, Tokenized, where="POST /tokenize").ids() == [1, 2]
    with pytest.raises(AnswerBroken, match=r"POST /tokenize: .*field tokens\[1\] = -2"):
        parse_object({"tokens": [1, -2]}, Tokenized, where="POST /tokenize")
    with pytest.raises(AnswerBroken, match=r"missing required field `tokens`"):
        parse(b"{}", Tokenized, where="POST /tokenize")
    models = parse(b'{"data": [{"id": "m", "meta": {"n_vocab": 49152}}]}', ModelList, where="GET /v1/models")
    assert models.data[0].meta.n_vocab == 49152
    with pytest.raises(AnswerBroken, match=r"the answer is \[\]"):
        parse(b"[]", ModelList, where="GET /v1/models")


def test_openai_chunks():
    chunk = parse(b'{"choices": [{"index": 0, "text": "a", "token_ids": [7], "finish_reason": null, "logprobs": '
                  b'{"tokens": ["token_id:7"], "token_logprobs": [-0.1], "top_logprobs": [{"token_id:7": -0.1}]}}], '
                  b'"usage": {"prompt_tokens_details": {"cached_tokens": 0}}}', OpenAIChunk, where="POST /v1/completions")
    assert chunk.choices[0].token_ids == [7] and chunk.usage.prompt_tokens_details.cached_tokens == 0
    with pytest.raises(AnswerBroken, match=r"field choices\[0\].token_ids\[0\] = -1"):
        parse(b'{"choices": [{"token_ids": [-1]}]}', OpenAIChunk, where="POST /v1/completions")
    with pytest.raises(AnswerBroken, match=r"field choices = \{\}"):
        parse(b'{"choices": {}}', OpenAIChunk, where="POST /v1/completions")
