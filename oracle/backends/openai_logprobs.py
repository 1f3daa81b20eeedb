"""How OpenAI-compatible answers spell a token's logprobs, as oracle's ids and logprobs: llama.cpp's per-token
objects with ids, vLLM's `token_id:N` keys (return_tokens_as_token_ids), or token strings mapped to ids by the
served tokenizer (never guessed).

    chosen, top_ids, top_logprobs = logprob_rows(choice["logprobs"], n_tokens, key_to_id)
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter

import msgspec

from oracle.backends.schemas import UNSET, AnswerBroken, OpenAIChoice, OpenAILogprobs

__all__ = ["TOKEN_ID", "logprob_rows", "take_tokens", "token_id"]

TOKEN_ID = "token_id:"
_IDS = msgspec.json.Decoder(list[int])
_ID, _LOGPROB = attrgetter("id"), attrgetter("logprob")


def _key_id(key, key_to_id) -> int | None:
    if isinstance(key, int):
        return key
    key = str(key)
    return int(key[len(TOKEN_ID):]) if key.startswith(TOKEN_ID) else key_to_id(key)


def _token_ids(keys: list[str]) -> list[int] | None:
    """vLLM's `token_id:N` keys as ids in one parse (joined, the prefixes dropped, read as a JSON array), or None
    when a key is not `token_id:` and a number (`_keyed_row` reads those one at a time, as before). The counts
    make sure that every key starts with the prefix once and holds no comma, so the array is the keys' ids."""
    joined = ",".join(keys)
    n = len(keys)
    if joined.count(TOKEN_ID) != n or ("," + joined).count("," + TOKEN_ID) != n:
        return None
    try:
        ids = _IDS.decode(f"[{joined.replace(TOKEN_ID, '')}]")
    except msgspec.DecodeError:
        return None
    return ids if len(ids) == n else None


def _keyed_row(row: dict, key_to_id) -> tuple[list[int], list[float]]:
    """One top-k object (key -> logprob) as ids and logprobs, best first; ([], []) when a key maps to no id.
    This is the inner loop of every streamed token: no Python loop over the keys in the common case."""
    keys = list(row)
    ids = _token_ids(keys)  # vLLM's return_tokens_as_token_ids
    if ids is None:
        if all(map(str.startswith, keys, repeat(TOKEN_ID))):
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
    if n == 1 and lp is not None and lp.content is None and lp.token_logprobs and lp.top_logprobs:
        v, row = lp.token_logprobs[0], lp.top_logprobs[0]  # one token a chunk (vLLM): no lists to fill
        ids, values = _keyed_row(row, key_to_id) if row else ([], [])
        return [float("nan") if v is None else float(v)], [ids], [values]
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


def token_id(key: str) -> int:
    """vLLM's `token_id:N` as N; AnswerBroken for a key that is no id."""
    tail = key[len(TOKEN_ID):]
    if not tail.isdigit():
        raise AnswerBroken(f"the server's answer breaks its schema: field logprobs.tokens holds {key!r}, which is no "
                           f"{TOKEN_ID}N id")
    return int(tail)


def take_tokens(out, choice: OpenAIChoice, piece: str, now: float, key_to_id) -> None:
    """One streamed choice's tokens into the completion `out`, at time `now`: ids from `token_ids`, from
    llama.cpp's per-token objects or from vLLM's `token_id:N` strings, with their logprobs and top-k rows; a
    piece of text without ids gets its time alone (the answer is then compared on its text)."""
    lp = choice.logprobs
    ids = choice.token_ids
    content = lp.content if lp is not None else None
    if ids is None and content and all(c.id is not UNSET for c in content):
        ids = [c.id for c in content]
    if ids is None and lp is not None and lp.tokens and all(t.startswith(TOKEN_ID) for t in lp.tokens):
        ids = [token_id(t) for t in lp.tokens]
    if not ids:
        if piece:
            out.token_times_s.append(now)
        return
    chosen, top_ids, top_logprobs = logprob_rows(lp, len(ids), key_to_id)
    out.completion_ids.extend(ids)
    out.token_times_s.extend([now] * len(ids))
    out.logprobs.extend(chosen)
    out.top_ids.extend(top_ids)
    out.top_logprobs.extend(top_logprobs)
