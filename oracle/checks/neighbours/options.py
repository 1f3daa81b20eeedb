"""The neighbours' option and settings, on their own `--help` group: `--neighbours LENGTHS`, the prompt lengths of
the unrelated requests sent beside each suite prompt.

    settings = settings_of(config.option, context)   # NeighbourSettings(lengths=(1, 9, 10, 64, 512))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["TITLE", "MAX_LENGTH", "NeighbourSettings", "add_options", "neighbour_lengths", "settings_of"]

TITLE = "neighbours"  # its `--help` group's: "oracle: neighbours"

MAX_LENGTH = 1 << 20  # no server holds a prompt this long; a longer value is a typo, refused before any request


@dataclass(frozen=True)
class NeighbourSettings:
    lengths: tuple[int, ...] = ()  # neighbour prompt lengths in tokens, ascending, each once (none: the check is off)


def neighbour_lengths(value: str) -> tuple[int, ...]:
    """`1,9,10,64,512` -> (1, 9, 10, 64, 512); empty, zero, negative or non-integer values are usage errors."""
    parts = [p.strip() for p in value.split(",")]
    if not any(parts):
        raise pytest.UsageError("--neighbours: give at least one neighbour prompt length in tokens, "
                                "e.g. --neighbours 1,9,10,64,512")
    lengths = []
    for part in parts:
        try:
            n = int(part)
        except ValueError:
            raise pytest.UsageError(f"--neighbours {value!r}: {part!r} is not a whole number of tokens; write "
                                    "comma-separated prompt lengths, e.g. --neighbours 1,9,10,64,512") from None
        if n < 1 or n > MAX_LENGTH:
            raise pytest.UsageError(f"--neighbours {value!r}: {n} is out of range (1..{MAX_LENGTH} tokens); a "
                                    "neighbour's prompt holds at least one token, e.g. --neighbours 1,9,10,64,512")
        lengths.append(n)
    return tuple(sorted(set(lengths)))


def add_options(group) -> None:
    group.addoption("--neighbours", metavar="LENGTHS", type=neighbour_lengths, default=(),
                    help="prompt lengths in tokens of unrelated requests sent beside each suite prompt, e.g. "
                         "1,9,10,64,512: each neighbour's prefill runs beside the prompt's decode, whose complete "
                         "token array must equal its c1 record; a length beyond the server's context is dropped and "
                         "said (default: none)")


def settings_of(option, context: OptionContext) -> NeighbourSettings:
    lengths = tuple(option.neighbours)
    if lengths and context.family is not None and not context.family.capabilities.concurrent:
        raise pytest.UsageError(f"--backend {context.backend} runs requests one at a time and cannot honour "
                                "--neighbours (a neighbour runs beside a prompt): drop it")
    return NeighbourSettings(lengths)
