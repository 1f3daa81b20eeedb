"""The sampled-decoding options, on their own `--help` group: `--temperature` and the options that only mean
something with it (`--top-p`, `--seeds`, `--sampling-check`, `--max-shift`, `--score-url`), and the distribution
check's settings.

The sampling settings shape the whole run (every request samples with them; oracle/option_sampling.sampling_of
cross-checks them into a `run/sampling.Sampling` that `GateOptions` keeps, with `--sampling-check`); the
distribution check's own settings are its bar and its scoring server.

    settings = settings_of(config.option, context)   # DistributionSettings(max_shift=0.1, score_url=...)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from oracle.option_sampling import add_sampling_options

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["TITLE", "DistributionSettings", "add_options", "settings_of"]

TITLE = "sampled decoding"  # its `--help` group's: "oracle: sampled decoding"


@dataclass(frozen=True)
class DistributionSettings:
    max_shift: float = 0.1  # nats per token the distribution check must be able to detect
    score_url: str | None = None  # the reference model's server that scores sampled tokens


def add_options(group) -> None:
    add_sampling_options(group)


def settings_of(option, context: OptionContext) -> DistributionSettings:
    return DistributionSettings(option.max_shift, option.score_url.rstrip("/") if option.score_url else None)
