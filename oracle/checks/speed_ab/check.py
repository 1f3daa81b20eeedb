"""The speed_ab check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/speed_ab/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Producers
from oracle.checks.speed.state import InSpeedSection
from oracle.checks.speed_ab.options import TITLE, InterleaveOptions, add_options, resolve_reference_launch, settings_of
from oracle.checks.speed_ab.producer import InterleaveChecks
from oracle.speed import interleave_report as section

__all__ = ["CHECK", "InterleaveChecks", "InterleaveOptions"]


def items(plan) -> list[CheckItem]:
    """With --reference-launch, against a reference: reference and candidate in ABBA rounds, before the speed
    item judges their comparison."""
    return [CheckItem("speed-ab", "speed_ab")] if plan.options.check("speed_ab").on and plan.mode == "gate" else []


def build(parts: CheckParts) -> Producers:
    checks = InterleaveChecks(parts.plan, parts.recorder, parts.prompts, parts.state, parts.target)
    return Producers({"speed_ab": checks.check})


def resolve(settings: InterleaveOptions, reference) -> InterleaveOptions:
    """`recorded`: the reference's own command, refused before any server starts."""
    return resolve_reference_launch(settings, reference) if settings.on else settings


CHECK = CheckDescriptor(name="speed_ab", title=TITLE, order=30, kinds=("speed_ab",), items=items,
                        build=build, state=InSpeedSection, add_options=add_options, settings=settings_of,
                        defaults=InterleaveOptions(), sections=(section,), resolve=resolve)
