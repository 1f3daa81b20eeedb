"""The speculation check's option and settings: `--speculative`, on its own `--help` group.

    settings = settings_of(config.option, context)   # SpeculationSettings(declared=True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext


__all__ = ["TITLE", "SpeculationSettings", "add_options", "settings_of"]

TITLE = "speculation"  # its `--help` group's: "oracle: speculation"


@dataclass(frozen=True)
class SpeculationSettings:
    declared: bool = False  # --speculative: the candidate is speculative, so drafted and accepted must be > 0


def add_options(group) -> None:
    group.addoption("--speculative", action="store_true", default=False,
                    help="the candidate is speculative: require drafted > 0 and accepted > 0 (default: off; "
                         "also required when the server's config or counters show speculation)")


def settings_of(option, context: OptionContext) -> SpeculationSettings:
    return SpeculationSettings(bool(option.speculative))
