"""The context the server really has, read once at start, and the needle lengths it cannot hold.

    context = ServedContext.read(backend)   # ServedContext(2048, "llama-server /props default_generation_settings...")
    context.beyond(2048)                    # "beyond the server's context of 2048 tokens" (2048 + 16 answer tokens)
    context.beyond(1024)                    # None: it fits
    context.unknown_note()                  # None when the server said; else why the lengths are not checked
    context_words(identity["served_context"])  # "2048 tokens (llama-server /props ...)", for the reports

Needle items are planned from the options alone (every xdist worker collects the same ones); only the
run learns what the server holds (llama-server caps `-c` at the model's training context, and splits it
over its slots). A needle that does not fit is `dropped`: not sent, a passing status, listed in the notes
and left out of a reference recorded by the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from oracle.canary.needle import ANSWER_TOKENS

__all__ = ["DROPPED_NOTE", "ServedContext", "context_words"]

DROPPED_NOTE = "dropped, {reason} (not sent; a reference recorded by this run is written without them)"


@dataclass(frozen=True)
class ServedContext:
    tokens: int | None  # None: the server did not say (its lengths are not checked)
    source: str  # where the number came from, or why there is none

    @classmethod
    def read(cls, backend) -> "ServedContext":
        """Ask the backend, as its capabilities declare; RequestFailed when the server does not answer."""
        where = backend.capabilities.served_context
        if where is None:
            return cls(None, f"the {backend.family} backend cannot read the server's context")
        tokens = backend.served_context()
        if tokens is None:
            return cls(None, f"the server does not state its context ({where})")
        return cls(tokens, where)

    def beyond(self, length: int) -> str | None:
        """Why a needle of `length` prompt tokens cannot be sent (it needs ANSWER_TOKENS more), or None."""
        if self.tokens is None or length + ANSWER_TOKENS <= self.tokens:
            return None
        return f"beyond the server's context of {self.tokens} tokens"

    def unknown_note(self) -> str | None:
        if self.tokens is not None:
            return None
        return (f"needle lengths were not checked against the server's real context: {self.source}; a needle "
                "longer than it fails not-run with the server's error; give --context N (the server's context) "
                "to plan within it")

    def as_json(self) -> dict:
        return {"tokens": self.tokens, "source": self.source}


def context_words(served: dict | None) -> str | None:
    """identity.json's `served_context` in words: '2048 tokens (where from)', or 'not known (why)'."""
    if not served:
        return None
    return f"{served['tokens']} tokens ({served['source']})" if served.get("tokens") else f"not known ({served['source']})"
