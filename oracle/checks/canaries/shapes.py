"""The shape of the canaries' block of a reference's manifest (`CheckDescriptor.blocks`): a row per canary item,
checked when a gate loads the reference (store/reference.check_blocks)."""

from __future__ import annotations

from typing import Any

from oracle.store.shapes import Shape

__all__ = ["CanaryShape"]


class CanaryShape(Shape):
    verdict: str | None = None
    ok: Any = None  # read for its truth only
    completion_sha256: str | None = None  # a reference's (schema 2): its completion's record, records/canaries/
