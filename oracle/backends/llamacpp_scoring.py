"""llama-server's scoring requests: one non-streamed /completion that scores a prompt (the top-k of the next token,
or a forced token's own logprob), never inside a gated condition. Teacher forcing, a sampled path's own tokens, and
a path scored as a prompt in one pass or in chunks through the prompt cache (decode vs prefill) all go through it.

    class LlamaCppBackend(LlamaCppScoring, HttpClients, BackendBase)  # needs self._client, base_url, _timeout
"""

from __future__ import annotations

import httpx

from oracle.backends.base import RequestFailed, TeacherForced
from oracle.backends.schemas import UNSET, AnswerBroken, LlamaEvent, parse_answer

__all__ = ["LlamaCppScoring"]


class LlamaCppScoring:
    """The scoring half of the llama.cpp backend (a mixin: the backend gives the client and its timeout)."""

    # -- teacher forcing (diagnostic, apart from the gated run) ---------------------------------
    def teacher_forced(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int,
                       seed: int = 1234, positions: list[int] | None = None) -> TeacherForced:
        """Top-k logprobs after prompt + completion[:i] for each position i (default: all), one request each.

        The prompt cache is on for these requests (each extends the last one's prefix by one token), and
        the tokens it supplied are counted; they never run inside a gated condition.
        """
        wanted = range(len(completion_ids)) if positions is None else positions
        rows_ids: list[list[int]] = []
        rows_lps: list[list[float]] = []
        cached = 0
        for i in wanted:
            answer = self._scoring_request(list(prompt_ids) + list(completion_ids[:i]), logprobs=logprobs, seed=seed,
                                           cache=True, n_predict=1, where=f"teacher-forced position {i}")
            ids, lps = _top_row(answer, f"teacher-forced position {i}")
            rows_ids.append(ids)
            rows_lps.append(lps)
            cached += _timing(answer, "cache_n") or 0
        return TeacherForced(rows_ids, rows_lps, method=self.teacher_forcing_method, requests=len(rows_ids),
                             cached_prompt_tokens=cached)

    def scored_path(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int) -> TeacherForced:
        """Teacher forcing that also reads each given token's own logprob (a sampled token may lie outside any
        top-k): the token is forced by logit_bias and llama-server reports its probability from the raw logits."""
        rows_ids, rows_lps, own = [], [], []
        for i, token in enumerate(completion_ids):
            where = f"scoring sampled position {i}"
            answer = self._scoring_request(list(prompt_ids) + list(completion_ids[:i]), logprobs=logprobs, seed=0,
                                           cache=True, n_predict=1, where=where, forced=int(token))
            probs = answer.completion_probabilities
            if answer.tokens[:1] != [token] or not probs or probs[0].logprob is None:
                raise RequestFailed(f"POST /completion ({where}): the forced token {token} was not predicted with "
                                    "its logprob (logit_bias ignored?)")
            own.append(probs[0].logprob)
            ids, lps = _top_row(answer, where)
            rows_ids.append(ids)
            rows_lps.append(lps)
        return TeacherForced(rows_ids, rows_lps, method=self.capabilities.sampling, requests=len(own),
                             path_logprobs=own)

    # -- decode vs prefill (diagnostic, apart from the gated run) -------------------------------
    def prefill_chunking(self, chunk: int) -> str | None:
        """None: chunks of `chunk` tokens can be realised (fed through the prompt cache, each proven by the
        server's own cache_n / prompt_n); else why not."""
        return None

    def _scoring_request(self, prompt: list[int], *, logprobs: int, seed: int, cache: bool, n_predict: int,
                         where: str, forced: int | None = None) -> LlamaEvent:
        """One non-streamed /completion that scores `prompt` (top-k of the next token when n_predict is 1; with
        `forced`, that token is the one predicted, its logprob from the raw logits); a failure is a RequestFailed
        naming `where`, never retried."""
        body = {"prompt": prompt, "n_predict": n_predict, "temperature": 0.0, "top_k": 1, "seed": seed,
                "n_probs": logprobs, "return_tokens": True, "cache_prompt": cache, "stream": False}
        if forced is not None:
            body["logit_bias"] = [[forced, 1e4]]
        try:
            r = self._client.post("/completion", json=body, timeout=self._timeout)
        except httpx.HTTPError as exc:
            raise RequestFailed(f"POST {self.base_url}/completion ({where}): {type(exc).__name__}: {exc}") from exc
        if r.status_code != 200:
            raise RequestFailed(f"POST /completion ({where}): HTTP {r.status_code}: {r.text[:300]}")
        answer = parse_answer(r.content, LlamaEvent, where=f"POST /completion ({where})")
        # llama-server answers n_predict 0 (the prompt evaluated into the slot) with the one token it sampled.
        if len(answer.tokens) > max(n_predict, 1):
            raise AnswerBroken(f"POST /completion ({where}): the server's answer breaks the request: "
                               f"{len(answer.tokens)} tokens for n_predict {n_predict}")
        return answer

    def prefill_forced(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int, seed: int = 1234,
                       positions: list[int] | None = None, chunk: int | None = None) -> TeacherForced:
        """Top-k after prompt + completion[:i], each position's whole prefix processed as a prompt, never decoded.

        chunk None: one request per position, cache_prompt false (a fresh prefill; the server itself splits a
        prefix longer than its -ub into ubatches). chunk C: the prefix fed C tokens at a time, one request per
        chunk (the first with cache_prompt false, each later one with cache_prompt true, continuing the previous
        chunk's KV in the slot); every request's timings must show
        exactly the previous chunks cached (cache_n) and exactly C new prompt tokens (prompt_n), or it fails.
        Row i of the answer is empty for a position whose prefix fits in one chunk (nothing was chunked).
        """
        wanted = range(len(completion_ids)) if positions is None else positions
        rows_ids: list[list[int]] = []
        rows_lps: list[list[float]] = []
        requests = 0
        for i in wanted:
            full = list(prompt_ids) + list(completion_ids[:i])
            where = f"prefill of position {i}" + ("" if chunk is None else f" in chunks of {chunk}")
            if chunk is not None and len(full) <= chunk:
                rows_ids.append([])
                rows_lps.append([])
                continue
            bounds = [len(full)] if chunk is None else [*range(chunk, len(full), chunk), len(full)]
            done, answer = 0, LlamaEvent()
            for k, end in enumerate(bounds):
                last = k == len(bounds) - 1
                # The first chunk never reuses the slot (whatever it holds); each later one continues it.
                answer = self._scoring_request(full[:end], logprobs=logprobs, seed=seed, cache=k > 0,
                                               n_predict=1 if last else 0, where=where)
                requests += 1
                cached, fresh = _timing(answer, "cache_n"), _timing(answer, "prompt_n")
                if (cached, fresh) != (done, end - done):
                    raise RequestFailed(f"POST /completion ({where}, tokens {done}..{end}): the server reports "
                                        f"{cached} cached and {fresh} processed prompt tokens, expected {done} and "
                                        f"{end - done}: the prefill did not run as asked")
                done = end
            ids, lps = _top_row(answer, where)
            rows_ids.append(ids)
            rows_lps.append(lps)
        method = (self.prefill_method if chunk is None else
                  f"llama-server: the prefix fed {chunk} tokens per request through the prompt cache (cache_prompt "
                  "true), each request's cache_n / prompt_n checked against the chunk boundaries")
        return TeacherForced(rows_ids, rows_lps, method=method, requests=requests, cached_prompt_tokens=None)

def _timing(answer: LlamaEvent, name: str) -> int | None:
    """One of the answer's `timings` counts (cache_n, prompt_n), None when it sent none."""
    value = getattr(answer.timings, name, UNSET) if answer.timings is not UNSET else UNSET
    return None if value is UNSET else value


def _top_row(answer: LlamaEvent, where: str) -> tuple[list[int], list[float]]:
    """The top-k (ids, logprobs) of a scoring request's one predicted token."""
    probs = answer.completion_probabilities
    tops = probs[0].top_logprobs if probs else []
    if not tops:
        raise RequestFailed(f"POST /completion ({where}): the server returned no top logprobs (n_probs ignored?)")
    return [t.id for t in tops], [t.logprob for t in tops]
