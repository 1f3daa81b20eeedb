"""The coverage check's option and settings: `--require-conditions`, on its own `--help` group.

    settings = settings_of(config.option, context)   # CoverageSettings(require=("mixed-batch",))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from oracle.option_types import condition_names

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["TITLE", "CoverageSettings", "add_options", "settings_of"]

TITLE = "condition coverage"  # its `--help` group's: "oracle: condition coverage"


@dataclass(frozen=True)
class CoverageSettings:
    require: tuple[str, ...] = ()  # conditions the coverage item requires (compare/coverage.py); (): no item


def add_options(group) -> None:
    group.addoption("--require-conditions", metavar="NAME,...", type=condition_names, default="",
                    help="add the coverage item: each named condition (chunked-prefill, mixed-batch, preemption, "
                         "overlap) must have happened in some run, else inconclusive (kind coverage), naming why and "
                         "how to cause it (default: coverage reported, not required)")


def settings_of(option, context: OptionContext) -> CoverageSettings:
    if option.require_conditions and context.workers > 1:
        raise pytest.UsageError(f"--require-conditions judges every run of one server; with -n {context.workers} "
                                "each worker sees only its own runs: require conditions without -n")
    return CoverageSettings(tuple(option.require_conditions))
