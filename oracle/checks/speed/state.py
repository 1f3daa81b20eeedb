"""The speed section of the report (identity.json `speed`): the primary run's card with its comparison (the speed
check's), the interleaved A/B session's passes and comparison in it (`interleave`, `vs_reference`: the speed-ab
item's), and the speed cells under `cells` (the speed-cells item's). One key, so one state: the speed check's; the
speed-ab and speed-cells checks fill it through their findings and keep no key of their own (`NoSection`, checks/descriptor.py).

    state = SpeedState(); state.apply("speed", card); state.apply("speed", {"cells": block}); state.to_json()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from oracle.checks.descriptor import Kept
from oracle.speed.card import merge_cards

__all__ = ["SpeedState"]


@dataclass
class SpeedState:
    KEYS: ClassVar[tuple[str, ...]] = ("speed",)
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES: ClassVar[dict[str, int]] = {"speed": 120}

    card: dict | None = None  # the speed card of the primary run (and its comparison with the reference)
    cells: dict | None = None  # --speed-cells: every cell's samples; identity.json keeps it as speed.cells

    def apply(self, key: str, value: dict | None) -> None:
        """A finding's `cells` replaces the cells; the rest adds to the card (the first is the card)."""
        if isinstance(value, dict) and "cells" in value:
            value = dict(value)
            self.cells = value.pop("cells")
            if not value:
                return
        if isinstance(self.card, dict) and isinstance(value, dict):
            self.card.update(value)
        else:
            self.card = value

    def to_json(self) -> dict:
        """The card with the cells under its `cells` key (the cells alone when the card is missing)."""
        if self.cells is None:
            return {"speed": self.card}
        return {"speed": {**(self.card or {}), "cells": self.cells}}

    @classmethod
    def from_json(cls, data: Mapping) -> "SpeedState":
        speed = data.get("speed")
        if not speed:
            return cls()
        return cls({k: v for k, v in speed.items() if k != "cells"} or None, speed.get("cells"))

    @classmethod
    def merge(cls, own: "SpeedState", parts: list[tuple[str, "SpeedState"]]) -> "SpeedState":
        """Every server's rows in one card, never a headline (the servers ran at once); --speed-cells is refused
        under -n: the one worker that measured them, if any."""
        return cls(merge_cards([s.card for _, s in parts if s.card], servers=len(parts)),
                   next((s.cells for _, s in parts if s.cells), None))

    def for_reference(self, plan=None, records=()) -> Kept:
        """What a recorded reference keeps of the section: the card's facts its records' token times cannot tell
        (the card is rebuilt from them), and the cells a later gate compares its own with, cell by cell."""
        speed = ({k: self.card.get(k) for k in ("label", "diagnostics", "token_times", "warmup", "credible",
                                                "isolation", "power")}
                 if self.card else None)
        if self.cells:
            speed = {**(speed or {}), "cells": self.cells}
        return Kept({"speed": speed} if speed is not None else {})  # none: the manifest holds no `speed`
