"""The context the server really has, read once at start (through the backend's `served_context`, as its
capabilities declare), for the identity, the prompts that cannot fit and every check that plans by it.

    context = ServedContext.read(backend)   # ServedContext(2048, "llama-server /props default_generation...")
    context.as_json()                       # {"tokens": 2048, "source": ...}: identity.json served_context

The run's items are planned from the options alone (every xdist worker collects the same ones); only the run
learns what the server holds (llama-server caps `-c` at the model's training context, and splits it over its
slots).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ServedContext"]


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

    def as_json(self) -> dict:
        return {"tokens": self.tokens, "source": self.source}
