"""The neighbours check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/neighbours/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, PlanContext, PlanPart, Producers
from oracle.checks.neighbours.options import TITLE, NeighbourSettings, add_options, settings_of
from oracle.checks.neighbours.producer import NeighbourChecks
from oracle.checks.neighbours.prompt import NEIGHBOUR_MAX_TOKENS
from oracle.checks.neighbours.state import NeighboursState
from oracle.report import neighbours as section

__all__ = ["CHECK", "NeighbourChecks", "NeighbourSettings", "NeighboursState"]

NAME = "neighbours"


def items(plan) -> list[CheckItem]:
    """One per length, after the ladder levels (before later boots); under pytest -n each goes whole to one server
    (its pairs must hit one server), dealt round-robin."""
    return [CheckItem(f"neighbours[{n}]", "neighbour", n, deal=NAME) for n in plan.options.check(NAME).lengths]


def build(parts: CheckParts) -> Producers:
    checks = NeighbourChecks(parts.plan, parts.recorder, parts.prompts, parts.state, parts.served)
    return Producers({"neighbour": checks.neighbour_check})


def terminal(state: NeighboursState) -> list[str]:
    """Each length's line at the end of the run (report/neighbours.py)."""
    return section.terminal_lines(state.lengths)


def plan_part(kind: str, key, context: PlanContext) -> PlanPart:
    """Each suite prompt with one neighbour of `key` prompt tokens beside it (estimated at the c1 rates)."""
    shapes = tuple(s for shape in context.suite for s in (shape, (key, NEIGHBOUR_MAX_TOKENS)))
    return PlanPart(f"neighbours {key}", shapes, note="at the c1 rates")


CHECK = CheckDescriptor(name=NAME, title=TITLE, order=50, kinds=("neighbour",), items=items, build=build,
                        state=NeighboursState, add_options=add_options, settings=settings_of,
                        defaults=NeighbourSettings(), plan_part=plan_part, sections=(section,), terminal=terminal)
