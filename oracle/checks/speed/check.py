"""The speed check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/speed/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Producers, no_requests
from oracle.checks.speed.options import TITLE, SpeedSettings, add_options, settings_of
from oracle.checks.speed.producer import SpeedChecks
from oracle.checks.speed.state import SpeedState
from oracle.speed import report as section

__all__ = ["CHECK", "SpeedChecks", "SpeedSettings", "SpeedState"]


def items(plan) -> list[CheckItem]:
    """With --min-speedup, against a reference: judged from the c1 run's card, after its cache evidence."""
    on = plan.options.check("speed").min_speedup is not None and plan.mode == "gate"
    return [CheckItem("speed", "speed")] if on else []


def build(parts: CheckParts) -> Producers:
    checks = SpeedChecks(parts.plan, parts.state)
    return Producers({"speed": checks.speed_check}, watch=checks.watch)


CHECK = CheckDescriptor(name="speed", title=TITLE, order=31, kinds=("speed",), items=items, build=build,
                        state=SpeedState, add_options=add_options, settings=settings_of, defaults=SpeedSettings(),
                        sections=(section,), for_reference=SpeedState.for_reference,
                        plan_part=no_requests)  # judged from runs the plan counts already
