"""The logits check's part of the report (identity.json `logits`): KLD / Same top p against the reference per
prompt and over the suite, or the reference's own precision floor (record mode, under `floor`).

    state = LogitsState(); state.apply("logits", report); state.apply("logits", {"floor": floor})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["LogitsState"]


@dataclass
class LogitsState:
    KEYS = ("logits",)

    report: dict | None = None

    def apply(self, key: str, value: dict | None) -> None:
        """A later finding adds to the report (the floor beside the comparison); the first one is the report."""
        if isinstance(self.report, dict) and isinstance(value, dict):
            self.report.update(value)
        else:
            self.report = value

    def to_json(self) -> dict:
        return {"logits": self.report}

    @classmethod
    def from_json(cls, data: Mapping) -> "LogitsState":
        return cls(data.get("logits"))

    @classmethod
    def merge(cls, own: "LogitsState", parts: list[tuple[str, "LogitsState"]]) -> "LogitsState":
        """Not merged (as before the merge rules were written down): logits are refused under -n, and a
        worker's logits would cover its own records only; the merged report keeps every worker's logits checks."""
        return cls(own.report)
