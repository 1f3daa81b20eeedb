"""The sampled-decoding options, on their own `--help` group: `--temperature` and the options that only mean
something with it (`--top-p`, `--seeds`, `--sampling-check`, `--max-shift`, `--score-url`), and the distribution
check's settings.

The sampling settings shape the whole run (every request samples with them): declared and read in
oracle/run/sampling_options.py (`sampling_of` cross-checks them into a `run/sampling.Sampling` that `GateOptions`
keeps, with `--sampling-check`); the distribution check's own settings are its bar and its scoring server.

    settings = settings_of(config.option, context)   # DistributionSettings(max_shift=0.1, score_url=...)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from oracle.run.sampling_options import add_sampling_options
from oracle.validators import bounded

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["TITLE", "DistributionSettings", "add_options", "settings_of"]

TITLE = "sampled decoding"  # its `--help` group's: "oracle: sampled decoding"

_shift = bounded("--max-shift", "a shift in nats per token", "0.1", 0, 100)


@dataclass(frozen=True)
class DistributionSettings:
    max_shift: float = 0.1  # nats per token the distribution check must be able to detect
    score_url: str | None = None  # the reference model's server that scores sampled tokens


def add_options(g) -> None:
    add_sampling_options(g)
    g.addoption("--max-shift", metavar="NATS", type=_shift, default=0.1,
                help="with --sampling-check distribution: the shift of mean per-token log-likelihood the run must "
                     "be able to detect (95%% level, 80%% power), else insufficient (default: 0.1)")
    g.addoption("--score-url", metavar="URL", default=None,
                help="with --sampling-check distribution: a running server of the reference's model and config "
                     "that scores both sides' sampled tokens by teacher forcing (default: none)")


def settings_of(option, context: OptionContext) -> DistributionSettings:
    return DistributionSettings(option.max_shift, option.score_url.rstrip("/") if option.score_url else None)
