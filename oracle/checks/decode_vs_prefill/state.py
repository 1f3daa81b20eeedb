"""The decode-vs-prefill check's part of the report: identity.json `decode_vs_prefill` (the candidate's own path,
decoded against scored as a prompt, per mode) and `chunked_prefill` (a runner's paths scored in chunks against one
pass, and the prefix-length ladder).

    state = DecodePrefillState(); state.apply("decode_vs_prefill", report); state.to_json()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DecodePrefillState"]


@dataclass
class DecodePrefillState:
    KEYS = ("decode_vs_prefill", "chunked_prefill")
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES = {"decode_vs_prefill": 90, "chunked_prefill": 100}

    decode_vs_prefill: dict | None = None
    chunked_prefill: dict | None = None

    def apply(self, key: str, value: dict | None) -> None:
        setattr(self, key, value)

    def to_json(self) -> dict:
        return {"decode_vs_prefill": self.decode_vs_prefill, "chunked_prefill": self.chunked_prefill}

    @classmethod
    def from_json(cls, data: Mapping) -> "DecodePrefillState":
        return cls(data.get("decode_vs_prefill"), data.get("chunked_prefill"))

    @classmethod
    def merge(cls, own: "DecodePrefillState", parts: list[tuple[str, "DecodePrefillState"]]) -> "DecodePrefillState":
        """--logits (so decode vs prefill) and the in-process runners (the only families with the chunked item)
        are refused under -n: the one worker that ran each, if any."""
        return cls(*(next((getattr(state, key) for _, state in parts if getattr(state, key)), None)
                     for key in cls.KEYS))
