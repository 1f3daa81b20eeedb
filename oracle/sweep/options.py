"""The sweep's options, on their own `--help` group: `--sweep` (a grid of settings, each point a gate run),
`--sweep-max` and `--sweep-no-repro`. Light: the plugin declares them in every pytest session.

    add_options(parser.getgroup("oracle-sweep", "oracle: sweeps"))
    sweep_asked(config.option)       # whether pytest_cmdline_main hands the run to the sweep
    axes, sweep_max, repro = sweep_settings(config.option, gate_on=True)   # ((), None, True): not a sweep
"""

from __future__ import annotations

from oracle.sweep.grid import Axis, SweepUsageError, parse_axis
from oracle.validators import positive_int

__all__ = ["TITLE", "add_options", "sweep_asked", "sweep_settings"]

TITLE = "sweeps"  # its `--help` group's: "oracle: sweeps"


def add_options(group) -> None:
    group.addoption("--sweep", metavar="SETTING=V1,V2", action="append", type=parse_axis, default=[],
                    help="gate each point of a grid of settings against --reference, each its own gate run: a launch "
                         "flag (write --sweep=-ctk=f16,q8_0: with '=', as argparse reads a value starting with '-' as "
                         "an option), an environment variable (--sweep=OMP_NUM_THREADS=1,2), or with the embedded "
                         "server a --server-args flag; several make a grid (default: none; see docs/sweep.md)")
    group.addoption("--sweep-max", metavar="N", type=positive_int("--sweep-max"), default=None,
                    help="run only the first N points of the --sweep grid (a partial sweep, exit 2) (default: all)")
    group.addoption("--sweep-no-repro", action="store_true", default=False,
                    help="do not reduce the sweep's first point that splits from the reference to a repro (default: "
                         "`oracle repro` on it)")


def sweep_asked(option) -> bool:
    """Whether any sweep option is given (the sweep then refuses what it cannot run, or runs the grid)."""
    return bool(option.sweep or option.sweep_max or option.sweep_no_repro)


def sweep_settings(option, *, gate_on: bool) -> tuple[tuple[Axis, ...], int | None, bool]:
    """The grid's axes (() when this is not a sweep), --sweep-max and whether the first split is reduced to a repro;
    SweepUsageError for a sweep option without --sweep, and for a sweep without the gate (`gate_on`: --backend)."""
    if not option.sweep:
        if option.sweep_max:
            raise SweepUsageError("--sweep-max caps the points of a --sweep grid: add --sweep SETTING=V1,V2")
        if option.sweep_no_repro:
            raise SweepUsageError("--sweep-no-repro has no effect without --sweep (it skips the repro of a sweep's "
                                  "first split): add --sweep SETTING=V1,V2, or leave --sweep-no-repro out")
    elif not gate_on:
        raise SweepUsageError("--sweep gates each point against a reference: add --backend NAME (and --reference DIR)")
    return tuple(option.sweep), option.sweep_max, not option.sweep_no_repro
