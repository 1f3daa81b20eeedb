"""The conditions' part of the report: identity.json `ladder` (level -> counts, first divergences, overlap,
speed, verdict, split density), `boots` (later boot -> the same without overlap and speed), `determinism` (the
class their rows give, said only with a ladder or boots), `width_map` (per width the class of outputs,
compare/width_map.py; with a ladder); a sampled run's match rate per level and boot goes to the tokens
check's `token_match` (oracle/checks/tokens/state.py). Beside them, not in identity.json: every condition's rows against c1 (`rows`), from which
the determinism class and a recorded reference's noise envelope are made, and which a worker hands its
controller under pytest -n (`carried`).

    state = ConditionsState(); state.apply("ladder", {"c8": summary}); state.to_json()["determinism"]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from oracle.checks.descriptor import Kept
from oracle.compare.conditions import boots_agreeing
from oracle.compare.confidence import count_json
from oracle.compare.noise import UNMEASURED, NoiseEnvelope, determinism_of
from oracle.compare.width_map import width_map
from oracle.store.records import Condition

__all__ = ["ConditionsState"]

_ROWS = "condition_rows"  # the rows' key in what a worker hands its controller (never an identity.json key)


@dataclass
class ConditionsState:
    KEYS = ("ladder", "boots", "determinism", "width_map")
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES = {"ladder": 50, "boots": 60, "determinism": 70, "confidence.boots": 20}

    ladder: dict[str, dict] = field(default_factory=dict)  # "c8" -> counts, first divergences, overlap, verdict
    boots: dict[str, dict] = field(default_factory=dict)  # "2" -> counts, first divergences, verdict
    determinism: str = UNMEASURED
    rows: dict[str, list[dict]] = field(default_factory=dict)  # condition key -> rows vs c1 (ladder levels, boots)
    width_map: dict | None = None  # per width the class of outputs (compare/width_map.py), with a ladder

    def apply(self, key: str, value) -> None:
        if key in ("determinism", "width_map"):
            setattr(self, key, value)
        else:
            getattr(self, key).update(value)

    def to_json(self) -> dict:
        return {"ladder": self.ladder, "boots": self.boots,
                "determinism": self.determinism if (self.ladder or self.boots) else None, "width_map": self.width_map}

    def confidence(self, report) -> dict:
        """The summary's count of boots agreeing with boot 1, with its Wilson interval (`ReportState.summary`)."""
        return {"boots": count_json(*boots_agreeing(self.boots))} if self.boots else {}

    def map_widths(self, *, ladder: str, never_tried, near_tie_nats: float) -> dict:
        """The width map of the ladder levels run so far (their rows against c1, their overlap proofs)."""
        levels = {}
        for key, rows in self.rows.items():
            condition = Condition.from_key(key)
            if condition.boot == 1:  # boot1-c1-r2 is the ladder's c1; later boots are not widths
                levels[condition.concurrency] = rows
        proven = {int(k.removeprefix("c")): _proven(v.get("overlap")) for k, v in self.ladder.items()}
        wm = width_map(levels, proven=proven, near_tie_nats=near_tie_nats, ladder=ladder, never_tried=never_tried)
        return wm.as_json() | {"near_tie_nats": near_tie_nats}

    @classmethod
    def from_json(cls, data: Mapping) -> "ConditionsState":
        """`determinism` is said only with a ladder or boots, so without them it reads back as unmeasured; the rows
        come back from a worker's payload (`carried`), never from identity.json."""
        return cls(dict(data.get("ladder") or {}), dict(data.get("boots") or {}),
                   data.get("determinism") or UNMEASURED, dict(data.get(_ROWS) or {}), data.get("width_map"))

    def carried(self) -> dict:
        """What a worker hands its controller beside its report: the rows the merge classifies."""
        return {_ROWS: self.rows}

    def for_reference(self, plan=None, records=()) -> Kept:
        """What a recorded reference keeps of the conditions: the noise envelope of their rows (None without)."""
        if not self.rows:
            return Kept({"noise": None})
        return Kept({"noise": NoiseEnvelope.from_rows(self.rows, determinism=determinism_of(self.rows)).as_json()})

    @classmethod
    def merge(cls, own: "ConditionsState", parts: list[tuple[str, "ConditionsState"]]) -> "ConditionsState":
        """Each ladder level and boot ran whole on one server, which its row names; the determinism class comes
        from every server's rows."""
        rows = {key: value for _, state in parts for key, value in state.rows.items()}
        merged = cls(_on_server(own.ladder, parts, "ladder", lambda level: int(level.removeprefix("c"))),
                     _on_server(own.boots, parts, "boots", int), determinism_of(rows), rows)
        asked = own.width_map or next((s.width_map for _, s in parts if s.width_map), None)
        if asked is not None:  # each server mapped its own levels: the map again over every server's rows
            merged.width_map = merged.map_widths(ladder=asked["ladder"], never_tried=asked["never_tried"],
                                                 near_tie_nats=asked["near_tie_nats"])
        return merged


def _proven(overlap: dict | None) -> bool:
    """A level whose every wave held all its requests in flight (no overlap block: nothing to prove)."""
    return overlap is None or overlap["reached"] >= overlap["asked"]


def _on_server(own: dict, parts: list[tuple[str, ConditionsState]], name: str, order) -> dict:
    rows = dict(own)
    for label, state in parts:
        rows.update({k: v | {"server": label} for k, v in getattr(state, name).items()})
    return dict(sorted(rows.items(), key=lambda kv: order(kv[0])))
