"""The decode-vs-prefill check's options and settings, on its own `--help` group: the chunk sizes, the prefix-length
ladder of the chunked-prefill item, and the bar.

    settings = settings_of(config.option, context)   # DecodePrefillSettings(chunks=(64, "served"), ...)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from oracle.validators import bounded

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["SERVED_BATCH", "TITLE", "DecodePrefillSettings", "add_options", "prefill_chunks", "prefill_lengths",
           "settings_of"]

TITLE = "decode vs prefill"  # its `--help` group's: "oracle: decode vs prefill"

_dvp = bounded("--dvp-max-delta", "a logprob difference in nats", "0.001", 0, 100)


SERVED_BATCH = "served"  # --prefill-chunks: the server's prefill chunk (Backend.prefill_chunk, read at start)


def prefill_chunks(value: str) -> tuple[int | str, ...]:
    """--prefill-chunks: sizes in tokens and/or `served` (the server's batch), comma-separated; `none`: one
    pass only."""
    if value.strip() == "none":
        return ()
    out: list[int | str] = []
    for part in (p.strip() for p in value.split(",")):
        if part == SERVED_BATCH:
            size: int | str = part
        else:
            try:
                size = int(part)
            except ValueError:
                raise pytest.UsageError(f"--prefill-chunks {value!r}: {part!r} is neither a number of tokens nor "
                                        f"{SERVED_BATCH!r}; e.g. --prefill-chunks 64,served (or none)") from None
            if size < 1:
                raise pytest.UsageError(f"--prefill-chunks {value!r}: a chunk holds at least 1 token")
        if size not in out:
            out.append(size)
    return tuple(out)


def prefill_lengths(value: str) -> tuple[int, ...]:
    """--prefill-lengths: the chunked-prefill ladder's prefix lengths in tokens, comma-separated; `none`: no ladder
    (the suite's own paths only)."""
    if value.strip() == "none":
        return ()
    try:
        lengths = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise pytest.UsageError(f"--prefill-lengths {value!r}: expected comma-separated prefix lengths in tokens, "
                                "e.g. --prefill-lengths 1,7,64,256,1024 (or none)") from None
    if not lengths or lengths[0] < 1:
        raise pytest.UsageError(f"--prefill-lengths {value!r}: a prefix holds at least 1 token, e.g. "
                                "--prefill-lengths 64,300 (or none)")
    return tuple(lengths)


@dataclass(frozen=True)
class DecodePrefillSettings:
    chunks: tuple[int | str, ...] = (64, "served")  # chunk sizes, "served" = the server's
    lengths: tuple[int, ...] = (1, 7, 64, 256, 1024, 2048, 4096, 8192)  # the chunked-prefill ladder
    max_delta: float | None = None  # the largest |Δlogprob| that passes (None: reported)


def add_options(group) -> None:
    group.addoption("--prefill-chunks", metavar="SIZES", type=prefill_chunks, default="64,served",
                    help="with --logits, decode vs prefill also feeds the candidate's path as a prompt in chunks of "
                         "these many tokens (served: the server's own batch, where the backend can read it; none: one "
                         "pass only); for a python runner the sizes also give the chunked-prefill item (default: "
                         "64,served)")
    group.addoption("--prefill-lengths", metavar="TOKENS", type=prefill_lengths,
                    default="1,7,64,256,1024,2048,4096,8192",
                    help="for a python runner's chunked-prefill item: the prefix lengths of a long prompt built from "
                         "the haystack text, each scored in one pass and in chunks of each --prefill-chunks size "
                         "(lengths beyond the runner's context are dropped; none: the suite's own paths only) "
                         "(default: 1,7,64,256,1024,2048,4096,8192)")
    # No default bar: the embedded llama-server itself decodes up to 0.55 nats away from a one-pass prefill of
    # the same path at low-probability top-k entries (bit-identical at 16 of 22 positions; fed in chunks of 16,
    # 22 of 22): README, "Decode vs prefill".
    group.addoption("--dvp-max-delta", metavar="NATS", type=_dvp, default=None,
                    help="fail decode-vs-prefill when a top-k logprob of the candidate's own path differs by more "
                         "than this between decoding it and scoring it as a prompt; 0 demands bit-identical "
                         "(default: none, reported only)")


def settings_of(option, context: OptionContext) -> DecodePrefillSettings:
    return DecodePrefillSettings(tuple(option.prefill_chunks), tuple(option.prefill_lengths), option.dvp_max_delta)
