"""The canaries' part of the report (identity.json `canaries`): one row per canary item (its family, expected,
extracted, raw text, verdict and why), filled by the canary modules as each item runs; and each canary request's
completion (identity.json `canary_completions`: token ids, finish reason, top-k logprobs), which a record run
keeps in its reference and a gate compares token for token (oracle/canary/tokens.py).

    state = CanaryState(); state.apply("canaries", {"code[mul-7-2]": row}); state.to_json()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from oracle.canary.results import REPORT_KEY, family_counts
from oracle.canary.tokens import COMPLETIONS_KEY
from oracle.compare.confidence import count_json

__all__ = ["CanaryState"]


@dataclass
class CanaryState:
    KEYS = (REPORT_KEY, COMPLETIONS_KEY)
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES = {REPORT_KEY: 40, "confidence.canaries": 30}

    rows: dict[str, dict] = field(default_factory=dict)  # item id -> expected, extracted, raw text, verdict
    completions: dict[str, dict] = field(default_factory=dict)  # item id -> its completion (canary/tokens.py)

    def apply(self, key: str, value: dict) -> None:
        (self.completions if key == COMPLETIONS_KEY else self.rows).update(value)

    def to_json(self) -> dict:
        return {REPORT_KEY: self.rows, COMPLETIONS_KEY: self.completions}

    def confidence(self, report) -> dict:
        """The summary's count of each canary family's passes, with its Wilson interval (`ReportState.summary`)."""
        families = family_counts(self.rows)
        return {"canaries": {family: count_json(k, n) for family, (k, n) in families.items()}} if families else {}

    @classmethod
    def from_json(cls, data: Mapping) -> "CanaryState":
        return cls(dict(data.get(REPORT_KEY) or {}), dict(data.get(COMPLETIONS_KEY) or {}))

    @classmethod
    def merge(cls, own: "CanaryState", parts: list[tuple[str, "CanaryState"]]) -> "CanaryState":
        """Each canary item ran on one server (placement.py deals them round-robin): every worker's rows."""
        rows, completions = dict(own.rows), dict(own.completions)
        for _, state in parts:
            rows.update(state.rows)
            completions.update(state.completions)
        return cls(rows, completions)
