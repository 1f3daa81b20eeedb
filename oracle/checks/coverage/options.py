"""The coverage check's option and settings: `--require-conditions`, on its own `--help` group.

    settings = settings_of(config.option, context)   # CoverageSettings(require=("mixed-batch",))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest


if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["condition_names", "TITLE", "CoverageSettings", "add_options", "settings_of"]

TITLE = "condition coverage"  # its `--help` group's: "oracle: condition coverage"


def condition_names(value: str) -> tuple[str, ...]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:  # the default (argparse types a string default too): nothing to look up
        return ()
    from oracle.compare.coverage import CONDITIONS  # only when given: the declarations stay light

    bad = [n for n in names if n not in CONDITIONS]
    if bad:
        raise pytest.UsageError(f"--require-conditions {value!r}: unknown condition {bad[0]!r}; known: "
                                f"{', '.join(CONDITIONS)}")
    return tuple(dict.fromkeys(names))


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
