"""The ledger's options, on the `--help` group of prompts, references and reports: `--ledger` (where the run's row
goes) and `--oracle-machine` (the name this machine has in the fleet). Light: the database is opened only when
the run ends (oracle/ledger/writer.py).

    g.addoption("--ledger", type=ledger_target, ...)
    machine_name("arc-b70")      # "arc-b70"; pytest.UsageError naming the fix for "two words"
"""

from __future__ import annotations

import pytest

from oracle.redaction import redact_url
from oracle.store.machine import MACHINE_NAME

__all__ = ["add_options", "ledger_settings", "ledger_target", "machine_name"]


_LEDGER_SCHEMES = ("sqlite", "postgresql", "postgres")


def ledger_target(value: str) -> str:
    """--ledger: a file path, off, or a sqlite:/// or postgresql:// URL (read here as text, its password hidden:
    the database is opened only when the run ends)."""
    scheme = value.partition("://")[0].partition("+")[0].lower() if "://" in value else None
    if not value.strip() or (scheme is not None and scheme not in _LEDGER_SCHEMES):
        raise pytest.UsageError(f"--ledger {redact_url(value)}: not a ledger; give a SQLite file path "
                                "(reports/ledger.sqlite), a postgresql://user@host/db URL, or off")
    return value


def machine_name(value: str) -> str:
    """--oracle-machine: the name the ledger and `oracle fleet` know this machine by (a runner label, a host
    name): one word of letters, digits, '.', '_' and '-', at most 64 characters."""
    if not MACHINE_NAME.fullmatch(value):
        raise pytest.UsageError(f"--oracle-machine {value!r}: not a machine name; give one word of letters, digits, "
                                "'.', '_' or '-' (at most 64 characters), e.g. the runner's label: "
                                "--oracle-machine arc-b70")
    return value


def add_options(group) -> None:
    group.addoption("--ledger", metavar="PATH|URL", type=ledger_target, default=None,
                    help="the run ledger this run appends to as it finishes: a SQLite file, a "
                         "postgresql://user@host/db URL (a shared ledger), or off (default: ledger.sqlite beside the "
                         "report folder, reports/ledger.sqlite)")
    group.addoption("--oracle-machine", metavar="NAME", type=machine_name, default=None,
                    help="the name this machine has in the report and the ledger, e.g. its CI runner's label; "
                         "`oracle fleet` lines machines up by it (default: the host name)")


def ledger_settings(option) -> dict:
    """GateOptions' ledger and machine."""
    return {"ledger": option.ledger, "machine": option.oracle_machine}
