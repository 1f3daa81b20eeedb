"""Which machine stands apart from the others of its accelerator model, as fishtest flags a worker whose results
are out of family: by its residual against the rest.

    outputs_apart({"m1": "A", "m2": "A", "m3": "B"})    # {"m3": "A"}: m3's class is not the majority's
    speed_residuals({"m1": 100.0, "m2": 101.0, "m3": 60.0})   # {"m3": -10.2, ...}; |r| > RESIDUAL_LIMIT stands apart

Pure: numbers and labels in, numbers and labels out.
"""

from __future__ import annotations

import math
from statistics import median

__all__ = ["MIN_MACHINES", "RESIDUAL_LIMIT", "SPREAD_FLOOR", "outputs_apart", "speed_residuals"]

MIN_MACHINES = 3  # with two machines that differ, neither is the odd one: there is no family to be out of
RESIDUAL_LIMIT = 3.0  # |residual| above this stands apart (fishtest's flag works the same way, on its own scale)
SPREAD_FLOOR = 0.05  # in log speed: two machines of one model within ~5% are one family, whatever their count


def outputs_apart(classes: dict[str, str]) -> dict[str, str]:
    """machine -> the majority's class, for each machine outside a class that more than half of them share."""
    if len(classes) < MIN_MACHINES:
        return {}
    counts: dict[str, int] = {}
    for label in classes.values():
        counts[label] = counts.get(label, 0) + 1
    majority, held = max(counts.items(), key=lambda kv: kv[1])
    if held * 2 <= len(classes):
        return {}
    return {m: majority for m, label in classes.items() if label != majority}


def speed_residuals(speeds: dict[str, float]) -> dict[str, float]:
    """machine -> its residual: its log speed's distance from the median of the others, in units of their spread
    (1.4826 x the median absolute deviation, floored at SPREAD_FLOOR). Empty with fewer than MIN_MACHINES."""
    logs = {m: math.log(v) for m, v in speeds.items() if v and v > 0}
    if len(logs) < MIN_MACHINES:
        return {}
    out = {}
    for machine, value in logs.items():
        others = [v for m, v in logs.items() if m != machine]
        centre = median(others)
        spread = max(1.4826 * median(abs(v - centre) for v in others), SPREAD_FLOOR)
        out[machine] = (value - centre) / spread
    return out
