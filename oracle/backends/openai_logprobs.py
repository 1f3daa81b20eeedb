"""How OpenAI-compatible answers spell a token's logprobs, as oracle's ids and logprobs: llama.cpp's per-token
objects with ids, vLLM's `token_id:N` keys (return_tokens_as_token_ids), or token strings mapped to ids by the
served tokenizer (never guessed).

    chosen, top_ids, top_logprobs = logprob_rows(choice["logprobs"], n_tokens, key_to_id)
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter

from oracle.backends.schemas import UNSET, OpenAILogprobs

__all__ = ["TOKEN_ID", "logprob_rows"]

TOKEN_ID = "token_id:"
_ID, _LOGPROB = attrgetter("id"), attrgetter("logprob")


def _key_id(key, key_to_id) -> int | None:
    if isinstance(key, int):
        return key
    key = str(key)
    return int(key[len(TOKEN_ID):]) if key.startswith(TOKEN_ID) else key_to_id(key)


def _keyed_row(row: dict, key_to_id) -> tuple[list[int], list[float]]:
    """One top-k object (key -> logprob) as ids and logprobs, best first; ([], []) when a key maps to no id.
    The loops run in C (map): this is the inner loop of every streamed token."""
    keys = list(row)
    if all(map(str.startswith, keys, repeat(TOKEN_ID))):  # vLLM's return_tokens_as_token_ids
        ids = list(map(int, map(str.removeprefix, keys, repeat(TOKEN_ID))))
    else:
        ids = [_key_id(k, key_to_id) for k in keys]
        if None in ids:
            return [], []
    values = list(map(float, row.values()))
    if values != sorted(values, reverse=True):
        # vLLM adds the sampled token to the top-k when it is not among them; best first, k kept as sent.
        order = sorted(range(len(values)), key=lambda j: -values[j])
        ids, values = [ids[j] for j in order], [values[j] for j in order]
    return ids, values


def logprob_rows(lp: OpenAILogprobs | None, n: int, key_to_id
                 ) -> tuple[list[float], list[list[int]], list[list[float]]]:
    """(chosen-token logprob, top-k ids best first, their logprobs) for n tokens; NaN / [] where absent.
    A row whose token-string keys do not all map to one id each is left empty, never guessed."""
    chosen = [float("nan")] * n
    top_ids: list[list[int]] = [[] for _ in range(n)]
    top_logprobs: list[list[float]] = [[] for _ in range(n)]
    if lp is None:
        return chosen, top_ids, top_logprobs
    if lp.content is not None:  # llama.cpp: per-token objects with ids
        for i, c in enumerate(lp.content[:n]):
            chosen[i] = float("nan") if c.logprob is None else c.logprob
            tops = [t for t in c.top_logprobs if t.id is not UNSET]
            top_ids[i] = list(map(_ID, tops))
            top_logprobs[i] = list(map(_LOGPROB, tops))
        return chosen, top_ids, top_logprobs
    for i, v in enumerate((lp.token_logprobs or [])[:n]):
        chosen[i] = float("nan") if v is None else float(v)
    for i, row in enumerate((lp.top_logprobs or [])[:n]):
        if row:
            top_ids[i], top_logprobs[i] = _keyed_row(row, key_to_id)
    return chosen, top_ids, top_logprobs
