"""The conditions' part of the report: identity.json `ladder` (level -> counts, first divergences, overlap,
speed, verdict), `boots` (later boot -> the same without overlap and speed), `determinism` (the class their rows
give, said only with a ladder or boots); a sampled run's match rate per level and boot goes to the tokens
check's `token_match` (oracle/checks/tokens/state.py). Beside them, not in identity.json: every condition's rows against c1 (`rows`), from which
the determinism class and a recorded reference's noise envelope are made, and which a worker hands its
controller under pytest -n (`carried`).

    state = ConditionsState(); state.apply("ladder", {"c8": summary}); state.to_json()["determinism"]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from oracle.compare.noise import UNMEASURED, NoiseEnvelope, determinism_of

__all__ = ["ConditionsState"]

_ROWS = "condition_rows"  # the rows' key in what a worker hands its controller (never an identity.json key)


@dataclass
class ConditionsState:
    KEYS = ("ladder", "boots", "determinism")

    ladder: dict[str, dict] = field(default_factory=dict)  # "c8" -> counts, first divergences, overlap, verdict
    boots: dict[str, dict] = field(default_factory=dict)  # "2" -> counts, first divergences, verdict
    determinism: str = UNMEASURED
    rows: dict[str, list[dict]] = field(default_factory=dict)  # condition key -> rows vs c1 (ladder levels, boots)

    def apply(self, key: str, value) -> None:
        if key == "determinism":
            self.determinism = value
        else:
            getattr(self, key).update(value)

    def to_json(self) -> dict:
        return {"ladder": self.ladder, "boots": self.boots,
                "determinism": self.determinism if (self.ladder or self.boots) else None}

    @classmethod
    def from_json(cls, data: Mapping) -> "ConditionsState":
        """`determinism` is said only with a ladder or boots, so without them it reads back as unmeasured; the rows
        come back from a worker's payload (`carried`), never from identity.json."""
        return cls(dict(data.get("ladder") or {}), dict(data.get("boots") or {}),
                   data.get("determinism") or UNMEASURED, dict(data.get(_ROWS) or {}))

    def carried(self) -> dict:
        """What a worker hands its controller beside its report: the rows the merge classifies."""
        return {_ROWS: self.rows}

    def for_reference(self) -> dict:
        """What a recorded reference keeps of the conditions: the noise envelope of their rows (None without)."""
        if not self.rows:
            return {"noise": None}
        return {"noise": NoiseEnvelope.from_rows(self.rows, determinism=determinism_of(self.rows)).as_json()}

    @classmethod
    def merge(cls, own: "ConditionsState", parts: list[tuple[str, "ConditionsState"]]) -> "ConditionsState":
        """Each ladder level and boot ran whole on one server, which its row names; the determinism class comes
        from every server's rows."""
        rows = {key: value for _, state in parts for key, value in state.rows.items()}
        return cls(_on_server(own.ladder, parts, "ladder", lambda level: int(level.removeprefix("c"))),
                   _on_server(own.boots, parts, "boots", int), determinism_of(rows), rows)


def _on_server(own: dict, parts: list[tuple[str, ConditionsState]], name: str, order) -> dict:
    rows = dict(own)
    for label, state in parts:
        rows.update({k: v | {"server": label} for k, v in getattr(state, name).items()})
    return dict(sorted(rows.items(), key=lambda kv: order(kv[0])))
