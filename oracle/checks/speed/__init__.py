"""Speed: the speed card of the primary run (its power and isolation window, its credibility, its comparison with
the reference) and the `speed` item, which judges it against `--min-speedup`; and the report's speed section
(`SpeedState`), which the interleaved A/B (oracle/checks/speed_ab/) and the speed cells (oracle/checks/speed_cells/)
fill too.

Its options (options.py), producer (producer.py: the primary run's `watch` and the item), state (state.py), report
section (oracle/speed/report.py) and this descriptor, listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Producers, no_requests
from oracle.checks.speed.options import SpeedSettings, add_options, settings_of
from oracle.checks.speed.producer import SpeedChecks
from oracle.checks.speed.state import InSpeedSection, SpeedState
from oracle.speed import report as section

__all__ = ["CHECK", "InSpeedSection", "SpeedChecks", "SpeedSettings", "SpeedState"]


def items(plan) -> list[CheckItem]:
    """With --min-speedup, against a reference: judged from the c1 run's card, after its cache evidence."""
    on = plan.options.check("speed").min_speedup is not None and plan.mode == "gate"
    return [CheckItem("speed", "speed")] if on else []


def build(parts: CheckParts) -> Producers:
    checks = SpeedChecks(parts.plan, parts.state)
    return Producers({"speed": checks.speed_check}, watch=checks.watch)


CHECK = CheckDescriptor(name="speed", title="speed", order=31, kinds=("speed",), items=items, build=build,
                        state=SpeedState, add_options=add_options, settings=settings_of, defaults=SpeedSettings(),
                        sections=(section,), for_reference=SpeedState.for_reference,
                        plan_part=no_requests)  # judged from runs the plan counts already
