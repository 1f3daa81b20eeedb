"""The conditions' options and settings, on their own `--help` group: the concurrency ladder (`--ladder`,
`--ladder-mode`, `--ladder-arrivals`, `--ladder-min`) and the server's restarts (`--boots`).

    settings = settings_of(config.option, context)   # ConditionSettings(ladder=(1, 4), boots=2, ...)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from oracle.checks.conditions.widths import ladder_value, never_tried, parse_ladder
from oracle.validators import one_of, positive_int

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["LADDER_ARRIVALS", "LADDER_MODES", "TITLE", "ConditionSettings", "add_options", "ladder_arrivals",
           "ladder_minimums", "ladder_mode", "settings_of"]

TITLE = "ladders and boots"  # its `--help` group's: "oracle: ladders and boots"


LADDER_MODES = ("cycle", "same")
LADDER_ARRIVALS = ("at-once", "staggered")  # see run/ladder.py


ladder_arrivals = one_of("--ladder-arrivals", LADDER_ARRIVALS, "must be at-once (each wave's requests sent together) "
                         "or staggered (each sent once the one before it has its first token)")
ladder_mode = one_of("--ladder-mode", LADDER_MODES, "must be cycle (the suite's prompts cycled) or same "
                     "(c copies of the first prompt)")


def ladder_minimums(value: str) -> tuple[tuple[int, int, int], ...]:
    """'c32=29/32,c64=58/64' -> ((32, 29, 32), (64, 58, 64))."""
    out = []
    for part in (p.strip() for p in value.split(",") if p.strip()):
        m = re.fullmatch(r"c(\d+)=(\d+)/(\d+)", part)
        if not m or int(m.group(3)) == 0 or int(m.group(2)) > int(m.group(3)):
            raise pytest.UsageError(f"--ladder-min {part!r}: expected cLEVEL=EXACT/TOTAL with EXACT <= TOTAL, "
                                    "e.g. --ladder-min c32=29/32,c64=58/64")
        out.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    return tuple(out)


@dataclass(frozen=True)
class ConditionSettings:
    ladder: tuple[int, ...] = ()  # concurrency levels after the c1 run (with --boots > 1, level 1 among them)
    preset: str = ""  # --ladder every:N / edges:N as given; "" for a plain list (whose gaps the width map names)
    never_tried: tuple[int, ...] = ()  # widths between 1 and the largest that a plain list skips
    mode: str = "cycle"  # --ladder-mode: the suite's prompts cycled, or c copies of the first ("same")
    minimums: tuple[tuple[int, int, int], ...] = ()  # --ladder-min: (level, exact, total)
    boots: int = 1  # server starts; each later boot is an item
    arrivals: str = "at-once"  # or "staggered": a wave's requests sent while its first decodes


def add_options(group) -> None:
    group.addoption("--ladder", metavar="C,...|every:N|edges:N", type=ladder_value, default=(),
                    help="widths (concurrency levels) to run after the c1 run, e.g. 1,2,4,8,16,32,64; every:N: each "
                         "width 1..N; edges:N: 1..10 and each 2^k-1, 2^k, 2^k+1 up to N (15,16,17,31,32,33,...); "
                         "level c keeps c independent streamed requests in flight, each compared with its prompt's "
                         "c1 record; the report's width map gives the class of outputs per width (default: none)")
    group.addoption("--ladder-mode", metavar="MODE", type=ladder_mode, default="cycle",
                    help="cycle: the suite's prompts cycled in waves of c; same: c copies of the first prompt "
                         "(default: cycle)")
    group.addoption("--ladder-arrivals", metavar="HOW", type=ladder_arrivals, default="at-once",
                    help="at-once: each wave's c requests sent together; staggered: each sent once the one before it "
                         "has streamed its first token, so its prefill runs while the others decode (mixed-batch) "
                         "(default: at-once)")
    group.addoption("--ladder-min", metavar="cN=K/M,...", type=ladder_minimums, default=(),
                    help="least share of exact records per level, e.g. c32=29/32,c64=58/64 (default: all exact)")
    group.addoption("--boots", metavar="N", type=positive_int("--boots"), default=1,
                    help="start the server N times (needs --launch or the embedded default) and compare every "
                         "boot with boot 1; adds the within-boot repeat (level 1) to the ladder (default: 1)")


def settings_of(option, context: OptionContext) -> ConditionSettings:
    caps = context.family.capabilities if context.family is not None else None
    refused = [flag for flag, used, offered in (("--boots", option.boots > 1, caps and caps.restartable),
                                                ("--ladder", bool(option.ladder), caps and caps.concurrent))
               if caps is not None and caps.in_process and used and not offered]
    if refused:
        raise pytest.UsageError(f"--backend {context.backend} runs in this process and cannot honour "
                                f"{', '.join(refused)} (no server to restart, requests run one at a time, no server "
                                "flags); drop them")
    if option.boots > 1 and context.urls:
        raise pytest.UsageError(f"--boots {option.boots} needs a server oracle can restart: use --launch CMD "
                                "(or the embedded default) instead of --oracle-url")
    spec = parse_ladder(option.ladder) if isinstance(option.ladder, str) else None
    ladder = spec.widths if spec is not None else tuple(option.ladder)
    unknown = [c for c, _, _ in option.ladder_min if c not in ladder]
    if unknown:
        raise pytest.UsageError(f"--ladder-min names c{unknown[0]}, which is not a --ladder level; "
                                f"add {unknown[0]} to --ladder or drop it from --ladder-min")
    if option.boots > 1 and 1 not in ladder:
        ladder = (1,) + ladder  # the within-boot repeat that tells "within a boot only" from "not even"
    preset, gaps = (spec.preset, never_tried(spec)) if spec is not None else ("", ())
    return ConditionSettings(ladder, preset, gaps, option.ladder_mode, tuple(option.ladder_min), option.boots,
                             option.ladder_arrivals)
