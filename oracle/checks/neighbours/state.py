"""The neighbours' part of the report: identity.json `neighbours` (neighbour prompt length -> counts, first
divergences, each prompt's overlap with its neighbour, verdict; or the reason the length was dropped).

    state = NeighboursState(); state.apply("neighbours", {"9": summary}); state.to_json()["neighbours"]["9"]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["NeighboursState"]


@dataclass
class NeighboursState:
    KEYS = ("neighbours",)

    lengths: dict[str, dict] = field(default_factory=dict)  # "9" -> the run beside 9-token neighbours

    def apply(self, key: str, value: dict) -> None:
        self.lengths.update(value)

    def to_json(self) -> dict:
        return {"neighbours": self.lengths}

    @classmethod
    def from_json(cls, data: Mapping) -> "NeighboursState":
        return cls(dict(data.get("neighbours") or {}))

    @classmethod
    def merge(cls, own: "NeighboursState", parts: list[tuple[str, "NeighboursState"]]) -> "NeighboursState":
        """Each length ran whole on one server, which its row names."""
        rows = dict(own.lengths)
        for label, state in parts:
            rows.update({k: v | {"server": label} for k, v in state.lengths.items()})
        return cls(dict(sorted(rows.items(), key=lambda kv: int(kv[0]))))
