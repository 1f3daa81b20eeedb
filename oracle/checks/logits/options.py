"""The logits check's options and settings, on its own `--help` group: `--logits` (compare logits against a
reference that is not of kind f16), the bars `--kld-max` and `--same-top1-min`, and `--floor-dtype` (the precision
floor of an f16 reference recorded in process).

`--logits` and `--floor-dtype` also shape the run itself (the top-k every request asks for, the refusal under
pytest -n, the floor model loaded at the end of a record run), so `GateOptions` keeps their values as the plan's;
the bars are the check's own settings.

    settings = settings_of(config.option, context)   # LogitsSettings(kld_max=0.05, same_top1_min=None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from oracle.backends.hf_options import DTYPES
from oracle.validators import bounded

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["TITLE", "floor_dtype", "LogitsSettings", "add_options", "settings_of"]

TITLE = "logits"  # its `--help` group's: "oracle: logits"

_kld = bounded("--kld-max", "a Mean KLD in nats", "0.05", 0, 100)
_percent = bounded("--same-top1-min", "a percentage", "95", 0, 100, percent=True)


def floor_dtype(value: str) -> str:
    """--floor-dtype: a dtype the family that keeps a precision floor loads (its options' DTYPES), or none."""
    if value != "none" and value not in DTYPES:
        raise pytest.UsageError(f"--floor-dtype {value!r}: must be one of {', '.join(DTYPES)}, or none")
    return value


@dataclass(frozen=True)
class LogitsSettings:
    kld_max: float | None = None  # the logits item's bar on Mean KLD (None: reported only)
    same_top1_min: float | None = None  # its bar on Same top p, percent (None: reported only)


def add_options(group) -> None:
    group.addoption("--logits", action="store_true", default=False,
                    help="compare logits (KLD, Same top p, delta-p) against a reference that is not of kind f16 but "
                         "holds top-k logprobs (default: only against f16 references)")
    group.addoption("--kld-max", metavar="NATS", type=_kld, default=None,
                    help="fail the logits item when the Mean KLD (a lower bound over HTTP top-k) exceeds this "
                         "(default: none, reported only)")
    group.addoption("--same-top1-min", metavar="PERCENT", type=_percent, default=None,
                    help="fail the logits item when Same top p falls below this percentage (default: none, "
                         "reported only)")
    group.addoption("--floor-dtype", metavar="DTYPE", type=floor_dtype, default=None,  # None: not given (refused where no floor)
                    help="when recording an f16 reference with the hf backend, also score the reference path with "
                         "the same weights in this dtype and store it as the reference's noise floor; none to skip "
                         "(default: bfloat16)")


def settings_of(option, context: OptionContext) -> LogitsSettings:
    return LogitsSettings(option.kld_max, option.same_top1_min)
