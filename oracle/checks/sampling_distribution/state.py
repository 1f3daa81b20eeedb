"""The sampled run's part of the report (identity.json `sampling`): the settings and which check judges them
(written as the run starts), and the distribution check's statistics (`distribution`) when it ran.

    state = SamplingState(); state.apply("sampling", {"settings": ...}); state.apply("sampling", {"distribution": d})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["SamplingState"]


@dataclass
class SamplingState:
    KEYS = ("sampling",)

    report: dict | None = None  # None: a greedy run

    def apply(self, key: str, value: dict | None) -> None:
        """A later finding adds to the report (the distribution beside the settings); the first one is the report."""
        if isinstance(self.report, dict) and isinstance(value, dict):
            self.report.update(value)
        else:
            self.report = value

    def to_json(self) -> dict:
        return {"sampling": self.report}

    @classmethod
    def from_json(cls, data: Mapping) -> "SamplingState":
        return cls(data.get("sampling"))

    @classmethod
    def merge(cls, own: "SamplingState", parts: list[tuple[str, "SamplingState"]]) -> "SamplingState":
        """The settings are the plan's (the controller's own); the distribution check is refused under -n."""
        return cls(own.report)
