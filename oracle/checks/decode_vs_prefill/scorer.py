"""What the decode-vs-prefill and chunked-prefill items need of a backend: to score a path as a prompt, in one
pass or in chunks (`PrefillScorer`, which a backend that declares `prefill_scoring` implements; no method of
`Backend`), and to say why it cannot (`prefill_refusal`, on every backend). A backend without it gets the
items' `not offered` answer, saying why.

    if backend.capabilities.prefill_scoring and isinstance(backend, PrefillScorer): ...
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from oracle.backends.base import Capabilities, TeacherForced

__all__ = ["PrefillScorer", "offers_prefill_scoring"]


@runtime_checkable
class PrefillScorer(Protocol):
    family: str
    capabilities: Capabilities  # prefill_scoring: how it scores a path (None: it cannot)

    def prefill_forced(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int, seed: int = 1234,
                       positions: list[int] | None = None, chunk: int | None = None) -> TeacherForced: ...

    def prefill_chunking(self, chunk: int) -> str | None: ...  # why chunks of this size are not offered, or None

    def served_context(self) -> int | None: ...


def offers_prefill_scoring(backend) -> bool:
    """The backend declares prefill scoring and has what it takes."""
    return bool(backend.capabilities.prefill_scoring) and isinstance(backend, PrefillScorer)
