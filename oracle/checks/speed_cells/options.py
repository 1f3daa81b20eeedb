"""The speed cells' options and settings, on their own `--help` group: --speed-cells (prompt and generation
lengths measured cold, one cell each) and --speed-repeats.

    settings = settings_of(config.option, context)   # CellsSettings(cells=((512, 128),), repeats=5)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from oracle.speed.cells import parse_cells
from oracle.validators import positive_int

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["speed_cells", "TITLE", "DEFAULT_SPEED_REPEATS", "CellsSettings", "add_options", "settings_of"]

TITLE = "speed cells"  # its `--help` group's: "oracle: speed cells"

DEFAULT_SPEED_REPEATS = 5  # --speed-repeats: the field note's n=5 per cell


def speed_cells(value: str) -> tuple[tuple[int, int], ...]:
    """--speed-cells: `field` or pN/gM,...: (prompt tokens, generated tokens) per cell."""
    try:
        return tuple((c.prompt_tokens, c.gen_tokens) for c in parse_cells(value))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


@dataclass(frozen=True)
class CellsSettings:
    cells: tuple[tuple[int, int], ...] = ()  # (prompt tokens, generated tokens) per cell; (): no cells
    repeats: int = DEFAULT_SPEED_REPEATS  # repeats per cell


def add_options(g) -> None:
    g.addoption("--speed-cells", metavar="CELLS", type=speed_cells, default=(),
                help="add the speed-cells item: per cell pPROMPT/gGENERATED (e.g. p512/g128,p2048/g1, or `field`: "
                     "p512/g128,p2048/g128,p8192/g128,p2048/g1,p8192/g1) one same-shape warm-up, then "
                     "--speed-repeats cold requests of exactly that shape, each with its own unique prefix; "
                     "g1 measures cold input (prompt tokens / TTFT), longer cells decode (default: none)")
    g.addoption("--speed-repeats", metavar="N", type=positive_int("--speed-repeats"), default=None,
                help=f"repeats per --speed-cells cell, every sample kept (default: {DEFAULT_SPEED_REPEATS})")


def settings_of(option, context: OptionContext) -> CellsSettings:
    """The cells and their repeats, cross-checked; UsageError naming the fix."""
    if option.speed_repeats is not None and not option.speed_cells:
        raise pytest.UsageError(f"--speed-repeats {option.speed_repeats} repeats speed cells: add --speed-cells CELLS "
                                "(e.g. --speed-cells field), or drop --speed-repeats")
    if option.speed_cells and context.workers > 1:
        raise pytest.UsageError(f"--speed-cells measures one server alone; with -n {context.workers} the servers run "
                                "at once and share the machine: measure cells without -n")
    return CellsSettings(tuple(option.speed_cells), option.speed_repeats or DEFAULT_SPEED_REPEATS)
