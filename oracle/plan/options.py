"""The run plan's options, on the run's `--help` group: `--oracle-plan` (print the plan after the warm-up, then
exit) and `--oracle-budget` (the time the plan may take: needles of the default lengths past it are dropped),
parsed once into a `Budget` by its type.

    settings = plan_settings(config.option, workers=1, default="10m")   # {"budget": 600.0, "budget_source": ...}
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from oracle.run.plan_estimate import EMBEDDED_CPU_BUDGET as DEFAULT_BUDGET
from oracle.run.plan_estimate import parse_duration

__all__ = ["DEFAULT_BUDGET", "Budget", "add_options", "budget_value", "plan_settings"]


class Budget(NamedTuple):
    """--oracle-budget as given and its seconds (None: off)."""

    text: str
    seconds: float | None


def budget_value(value: str) -> Budget:
    """--oracle-budget: a duration (10m, 600s, 1h) or off."""
    try:
        return Budget(value, parse_duration("--oracle-budget", value))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def add_options(group) -> None:
    group.addoption("--oracle-budget", metavar="DURATION", type=budget_value, default=None,
                    help="time the run may take by the plan's estimate (e.g. 10m, 600s, or off): needles of the "
                         "default lengths that do not fit are dropped, each named with its estimate and the "
                         f"--needle-lengths that runs it (default: {DEFAULT_BUDGET} for the embedded CPU default, "
                         "else off)")
    group.addoption("--oracle-plan", action="store_true", default=False, dest="plan_only",
                    help="print the run plan (requests, tokens and estimated time per part, from the rates the "
                         "warm-up measured) and exit 0 without sending any request beyond the warm-up; no report "
                         "folder is left (default: off)")


def plan_settings(option, *, workers: int, default: str | None) -> dict:
    """GateOptions' budget, budget_source and plan_only: --oracle-budget's seconds and where they come from (the
    target's `default` where it has one: the embedded CPU default's), and --oracle-plan."""
    if option.plan_only and workers > 1:
        raise pytest.UsageError(f"--oracle-plan with -n {workers}: the plan is one server's; run --oracle-plan "
                                "without -n")
    given: Budget | None = option.oracle_budget
    if given is not None:
        seconds, source = given.seconds, f"--oracle-budget {given.text}"
    elif default is not None:
        seconds = parse_duration("--oracle-budget", default)  # the target's own, not a user's word
        source = f"the embedded default's {default}; --oracle-budget off runs the full-size needles"
    else:
        seconds, source = None, ""
    return {"budget": seconds, "budget_source": source if seconds is not None else "", "plan_only": option.plan_only}
