"""The check registry: which producer answers each kind of gate item, instead of looking methods up by name.

    registry.register(kind, producer)                  # each check kind's, from its descriptor's build(parts)
    finding = registry.produce(kind, "code-hashmap")   # Finding(check, report findings): a prompt's item
"""

from __future__ import annotations

from typing import Callable

from oracle.checks.descriptor import Finding

__all__ = ["CheckRegistry", "Finding"]


class CheckRegistry:
    def __init__(self) -> None:
        self._producers: dict[str, Callable[..., Finding]] = {}

    def register(self, kind: str, producer: Callable[..., Finding]) -> None:
        self._producers[kind] = producer

    def produce(self, kind: str, key=None) -> Finding:
        if kind not in self._producers:
            raise KeyError(f"no producer registered for gate items of kind {kind!r}; known: "
                           f"{', '.join(sorted(self._producers))}")
        producer = self._producers[kind]
        return producer(key) if key is not None else producer()
