"""The options a run's ledger row is keyed by, beside --ledger (oracle/option_types.ledger_target): the name
this machine has in the fleet.

    machine_name("arc-b70")      # "arc-b70"; pytest.UsageError naming the fix for "two words"
"""

from __future__ import annotations

import pytest

from oracle.store.machine import MACHINE_NAME

__all__ = ["machine_name"]


def machine_name(value: str) -> str:
    """--oracle-machine: the name the ledger and `oracle fleet` know this machine by (a runner label, a host
    name): one word of letters, digits, '.', '_' and '-', at most 64 characters."""
    if not MACHINE_NAME.fullmatch(value):
        raise pytest.UsageError(f"--oracle-machine {value!r}: not a machine name; give one word of letters, digits, "
                                "'.', '_' or '-' (at most 64 characters), e.g. the runner's label: "
                                "--oracle-machine arc-b70")
    return value
