"""The conditions check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/conditions/__init__.py), not with its options.

`--ladder` takes widths or a preset (`every:N`, `edges:N`: widths.py); the levels run give the width map (per
width the class of outputs, oracle/compare/width_map.py, its report section oracle/report/widths.py)."""

from __future__ import annotations

from oracle.checks.conditions.options import TITLE, ConditionSettings, add_options, settings_of
from oracle.checks.conditions.producer import ConditionChecks
from oracle.checks.conditions.shapes import NoiseShape
from oracle.checks.conditions.state import ConditionsState
from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, PlanContext, PlanPart, Producers
from oracle.report import grid as section
from oracle.report import widths

__all__ = ["CHECK", "ConditionChecks", "ConditionSettings", "ConditionsState"]

NAME = "conditions"


def items(plan) -> list[CheckItem]:
    """Ladder levels in boot 1, after the diagnostic requests; then each later boot. Under pytest -n each level
    goes whole to one server (its waves must hit one server), dealt round-robin; all later boots go to the next
    server dealt (a boot sequence restarts one server)."""
    settings = plan.options.check(NAME)
    return ([CheckItem(f"ladder[c{level}]", "ladder", level, deal=NAME) for level in settings.ladder]
            + [CheckItem(f"boot[{boot}]", "boot", boot, order=51, deal=NAME, together=True)
               for boot in range(2, settings.boots + 1)])


def build(parts: CheckParts) -> Producers:
    own = parts.state.states[NAME]
    checks = ConditionChecks(parts.plan, parts.recorder, parts.prompts, parts.state, parts.target, own=own,
                             observers=parts.observers)
    return Producers({"ladder": checks.ladder_check, "boot": checks.boot_check})


def _ladder_shapes(suite: tuple[tuple[int, int], ...], level: int, mode: str) -> tuple[tuple[int, int], ...]:
    """The requests of one ladder level: the suite at c1; else its waves (`same`: one prompt `level` times)."""
    if not suite or level == 1:
        return suite
    if mode == "same":
        return (suite[0],) * level
    return tuple(suite[i % len(suite)] for i in range(level * -(-len(suite) // level)))


def plan_part(kind: str, key, context: PlanContext) -> PlanPart:
    """A ladder level's waves (a level above 1 estimated at the c1 rates); a later boot: the suite again."""
    if kind == "boot":
        return PlanPart(f"boot {key}", context.suite, note="plus the server's restart")
    shapes = _ladder_shapes(context.suite, key, context.options.check(NAME).mode)
    return PlanPart(f"ladder c{key}", shapes, note="at the c1 rates" if key > 1 else "")


def terminal(state: ConditionsState) -> list[str]:
    """The width map's lines at the end of the run."""
    return widths.terminal_lines(state.width_map)


CHECK = CheckDescriptor(name=NAME, title=TITLE, order=50, kinds=("ladder", "boot"), items=items,
                        build=build, state=ConditionsState, add_options=add_options, settings=settings_of,
                        defaults=ConditionSettings(), sections=(section, widths), server_identity=("boots",),
                        for_reference=ConditionsState.for_reference, blocks={"noise": NoiseShape},
                        plan_part=plan_part, terminal=terminal)
