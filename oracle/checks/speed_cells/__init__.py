"""Speed cells: prompt and generation lengths measured cold, each cell's repeats with a unique prefix, after the
c1 run (`--speed-cells`, `--speed-repeats`), interleaved with the reference config when `--reference-launch` is
given; the `speed-cells` item judges them. The cells go into the speed section under `cells`
(oracle/checks/speed/state.py).

Its options (options.py), producer (producer.py), the interleaved cells' two servers (interleave.py), report section
(oracle/speed/cells_report.py) and this descriptor, listed once in oracle.checks.CHECKS.
"""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, PlanContext, PlanPart, Producers
from oracle.checks.speed.state import InSpeedSection
from oracle.checks.speed_cells.options import CellsSettings, add_options, settings_of
from oracle.checks.speed_cells.producer import CellsCheck
from oracle.speed import cells_report as section

__all__ = ["CHECK", "CellsCheck", "CellsSettings"]


def items(plan) -> list[CheckItem]:
    """Their own cold requests: after the c1 run's evidence, before any diagnostic request."""
    return [CheckItem("speed-cells", "speed_cells")] if plan.options.check("speed_cells").cells else []


def build(parts: CheckParts) -> Producers:
    checks = CellsCheck(parts.plan, parts.recorder, parts.prompts, parts.state, parts.served, parts.target)
    return Producers({"speed_cells": checks.check})


def plan_part(kind: str, key, context: PlanContext) -> PlanPart:
    """Each cell's warm-up and repeats, cold; interleaved with the reference (--reference-launch), both sides'."""
    cells = context.options.check("speed_cells")
    sides = 2 if context.options.check("speed_ab").on else 1
    note = f"{cells.repeats} repeats and a warm-up per cell" + (", on each side (interleaved)" if sides == 2 else "")
    return PlanPart("speed cells", tuple((p, g) for p, g in cells.cells for _ in range((cells.repeats + 1) * sides)),
                    note=note)


CHECK = CheckDescriptor(name="speed_cells", title="speed cells", order=32, kinds=("speed_cells",), items=items,
                        build=build, state=InSpeedSection, add_options=add_options, settings=settings_of,
                        defaults=CellsSettings(), sections=(section,), plan_part=plan_part)
