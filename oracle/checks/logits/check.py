"""The logits check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/logits/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Kept, Producers
from oracle.checks.logits.options import TITLE, LogitsSettings, add_options, settings_of
from oracle.checks.logits.producer import LogitsChecks
from oracle.checks.logits.state import LogitsState
from oracle.logits import report as section

__all__ = ["CHECK", "LogitsChecks", "LogitsSettings", "LogitsState"]


def items(plan) -> list[CheckItem]:
    """logits[ID] right after each prompt's own item; the suite's logits and the floor after the run's evidence,
    first of the diagnostic requests."""
    out = []
    if plan.logits_gate:
        out += [CheckItem(f"logits[{pid}]", "logits", pid, order=(10, i, 1), per_prompt=True) for i, pid in enumerate(plan.suite.ids())]
        out.append(CheckItem("logits", "logits_suite", order=40))
    if plan.floor_wanted:
        out.append(CheckItem("logits-floor", "logits_floor", order=41))
    return out


def build(parts: CheckParts) -> Producers:
    checks = LogitsChecks(parts.plan, parts.recorder, parts.prompts, parts.state, parts.target)
    return Producers({"logits": checks.prompt_check, "logits_suite": checks.suite_check,
                      "logits_floor": checks.floor_check})


def recorded(state: LogitsState, plan, records) -> Kept:
    """What a logits gate needs to know about a recorded reference: its dtype, top-k, tail mass and the precision
    floor its record run measured (None: none was)."""
    o = plan.options
    return Kept({"logits": {"dtype": o.dtype if plan.in_process else None, "top_k": o.logprobs,
                            "tail_mass": bool(records) and all(r.tail_mass for r in records), "backend": o.backend,
                            "floor": (state.report or {}).get("floor")}})


CHECK = CheckDescriptor(name="logits", title=TITLE, order=40, kinds=("logits", "logits_suite", "logits_floor"),
                        items=items, build=build, state=LogitsState, add_options=add_options,
                        settings=settings_of, defaults=LogitsSettings(), sections=(section,),
                        for_reference=recorded)
