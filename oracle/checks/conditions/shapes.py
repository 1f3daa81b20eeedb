"""The shape of the conditions' block of a reference's manifest (`CheckDescriptor.blocks`): the noise envelope
of the record run's ladder levels and boots, checked when a gate loads the reference."""

from __future__ import annotations

from typing import Any

from oracle.store.shapes import Shape

__all__ = ["NoiseShape"]


class NoiseShape(Shape):
    varies: dict[str, Any] = {}
    determinism: str | None = None
    conditions: list[str] = []
