"""The canaries check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/canaries/__init__.py), not with its options."""

from __future__ import annotations

from oracle.canary import crosstalk_report as crosstalk_section
from oracle.canary import report as section
from oracle.canary.canary_set import canary_set, follow_canary_set
from oracle.checks.canaries.plan_cost import BUDGET, plan_test
from oracle.checks.canaries.options import TITLE, CanarySettings, add_options, settings_of
from oracle.canary.results import REPORT_KEY
from oracle.canary.tokens import NOT_COMPARED_HEAD, completion_record
from oracle.checks.canaries.shapes import CanaryShape
from oracle.checks.canaries.state import CanaryState
from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Kept, Producers
from oracle.compare.verdicts import DROPPED

__all__ = ["CHECK", "CanarySettings", "CanaryState"]


def items(plan) -> list[CheckItem]:
    """None: the canary modules are collected as pytest tests of their own (plugin.py)."""
    return []


def build(parts: CheckParts) -> Producers:
    return Producers({})


def warnings(report) -> list[str]:
    """The report's notes of canaries not compared with a reference that holds no completion of them (which, and
    the re-record)."""
    return [note for note in report.notes if NOT_COMPARED_HEAD in note]


def recorded(state: CanaryState, plan=None, records=()) -> Kept:
    """A recorded reference keeps every canary the server held; one it could not hold (`dropped`) is left out,
    so a gate against the reference finds no answer for it. Its manifest's `run.canary_set` names the needle
    lengths this run sent and those it dropped (canary/canary_set.py). Each kept canary's completion is a record
    of the reference (records/canaries/), which a gate compares token for token (canary/tokens.py)."""
    rows = {k: row for k, row in state.rows.items() if row.get("verdict") != DROPPED}
    needles = canary_set(state.rows)
    return Kept({REPORT_KEY: rows}, {"canary_set": needles} if needles is not None else {},
                {REPORT_KEY: [completion_record(k, kept) for k, kept in state.completions.items() if k in rows]})


CHECK = CheckDescriptor(name="canaries", title=TITLE, order=70, kinds=(), items=items,
                        build=build, state=CanaryState, add_options=add_options, settings=settings_of,
                        defaults=CanarySettings(), sections=(section, crosstalk_section), for_reference=recorded, blocks={REPORT_KEY: dict[str, CanaryShape]},
                        resolve=follow_canary_set, plan_test=plan_test, budget=BUDGET, warnings=warnings, settings_notes=lambda settings: settings.notes)
