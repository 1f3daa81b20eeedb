"""A completion checked against the request it answers: no more tokens than max_tokens, every id (chosen and top-k)
a vocabulary index, ids present where the family requires them. A violation is an `AnswerBroken` naming the field
and the value: the server answered garbage, which is no regression of the model (never `divergent`).

    check_completion(completion, request, vocab=49152, where="POST /completion")
"""

from __future__ import annotations

from oracle.backends.base import Completion, CompletionRequest
from oracle.backends.schemas import UNSET, AnswerBroken

__all__ = ["check_completion", "check_count", "check_stop"]


def check_count(n: int, request: CompletionRequest, *, where: str) -> None:
    """Called as tokens arrive: the stream ends at the first token past max_tokens (the rest is never read)."""
    if n > request.max_tokens:
        raise AnswerBroken(f"{where}: the server's answer breaks the request: {n} completion tokens (and counting) "
                           f"for max_tokens {request.max_tokens}; field tokens holds more tokens than asked")


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
