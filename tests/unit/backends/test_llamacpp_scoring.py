"""llama-server's scoring of a sampled path (`scored_path`): each token forced by logit_bias, its own logprob read;
a server that does not predict the forced token is named, never retried. A scripted server: protocol edge cases."""

from __future__ import annotations

import json

import httpx
import pytest

from oracle.backends import RequestFailed
from oracle.backends.llamacpp import LlamaCppBackend


def _server(sent: list[dict], *, obey: bool = True):
    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        sent.append(body)
        forced = body["logit_bias"][0][0]
        token = forced if obey else forced + 1
        top = [{"id": 7, "logprob": -0.2}, {"id": forced, "logprob": -1.5}]
        return httpx.Response(200, json={"tokens": [token], "completion_probabilities": [
            {"id": token, "logprob": -1.5, "top_logprobs": top}]})
    return httpx.MockTransport(answer)


def test_each_position_forces_its_token_and_reads_its_own_logprob():
    sent: list[dict] = []
    backend = LlamaCppBackend("http://scorer", transport=_server(sent))
    scored = backend.scored_path([1, 2], [30, 31], logprobs=20)
    assert scored.path_logprobs == [-1.5, -1.5] and scored.top_ids == [[7, 30], [7, 31]] and scored.requests == 2
    assert [b["prompt"] for b in sent] == [[1, 2], [1, 2, 30]]
    assert [b["logit_bias"] for b in sent] == [[[30, 1e4]], [[31, 1e4]]]
    assert all(b["n_predict"] == 1 and b["n_probs"] == 20 and b["cache_prompt"] for b in sent)


def test_a_scorer_that_ignores_the_forced_token_is_named():
    sent: list[dict] = []
    backend = LlamaCppBackend("http://scorer", transport=_server(sent, obey=False))
    with pytest.raises(RequestFailed, match=r"scoring sampled position 0\): the forced token 30 was not predicted"):
        backend.scored_path([1, 2], [30, 31], logprobs=20)
    assert len(sent) == 1  # never retried
