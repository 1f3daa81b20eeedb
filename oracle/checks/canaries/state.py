"""The canaries' part of the report (identity.json `canaries`): one row per canary item (its family, expected,
extracted, raw text, verdict and why), filled by the canary modules as each item runs.

    state = CanaryState(); state.apply("canaries", {"code[mul-7-2]": row}); state.to_json()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from oracle.canary.results import REPORT_KEY

__all__ = ["CanaryState"]


@dataclass
class CanaryState:
    KEYS = (REPORT_KEY,)

    rows: dict[str, dict] = field(default_factory=dict)  # item id -> expected, extracted, raw text, verdict

    def apply(self, key: str, value: dict) -> None:
        self.rows.update(value)

    def to_json(self) -> dict:
        return {REPORT_KEY: self.rows}

    @classmethod
    def from_json(cls, data: Mapping) -> "CanaryState":
        return cls(dict(data.get(REPORT_KEY) or {}))

    @classmethod
    def merge(cls, own: "CanaryState", parts: list[tuple[str, "CanaryState"]]) -> "CanaryState":
        """Each canary item ran on one server (placement.py deals them round-robin): every worker's rows."""
        rows = dict(own.rows)
        for _, state in parts:
            rows.update(state.rows)
        return cls(rows)
