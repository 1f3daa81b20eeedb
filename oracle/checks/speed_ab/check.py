"""The speed_ab check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/speed_ab/__init__.py), not with its options."""

from __future__ import annotations

import math

from oracle.checks.descriptor import (CheckDescriptor, CheckItem, CheckParts, NoSection, PlanContext, PlanPart,
                                      Producers)
from oracle.checks.speed_ab.options import TITLE, InterleaveOptions, add_options, resolve_reference_launch, settings_of
from oracle.checks.speed_ab.producer import InterleaveChecks
from oracle.speed import interleave_report as section
from oracle.speed.boot_cost import boot_words, server_boots
from oracle.speed.sequential import MIN_ROUNDS

__all__ = ["CHECK", "InterleaveChecks", "InterleaveOptions", "expected_rounds", "plan_part"]


def items(plan) -> list[CheckItem]:
    """With --reference-launch, against a reference: reference and candidate in ABBA rounds, before the speed
    item judges their comparison."""
    return [CheckItem("speed-ab", "speed_ab")] if plan.options.check("speed_ab").on and plan.mode == "gate" else []


def build(parts: CheckParts) -> Producers:
    checks = InterleaveChecks(parts.plan, parts.recorder, parts.prompts, parts.state, parts.target)
    return Producers({"speed_ab": checks.check})


def expected_rounds(ab: InterleaveOptions) -> int:
    """The rounds the plan prices: the fixed design's; in the sequential test midway between its fewest (2) and its
    cap (simulated: an identical config at 1% pass-to-pass CV stops after ~5 of 8, a clear speed-up after 2-3)."""
    return ab.rounds if ab.rounds is not None else math.ceil((MIN_ROUNDS + ab.rounds_max) / 2)


def plan_part(kind: str, key, context: PlanContext) -> PlanPart:
    """Both sides' passes over the suite for each round, the A/A control's sessions alike, a warm-up per boot
    (one-at-a-time: every pass; both-up: every server once), at the warm-up's rates, and the server boots at this
    run's own boot time."""
    ab = context.options.check("speed_ab")
    rounds = expected_rounds(ab)
    sessions = 1 + ab.control
    passes = 2 * rounds * sessions
    warm = max(context.suite, key=lambda s: s[0] + s[1], default=(0, 0))
    warmups = context.options.warmup * (passes if ab.servers == "one-at-a-time" else 2 + (1 if ab.control else 0))
    shapes = tuple(shape for _ in range(passes) for shape in context.suite) + (warm,) * warmups
    boots = server_boots(ab.servers, passes, 1 + (1 if ab.control else 0))
    design = (f"{ab.rounds} ABBA rounds" if ab.rounds is not None
              else f"sequential test: ~{rounds} ABBA rounds expected, at most {ab.rounds_max} "
                   f"(up to {ab.rounds_max / rounds:.1f}x this estimate)")
    control = f", {ab.control} A/A control session(s) alike" if ab.control else ""
    return PlanPart("interleaved A/B", shapes, extra_s=boots * (context.boot_s or 0.0),
                    note=f"{design}{control}; reference and candidate each pass{boot_words(boots, context.boot_s)}")


def resolve(settings: InterleaveOptions, reference) -> InterleaveOptions:
    """`recorded`: the reference's own command, refused before any server starts."""
    return resolve_reference_launch(settings, reference) if settings.on else settings


CHECK = CheckDescriptor(name="speed_ab", title=TITLE, order=30, kinds=("speed_ab",), items=items,
                        build=build, state=NoSection, add_options=add_options, settings=settings_of,
                        defaults=InterleaveOptions(), sections=(section,), resolve=resolve, plan_part=plan_part)
