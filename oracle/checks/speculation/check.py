"""The speculation check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/speculation/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Producers, no_requests
from oracle.checks.per_server import server_items
from oracle.checks.speculation.options import TITLE, SpeculationSettings, add_options, settings_of
from oracle.checks.speculation.producer import SpeculationChecks
from oracle.checks.speculation.state import SpeculationState
from oracle.report import evidence as section

__all__ = ["CHECK", "SpeculationChecks", "SpeculationSettings", "SpeculationState"]


def items(plan) -> list[CheckItem]:
    """Always: the run's evidence, after every prompt's item; one per server under pytest -n."""
    return server_items(plan, "speculation", "speculation")


def build(parts: CheckParts) -> Producers:
    checks = SpeculationChecks(parts.plan, parts.recorder, parts.prompts, parts.state)
    return Producers({"speculation": checks.speculation_check}, observe=checks.observe)


CHECK = CheckDescriptor(name="speculation", title=TITLE, order=20, kinds=("speculation",), items=items,
                        build=build, state=SpeculationState, add_options=add_options, settings=settings_of,
                        defaults=SpeculationSettings(), sections=(section,),
                        plan_part=no_requests)  # judged from runs the plan counts already
