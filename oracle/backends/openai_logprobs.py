"""How OpenAI-compatible answers spell a token's logprobs, as oracle's ids and logprobs: llama.cpp's per-token
objects with ids, vLLM's `token_id:N` keys (return_tokens_as_token_ids), or token strings mapped to ids by the
served tokenizer (never guessed). vLLM's keys are looked up among those already read (`_KNOWN`); a row with any
other key is read the careful way, so an unusual answer gives what it always gave, error or ids.

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
# The `token_id:N` keys already read, as N. A streamed token's twenty keys are nearly all ones met before (a
# vocabulary is finite), and looking a key up (its hash is kept in the str, which msgspec often hands out again) is
# a fraction of reading it anew; this is what vLLM's top-k costs per token. Only the prefix and 1-18 ASCII digits
# are learnt, read as those digits are in every branch of `_row_ids`; at most KNOWN_KEYS keys (a large vocabulary,
# some 32 MB): a key past that is read the careful way each time.
KNOWN_KEYS = 1 << 18
_KNOWN: dict[str, int] = {}
_KNOWN_ID = _KNOWN.__getitem__


def _key_id(key, key_to_id) -> int | None:
    if isinstance(key, int):
        return key
    key = str(key)
    return token_id(key) if key.startswith(TOKEN_ID) else key_to_id(key)


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
    return ids if len(ids) == n and not any(i < 0 for i in ids) else None  # a negative id is none: read one by one


def _keyed_row(row: dict, key_to_id) -> tuple[list[int], list[float]]:
    """One top-k object (key -> logprob) as ids and logprobs, best first; ([], []) when a key maps to no id.
    This is the inner loop of every streamed token: its keys are looked up among the `token_id:N` keys already
    read (one C call for the row); a row with a key not seen before is read the careful way (`_row_ids`)."""
    try:
        ids = list(map(_KNOWN_ID, row))
    except KeyError:
        ids = _row_ids(list(row), key_to_id)
        if ids is None:
            return [], []
    values = list(row.values())  # floats already: the schema's dict[str, float] makes every value one
    if values != sorted(values, reverse=True):
        return _best_first(ids, values)
    return ids, values


def _best_first(ids: list[int], values: list[float]) -> tuple[list[int], list[float]]:
    """vLLM adds the sampled token to the top-k when it is not among them; best first, k kept as sent."""
    order = sorted(range(len(values)), key=lambda j: -values[j])
    return [ids[j] for j in order], [values[j] for j in order]


def _row_ids(keys: list[str], key_to_id) -> list[int] | None:
    """A row's ids read key by key (ids in one parse when all are `token_id:N`, token strings through the served
    tokenizer); None when a key maps to no id. Each `token_id:` key of ASCII digits is learnt (`_KNOWN`): whatever
    else the row holds, that key reads as its digits' number, which is what the lookup then gives."""
    ids = _token_ids(keys)  # vLLM's return_tokens_as_token_ids
    if ids is None:
        if all(map(str.startswith, keys, repeat(TOKEN_ID))):
            ids = [token_id(k) for k in keys]  # a key that is no id: the schema's error, naming it
        else:
            ids = [_key_id(k, key_to_id) for k in keys]
            if None in ids:
                ids = None
    for key in keys:
        if key not in _KNOWN and key.startswith(TOKEN_ID) and len(_KNOWN) < KNOWN_KEYS:
            digits = _id_digits(key)
            if digits is not None and len(digits) <= 18:
                _KNOWN[key] = int(digits)
    return ids


def _one_keyed(lp: OpenAILogprobs | None) -> bool:
    """A chunk's logprobs for one token in vLLM's spelling (a chosen logprob and a keyed top-k row)."""
    return lp is not None and lp.content is None and bool(lp.token_logprobs) and bool(lp.top_logprobs)


def _one_keyed_row(lp: OpenAILogprobs, key_to_id) -> tuple[float, list[int], list[float]]:
    """The one token's chosen logprob (NaN where absent), top-k ids best first and their logprobs."""
    v, row = lp.token_logprobs[0], lp.top_logprobs[0]
    ids, values = _keyed_row(row, key_to_id) if row else ([], [])
    return float("nan") if v is None else float(v), ids, values


def logprob_rows(lp: OpenAILogprobs | None, n: int, key_to_id
                 ) -> tuple[list[float], list[list[int]], list[list[float]]]:
    """(chosen-token logprob, top-k ids best first, their logprobs) for n tokens; NaN / [] where absent.
    A row whose token-string keys do not all map to one id each is left empty, never guessed."""
    if n == 1 and _one_keyed(lp):
        chosen1, ids, values = _one_keyed_row(lp, key_to_id)
        return [chosen1], [ids], [values]
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


def _id_digits(key: str) -> str | None:
    """The N of a `token_id:N` key when it is ASCII digits (one or more), else None."""
    tail = key[len(TOKEN_ID):]
    return tail if tail.isascii() and tail.isdigit() else None


def token_id(key: str) -> int:
    """vLLM's `token_id:N` as N; AnswerBroken for a key that is no id."""
    tail = _id_digits(key)
    if tail is None:
        raise AnswerBroken(f"the server's answer breaks its schema: field logprobs.tokens holds {key!r}, which is no "
                           f"{TOKEN_ID}N id")
    return int(tail)


def take_tokens(out, choice: OpenAIChoice, piece: str, now: float, key_to_id) -> None:
    """One streamed choice's tokens into the completion `out`, at time `now`: ids from `token_ids`, from
    llama.cpp's per-token objects or from vLLM's `token_id:N` strings, with their logprobs and top-k rows; a
    piece of text without ids gets its time alone (the answer is then compared on its text)."""
    lp = choice.logprobs
    ids = choice.token_ids
    if ids is not None and len(ids) == 1 and _one_keyed(lp):  # vLLM: one token a chunk, in the fewest steps
        chosen1, top_ids, top_logprobs = _one_keyed_row(lp, key_to_id)
        out.completion_ids.append(ids[0])
        out.token_times_s.append(now)
        out.logprobs.append(chosen1)
        out.top_ids.append(top_ids)
        out.top_logprobs.append(top_logprobs)
        return
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
