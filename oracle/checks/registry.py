"""`CHECKS`, the gate's check kinds' descriptors (each `oracle/checks/<kind>/check.py`, for each kind in
`oracle.checks.KINDS` and each installed one), and what is read through them. Loaded on first use of these names from
`oracle.checks`, which the option declarations import without it.

    for check in CHECKS: specs += check.items(plan)        # the gate's items
    state = read_state(json.loads(path.read_text()))       # a report typed again, every check's state included
"""

from __future__ import annotations

from importlib import import_module

from oracle.checks import kind_packages
from oracle.checks.descriptor import (CheckDescriptor, CheckItem, CheckParts, CheckState, Finding, OptionContext,
                                      Producers, not_run, state_part)
from oracle.report.sections import layout
from oracle.report.state import ReportState

__all__ = ["CHECKS", "SECTIONS", "CheckDescriptor", "CheckItem", "CheckParts", "CheckState", "Finding",
           "OptionContext", "Producers", "STATE_TYPES", "check_named", "fresh_states", "not_run", "read_state",
           "state_part"]

# The registry: each kind's descriptor (its package's CHECK), in the order of oracle.checks.KINDS and then the
# installed kinds': the order of their option groups in --help and of their items within one `order`.
CHECKS: tuple[CheckDescriptor, ...] = tuple(import_module(package).CHECK for package in kind_packages())

STATE_TYPES: dict[str, type] = {c.name: c.state for c in CHECKS}

# The report's page: its own sections and every check's, each once, by PLACE (identity.md and identity.html).
SECTIONS = layout(section for c in CHECKS for section in c.sections)


def check_named(name: str) -> CheckDescriptor:
    for c in CHECKS:
        if c.name == name:
            return c
    raise KeyError(f"no check kind {name!r}; known: {', '.join(c.name for c in CHECKS)}")


def fresh_states() -> dict:
    """Every check's state as a run starts: empty."""
    return {c.name: c.state() for c in CHECKS}


def read_state(data: dict) -> ReportState:
    """A report (identity.json, or a worker's payload) typed again, every check's state included."""
    return ReportState.from_json(data, STATE_TYPES)
