"""What the decode-vs-prefill and chunked-prefill items need of a backend: to score a path as a prompt, in one
pass or in chunks, and to say why it cannot. Every `Backend` has these (oracle/backends/base.py); the items name
only this much of it.
"""

from __future__ import annotations

from typing import Protocol

from oracle.backends.base import Capabilities, TeacherForced

__all__ = ["PrefillScorer"]


class PrefillScorer(Protocol):
    family: str
    capabilities: Capabilities  # prefill_scoring: how it scores a path (None: it cannot)
    prefill_refusal: str  # why it cannot, for the report

    def prefill_forced(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int, seed: int = 1234,
                       positions: list[int] | None = None, chunk: int | None = None) -> TeacherForced: ...

    def prefill_chunking(self, chunk: int) -> str | None: ...  # why chunks of this size are not offered, or None

    def served_context(self) -> int | None: ...
