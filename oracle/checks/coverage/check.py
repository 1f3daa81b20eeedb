"""The coverage check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/coverage/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.coverage.options import TITLE, CoverageSettings, add_options, settings_of
from oracle.checks.coverage.producer import CoverageChecks
from oracle.checks.coverage.state import CoverageState
from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Producers, no_requests
from oracle.report import coverage as section

__all__ = ["CHECK", "CoverageChecks", "CoverageSettings", "CoverageState"]


def items(plan) -> list[CheckItem]:
    """With --require-conditions: after every run whose conditions it judges."""
    return [CheckItem("coverage", "coverage")] if plan.options.check("coverage").require else []


def build(parts: CheckParts) -> Producers:
    checks = CoverageChecks(parts.plan, parts.state, parts.chunk,
                            preemption_counter=parts.recorder.backend.capabilities.preemption_counter)
    return Producers({"coverage": checks.coverage_check}, observe=checks.observe)


CHECK = CheckDescriptor(name="coverage", title=TITLE, order=60, kinds=("coverage",),
                        items=items, build=build, state=CoverageState, add_options=add_options,
                        settings=settings_of, defaults=CoverageSettings(), sections=(section,),
                        plan_part=no_requests)  # judged from runs the plan counts already
