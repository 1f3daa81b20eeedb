"""A completion checked against the request it answers: no more tokens than max_tokens, every id (chosen and top-k)
a vocabulary index, ids present where the family requires them, the text what the ids detokenize to. A violation
is an `AnswerBroken` naming the field and the value: the server answered garbage, which is no regression of the
model (never `divergent`).

    check_completion(completion, request, vocab=49152, where="POST /completion")
    check_text(completion, backend.detokenize, where="the answer to prompt 'p1'")
"""

from __future__ import annotations

import re

from oracle.backends.base import IDS_FROM_SERVER, Completion, CompletionRequest
from oracle.backends.schemas import UNSET, AnswerBroken

__all__ = ["check_completion", "check_count", "check_ids_counted", "check_stop", "check_text", "ids_short",
           "text_agrees"]


def check_count(n: int, request: CompletionRequest, *, where: str) -> None:
    """Called as tokens arrive: the stream ends at the first token past max_tokens (the rest is never read)."""
    if n > request.max_tokens:
        raise AnswerBroken(f"{where}: the server's answer breaks the request: {n} completion tokens (and counting) "
                           f"for max_tokens {request.max_tokens}; field tokens holds more tokens than asked")


def ids_short(c: Completion, counted) -> bool:
    """The answer gave some ids, but fewer than the server's own count of generated tokens."""
    n = len(c.completion_ids)
    return isinstance(counted, int) and bool(n) and counted > n


def check_ids_counted(c: Completion, counted, *, field: str, counter: str, where: str) -> None:
    """Every generated token's id came with the answer, as many as the server's own count of generated tokens.
    llama-server holds back a token that ends inside a multi-byte character and then streams only the last id of
    the character (its /completion `tokens`; its OpenAI route one `logprobs.content` entry per character): the ids
    do not spell the text, and a reference made of them would be wrong."""
    if not ids_short(c, counted):
        return
    n = len(c.completion_ids)
    raise AnswerBroken(f"{where}: the server's answer breaks its own ids: field {field} gave {n} ids for {counter} "
                       f"{counted} generated tokens (llama-server gives only the last id of a character that spans "
                       f"several tokens; text {c.text[-20:]!r}): these ids do not spell the text, so no record is "
                       "made of them")


def check_stop(value, known: dict[str, str], *, engine: str, where: str) -> str:
    """The record's finish reason for an engine's stop reason; AnswerBroken for one that is no ending."""
    if not isinstance(value, str) or value not in known:
        said = "absent" if value is None or value is UNSET else repr(value)
        raise AnswerBroken(f"{where}: the server's answer breaks its schema: field {engine}: stop reason {said} is "
                           f"neither a stop nor the length limit (known: {', '.join(sorted(known))})")
    return known[value]


def _outside(ids, vocab: int | None) -> int | None:
    """The first id that is no vocabulary index (negative, or >= vocab when the vocabulary's size is known)."""
    if not ids:
        return None
    low, high = min(ids), max(ids)
    if low >= 0 and (vocab is None or high < vocab):
        return None
    return next(t for t in ids if t < 0 or (vocab is not None and t >= vocab))


def check_completion(c: Completion, request: CompletionRequest, *, vocab: int | None, where: str) -> None:
    """Every answer, whatever its family: the token count within max_tokens, ids within the vocabulary."""
    n = len(c.completion_ids)
    if n > request.max_tokens:
        raise AnswerBroken(f"{where}: the server's answer breaks the request: {n} completion tokens for max_tokens "
                           f"{request.max_tokens}")
    size = f"the vocabulary's {vocab} ids (0..{vocab - 1})" if vocab else "the vocabulary (ids are never negative)"
    bad = _outside(c.completion_ids, vocab)
    if bad is not None:
        at = c.completion_ids.index(bad)
        raise AnswerBroken(f"{where}: the server's answer breaks the request: field completion token {at} = {bad} "
                           f"is outside {size}")
    for at, row in enumerate(c.top_ids):
        bad = _outside(row, vocab)
        if bad is not None:
            raise AnswerBroken(f"{where}: the server's answer breaks the request: field top_logprobs of token {at} "
                               f"holds id {bad}, outside {size}")
    if c.prompt_ids is not None and (bad := _outside(c.prompt_ids, vocab)) is not None:
        raise AnswerBroken(f"{where}: the server's answer breaks the request: field prompt_token_ids holds id {bad}, "
                           f"outside {size}")


# An end-of-generation token as a detokenizer writes it: <|im_end|>, </s>, <|eot_id|>, <end_of_turn> (or nothing).
_CONTROL = re.compile(r"(<[^<>\s]{1,40}>)?")


def _plain(text: str) -> str:
    """A text as the comparison reads it: without the replacement characters that stand for a multi-byte character
    cut at the end (the server holds an incomplete character back, a detokenizer writes U+FFFD for it), and
    without the one space a SentencePiece detokenizer drops at the start of a sequence."""
    return text.rstrip("\ufffd").removeprefix(" ")


def text_agrees(text: str, detokenized: str) -> bool:
    """The server's text is what its ids detokenize to, after the tokenizer's own normalisation (see `_plain`)."""
    return text == detokenized or _plain(text) == _plain(detokenized)


def check_text(c: Completion, detokenize, *, where: str) -> None:
    """An answer that gives both ids and text: the text must be what the server's own detokenizer makes of the ids.

    Agreement is read as the tokenizer writes text: the whole path detokenized at once (a character split over
    several tokens is whole there), an incomplete character at the end and a leading space not counted, and for
    an answer that stopped the end-of-generation token's own text (`<|im_end|>`, which no server streams) left
    out by detokenizing the path without its last token, when that token alone is a control token. oracle sends
    no stop strings, so no text is cut elsewhere. An answer without ids (ids_source text) or without text has
    nothing to agree."""
    ids = c.completion_ids
    if not ids or not c.text or c.ids_source != IDS_FROM_SERVER:
        return
    detokenized = detokenize(ids)
    if text_agrees(c.text, detokenized):
        return
    if c.finish_reason == "stop" and _CONTROL.fullmatch(detokenize(ids[-1:])) and \
            text_agrees(c.text, detokenize(ids[:-1])):
        return
    at = next((i for i, (a, b) in enumerate(zip(c.text, detokenized)) if a != b), min(len(c.text), len(detokenized)))
    raise AnswerBroken(f"{where}: the server's answer breaks its own ids: field text = {_excerpt(c.text, at)} is not "
                       f"what its {len(ids)} token ids detokenize to ({_excerpt(detokenized, at)}; first difference "
                       f"at character {at})")


def _excerpt(text: str, at: int, width: int = 30) -> str:
    """text around character `at`, quoted, with '...' where it was cut."""
    start = max(0, at - width // 2)
    return ("..." if start else "") + repr(text[start:start + width]) + ("..." if start + width < len(text) else "")
