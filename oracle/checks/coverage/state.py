"""The coverage check's part of the report: each run's conditions (identity.json `coverage`: run -> condition ->
held, detail, how).

    state = CoverageState(); state.apply("coverage", {"boot1-c4": row}); state.to_json()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["CoverageState"]


@dataclass
class CoverageState:
    KEYS = ("coverage",)
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES = {"coverage": 130}

    runs: dict[str, dict] = field(default_factory=dict)  # run (boot1-c4) -> condition -> held, detail, how

    def apply(self, key: str, value: dict) -> None:
        self.runs.update(value)

    def to_json(self) -> dict:
        return {"coverage": self.runs}

    @classmethod
    def from_json(cls, data: Mapping) -> "CoverageState":
        return cls(dict(data.get("coverage") or {}))

    @classmethod
    def merge(cls, own: "CoverageState", parts: list[tuple[str, "CoverageState"]]) -> "CoverageState":
        """Every server runs boot1-c1: each server's runs are kept apart, as run@serverK."""
        return cls({f"{run}@{label}": row for label, state in parts for run, row in state.runs.items()})
