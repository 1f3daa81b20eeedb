"""The prompt-logprob check's option and settings: `--prompt-logprob-max-delta`, on its own `--help` group.

    settings = settings_of(config.option, context)   # PromptLogprobSettings(max_delta=0.01)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from oracle.validators import bounded

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["TITLE", "PromptLogprobSettings", "add_options", "settings_of"]

TITLE = "prompt log-prob"  # its `--help` group's: "oracle: prompt log-prob"

_nats = bounded("--prompt-logprob-max-delta", "a log-prob difference in nats", "0.01", 0, 100)


@dataclass(frozen=True)
class PromptLogprobSettings:
    max_delta: float | None = None  # the item's bar (None: reported only)


def add_options(group) -> None:
    group.addoption("--prompt-logprob-max-delta", metavar="NATS", type=_nats, default=None,
                    help="fail the prompt-logprob item (a runner's mean log-prob of the prompts' own tokens, teacher "
                         "forced, against the reference's) when the two differ by more than this (default: none, "
                         "reported only)")


def settings_of(option, context: OptionContext) -> PromptLogprobSettings:
    return PromptLogprobSettings(option.prompt_logprob_max_delta)
