"""The speed_cells check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/speed_cells/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.descriptor import (CheckDescriptor, CheckItem, CheckParts, NoSection, PlanContext, PlanPart,
                                      Producers)
from oracle.checks.speed_cells.options import TITLE, CellsSettings, add_options, settings_of
from oracle.checks.speed_cells.producer import CellsCheck
from oracle.speed import cells_report as section
from oracle.speed.boot_cost import boot_words, server_boots

__all__ = ["CHECK", "CellsCheck", "CellsSettings"]


def items(plan) -> list[CheckItem]:
    """Their own cold requests: after the c1 run's evidence, before any diagnostic request."""
    return [CheckItem("speed-cells", "speed_cells")] if plan.options.check("speed_cells").cells else []


def build(parts: CheckParts) -> Producers:
    checks = CellsCheck(parts.plan, parts.recorder, parts.prompts, parts.state, parts.served, parts.target)
    return Producers({"speed_cells": checks.check})


def plan_part(kind: str, key, context: PlanContext) -> PlanPart:
    """Each cell's repeats, cold, and its warm-ups; interleaved with the reference (--reference-launch), both
    sides', a warm-up per cell on each boot (one-at-a-time: a boot per side and repeat), the boots at this run's
    own boot time."""
    cells, ab = context.options.check("speed_cells"), context.options.check("speed_ab")
    sides = 2 if ab.on else 1
    one_at_a_time = ab.on and ab.servers == "one-at-a-time"
    warmups = sides * cells.repeats if one_at_a_time else sides  # per cell
    boots = server_boots(ab.servers, sides * cells.repeats, 1) if ab.on else 0
    note = (f"{cells.repeats} repeats and {warmups} warm-up(s) per cell"
            + (", on each side (interleaved)" if sides == 2 else "") + boot_words(boots, context.boot_s))
    return PlanPart("speed cells", tuple((p, g) for p, g in cells.cells for _ in range(cells.repeats * sides + warmups)),
                    note=note, extra_s=boots * (context.boot_s or 0.0))


CHECK = CheckDescriptor(name="speed_cells", title=TITLE, order=32, kinds=("speed_cells",), items=items,
                        build=build, state=NoSection, add_options=add_options, settings=settings_of,
                        defaults=CellsSettings(), sections=(section,), plan_part=plan_part)
