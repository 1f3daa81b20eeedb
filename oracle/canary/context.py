"""The needle lengths the server cannot hold, by the context it really has (`run/served_context.py`, read once
at start).

    beyond(context, 2048)       # "beyond the server's context of 2048 tokens" (2048 + 16 answer tokens)
    beyond(context, 1024)       # None: it fits
    unknown_note(context)       # None when the server said; else why the lengths are not checked
    context_words(identity["served_context"])  # "2048 tokens (llama-server /props ...)", for the reports

Needle items are planned from the options alone (every xdist worker collects the same ones); a needle that
does not fit what the server holds is `dropped`: not sent, a passing status, listed in the notes and left out
of a reference recorded by the run.
"""

from __future__ import annotations

from oracle.canary.needle import ANSWER_TOKENS
from oracle.run.served_context import ServedContext

__all__ = ["DROPPED_NOTE", "ServedContext", "beyond", "context_words", "unknown_note"]

DROPPED_NOTE = "dropped, {reason} (not sent; a reference recorded by this run is written without them)"


def beyond(context: ServedContext, length: int) -> str | None:
    """Why a needle of `length` prompt tokens cannot be sent (it needs ANSWER_TOKENS more), or None."""
    if context.tokens is None or length + ANSWER_TOKENS <= context.tokens:
        return None
    return f"beyond the server's context of {context.tokens} tokens"


def unknown_note(context: ServedContext) -> str | None:
    if context.tokens is not None:
        return None
    return (f"needle lengths were not checked against the server's real context: {context.source}; a needle "
            "longer than it fails not-run with the server's error; give --oracle-context N (the server's context) "
            "to plan within it")


def context_words(served: dict | None) -> str | None:
    """identity.json's `served_context` in words: '2048 tokens (where from)', or 'not known (why)'."""
    if not served:
        return None
    return f"{served['tokens']} tokens ({served['source']})" if served.get("tokens") else f"not known ({served['source']})"
