"""The speed check's options and settings, on its own `--help` group: the speed item's bar (--min-speedup), the
noise band of every speed verdict (--speed-noise-floor) and the power and isolation window of the timed runs
(--oracle-power), declared, typed and cross-checked here.

    settings = settings_of(config.option, context)   # SpeedSettings(min_speedup=1.1, noise_floor=0.05, power="auto")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from oracle.speed.noise import NOISE_FLOOR
from oracle.validators import one_of

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["POWER_MODES", "power_mode", "speedup", "TITLE", "SpeedSettings", "add_options", "settings_of"]

TITLE = "speed"  # its `--help` group's: "oracle: speed"


POWER_MODES = ("auto", "off")  # see speed/power.py


def speedup(value: str) -> float:
    """--min-speedup: a ratio candidate / reference above 0 (1.0: at least as fast; 1.2: 20% faster)."""
    try:
        x = float(value.rstrip("xX"))
    except ValueError:
        raise pytest.UsageError(f"--min-speedup {value!r}: expected a ratio, e.g. --min-speedup 1.1 (10% faster "
                                "than the reference)") from None
    if not 0 < x < 1000:
        raise pytest.UsageError(f"--min-speedup {value!r}: must be a ratio above 0, e.g. 1.0 (no slower than "
                                "the reference)")
    return x


power_mode = one_of("--oracle-power", POWER_MODES, "must be auto (energy, temperature and isolation of the timed run "
                    "where this host can read them) or off (none measured)")


@dataclass(frozen=True)
class SpeedSettings:
    min_speedup: float | None = None  # the speed item's bar (None: speed reported, not judged)
    noise_floor: float = NOISE_FLOOR  # --speed-noise-floor: the speed verdict's band without an A/A control
    power: str = "auto"  # or "off": no energy meters, no isolation probe around the timed runs (speed/power.py)


def _noise_floor(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        x = -1.0
    if not 0 <= x < 1:
        raise pytest.UsageError(f"--speed-noise-floor {value!r}: expected a fraction of the speed ratio from 0 to "
                                "below 1, e.g. --speed-noise-floor 0.05 (5%)")
    return x


def add_options(g) -> None:
    g.addoption("--min-speedup", metavar="X", type=speedup, default=None,
                help="add the speed item: pass when the 95%% interval of the speed-up over the reference (the "
                     "interleaved between-run interval with --reference-launch, else the median per-prompt "
                     "conventional decode rate against the recorded reference) lies at or above X, fail when it lies "
                     "below; inconclusive (kind speed) when X is inside it or the comparison is not headline; with "
                     "--reference-launch the sequential test decides (--speed-rounds-max) "
                     "(default: speed reported, not judged)")
    g.addoption("--speed-noise-floor", metavar="F", type=_noise_floor, default=None,
                help="the noise band of --min-speedup against a recorded reference (no --reference-launch): a "
                     "speed-up whose point lies within F of the bar (0.05: +-5%%) is inconclusive, whatever its "
                     "interval; an interleaved session measures its own band (the A/A points with --speed-control, "
                     "else its pass-to-pass spread) (default: 0.05, identical configs measured up to 3.7%% apart on "
                     "an H100: docs/speed.md)")
    g.addoption("--oracle-power", metavar="auto|off", type=power_mode, default="auto",
                help="auto: the speed card records the energy (RAPL, NVML, an Intel GPU's hwmon), temperature and "
                     "clocks over the timed run, and whether another process shared the server's device (then "
                     "`not isolated`: never a headline); off: none of it (default: auto)")


def settings_of(option, context: OptionContext) -> SpeedSettings:
    """The speed settings, cross-checked; UsageError naming the fix."""
    if option.min_speedup is not None and not context.reference:
        raise pytest.UsageError(f"--min-speedup {option.min_speedup:g} compares the candidate's speed with a reference's: "
                                "add --reference DIR (a reference recorded on the same hardware)")
    if option.min_speedup is not None and context.workers > 1:
        raise pytest.UsageError(f"--min-speedup measures one server's cold c1 run; with -n {context.workers} the "
                                "servers run at once and share the machine: gate the speed without -n")
    floor = getattr(option, "speed_noise_floor", None)
    return SpeedSettings(option.min_speedup, NOISE_FLOOR if floor is None else floor, option.oracle_power)
