"""What the sampling-distribution item needs of the --score-url server: to score a sampled path under the
reference model (each sampled token forced so its own log-prob and rank are read), and to say what it is
(`PathScorer`, which a backend that declares `sampling` implements; no method of `Backend`). A server whose
backend lacks it leaves the item not run, saying why.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from oracle.backends.base import Capabilities, TeacherForced

__all__ = ["PathScorer"]


@runtime_checkable
class PathScorer(Protocol):
    capabilities: Capabilities  # sampling: how it scores a sampled path

    def scored_path(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int) -> TeacherForced: ...

    def server_identity(self) -> dict: ...
