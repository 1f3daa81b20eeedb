"""The prompt-logprob check's part of the report (identity.json `prompt_logprob`): the definition, the
tolerance, per prompt and over the suite the mean log-prob of the prompts' own tokens, the reference's and Δ.

    state = PromptLogprobState(); state.apply("prompt_logprob", report); state.to_json()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["PromptLogprobState"]


@dataclass
class PromptLogprobState:
    KEYS = ("prompt_logprob",)
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES = {"prompt_logprob": 110}

    report: dict | None = None

    def apply(self, key: str, value: dict | None) -> None:
        self.report = value

    def to_json(self) -> dict:
        return {"prompt_logprob": self.report}

    @classmethod
    def from_json(cls, data: Mapping) -> "PromptLogprobState":
        return cls(data.get("prompt_logprob"))

    @classmethod
    def merge(cls, own: "PromptLogprobState", parts: list[tuple[str, "PromptLogprobState"]]) -> "PromptLogprobState":
        """In-process runners (the only families with this item) are refused under -n: the one worker, if any."""
        return cls(next((state.report for _, state in parts if state.report), None))
