"""vLLM's keyed top-k rows read through the keys already met (`_KNOWN`) give exactly what the careful reading gives,
for every spelling a server may send; the one-token fast path of a stream equals the general one."""

from __future__ import annotations

import math
import random

import msgspec
import pytest

from oracle.backends import openai_logprobs as olp
from oracle.backends.schemas import AnswerBroken, OpenAIChoice

VOCAB = {"hello": 11, "world": 12}


def read(row: dict):
    try:
        return olp._keyed_row(row, VOCAB.get)
    except AnswerBroken as e:
        return ("AnswerBroken", str(e))


ROWS = [
    {"token_id:5": -0.1, "token_id:17": -1.5, "token_id:0": -3.0},  # best first, as vLLM sends
    {"token_id:17": -2.0, "token_id:5": -0.1},  # the sampled token added after its top-k: sorted best first
    {"token_id:007": -0.5, "token_id:12": -0.7},  # leading zeros read as the number
    {"hello": -0.2, "world": -0.9},  # token strings through the served tokenizer
    {"token_id:5": -0.1, "world": -0.4},  # a mix
    {"token_id:5": -0.1, "unknown": -0.4},  # a string the tokenizer does not know: no row, never guessed
    {"token_id:5": -0.1, "token_id:x": -0.4, "hello": -0.5},  # among strings, a prefixed key that is no id
    {"token_id:-3": -0.1},  # a negative number: no id
    {"token_id:1e3": -0.1},  # no id: the schema's error, each time
    {"token_id:": -0.1},
    {"token_id:\u0661\u0662": -0.1},  # Arabic-Indic digits (str.isdigit, not ASCII): no id
    {"token_id:" + "9" * 19: -0.1},  # longer than 18 digits: never learnt
]


def test_every_row_reads_the_same_with_the_memo_cold_and_warm(monkeypatch):
    monkeypatch.setattr(olp, "_KNOWN", {})
    monkeypatch.setattr(olp, "_KNOWN_ID", olp._KNOWN.__getitem__)
    cold = [read(dict(r)) for r in ROWS]
    assert cold[0] == ([5, 17, 0], [-0.1, -1.5, -3.0]) and cold[1] == ([5, 17], [-0.1, -2.0])
    assert cold[2] == ([7, 12], [-0.5, -0.7]) and cold[3] == ([11, 12], [-0.2, -0.9])
    assert cold[5] == ([], []) and cold[4] == ([5, 12], [-0.1, -0.4])
    # a key that is no id is the schema's error, naming the key (never a ValueError from deep inside)
    for i, key in ((6, "token_id:x"), (7, "token_id:-3"), (8, "token_id:1e3"), (9, "token_id:"),
                   (10, "token_id:\u0661\u0662")):
        assert cold[i][0] == "AnswerBroken" and repr(key) in cold[i][1], cold[i]
    assert cold[11] == ([10 ** 19 - 1], [-0.1])  # a number, if a large one: read, not learnt
    learnt = dict(olp._KNOWN)
    assert learnt == {"token_id:5": 5, "token_id:17": 17, "token_id:0": 0, "token_id:007": 7, "token_id:12": 12}
    warm = [read(dict(r)) for r in ROWS]
    assert warm == cold and olp._KNOWN == learnt
    # rows of known keys in any order and mix, against a memo-free reading of each
    rng = random.Random(7)
    for _ in range(300):
        keys = rng.sample([f"token_id:{i}" for i in (0, 5, 7, 12, 17, 4000)] + ["hello", "world"], rng.randint(1, 6))
        row = {k: -rng.random() * 5 for k in keys}
        monkeypatch.setattr(olp, "_KNOWN_ID", {}.__getitem__)  # every key unknown: the careful reading
        expected = read(dict(row))
        monkeypatch.setattr(olp, "_KNOWN_ID", olp._KNOWN.__getitem__)
        assert read(dict(row)) == expected, row


def test_the_memo_stops_growing_at_its_bound(monkeypatch):
    monkeypatch.setattr(olp, "_KNOWN", {})
    monkeypatch.setattr(olp, "_KNOWN_ID", olp._KNOWN.__getitem__)
    monkeypatch.setattr(olp, "KNOWN_KEYS", 3)
    row = {f"token_id:{i}": -float(i) for i in range(10)}
    assert read(row) == (list(range(10)), [-float(i) for i in range(10)])
    assert len(olp._KNOWN) == 3
    assert read(row) == (list(range(10)), [-float(i) for i in range(10)])  # the rest read the careful way


def _choice(token_ids, lp) -> OpenAIChoice:
    return msgspec.json.decode(msgspec.json.encode({"text": "x", "token_ids": token_ids, "logprobs": lp}),
                               type=OpenAIChoice)


class Out:
    def __init__(self) -> None:
        self.completion_ids, self.token_times_s, self.logprobs, self.top_ids, self.top_logprobs = [], [], [], [], []


@pytest.mark.parametrize("lp", [
    {"tokens": ["token_id:5"], "token_logprobs": [-0.1], "top_logprobs": [{"token_id:17": -2.0, "token_id:5": -0.1}]},
    {"tokens": ["token_id:5"], "token_logprobs": [None], "top_logprobs": [{"token_id:5": -0.1}]},
    {"tokens": ["token_id:5"], "token_logprobs": [-0.1], "top_logprobs": [None]},
    {"tokens": ["token_id:5"], "token_logprobs": [-0.1], "top_logprobs": [{"hello": -0.1, "unknown": -1.0}]},
])
def test_one_token_a_chunk_gives_what_the_general_path_gives(lp):
    fast, general = Out(), Out()
    olp.take_tokens(fast, _choice([5], lp), "x", 1.5, VOCAB.get)
    chosen, top_ids, top_logprobs = olp.logprob_rows(_choice([5], lp).logprobs, 2, VOCAB.get)  # n=2: no fast path
    general.completion_ids, general.token_times_s = [5], [1.5]
    general.logprobs, general.top_ids, general.top_logprobs = chosen[:1], top_ids[:1], top_logprobs[:1]
    assert fast.completion_ids == general.completion_ids and fast.token_times_s == general.token_times_s
    assert fast.top_ids == general.top_ids and fast.top_logprobs == general.top_logprobs
    assert [math.isnan(v) for v in fast.logprobs] == [math.isnan(v) for v in general.logprobs]
    assert [v for v in fast.logprobs if not math.isnan(v)] == [v for v in general.logprobs if not math.isnan(v)]
