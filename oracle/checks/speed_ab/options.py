"""The interleaved A/B check's options and settings, on its own `--help` group: --reference-launch (the reference
config started here), the sequential test (--speed-rounds-max, --speed-delta, --speed-alpha, --speed-beta) or the
fixed design (--speed-rounds), --speed-control and --interleave-servers, declared, typed and cross-checked here.

    interleave = settings_of(config.option, context)      # frozen InterleaveOptions
    interleave.on, interleave.command, interleave.rounds  # rounds: None in the sequential test (the default)
    interleave.test(bar)                                  # the sequential test's settings at --min-speedup bar
    resolve_reference_launch(interleave, reference)       # `recorded` -> the reference's launch command
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from oracle.validators import one_of, shell_command
from oracle.redaction import MASK
from oracle.speed.sequential_defaults import DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_DELTA, DEFAULT_ROUNDS_MAX

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext
    from oracle.speed.sequential import Sequential

__all__ = ["TITLE", "DEFAULT_SPEED_ROUNDS", "INTERLEAVE_SERVERS", "RECORDED", "InterleaveOptions", "add_options",
           "resolve_reference_launch", "settings_of"]

TITLE = "interleaved A/B"  # its `--help` group's: "oracle: interleaved A/B"

RECORDED = "recorded"  # --reference-launch recorded: the reference's own launch command, from its manifest
INTERLEAVE_SERVERS = ("one-at-a-time", "both-up")
DEFAULT_SPEED_ROUNDS = 6  # the fixed design's rounds where a caller names none (benchmarks); the gate is sequential
MAX_ROUNDS = 1000  # rounds and control pairs: a typo, not a plan, beyond this


@dataclass(frozen=True)
class InterleaveOptions:
    """The interleaved A/B session: off unless --reference-launch is given."""

    command: str | None = None  # the reference's launch command ({port}), or RECORDED until the plan resolves it
    rounds: int | None = None  # --speed-rounds: the fixed design's ABBA rounds; None: the sequential test
    control: int = 0  # A/A pairs of the reference config against itself, each run as the A/B session is
    servers: str = INTERLEAVE_SERVERS[0]  # one-at-a-time (each pass on its own boot) or both-up
    rounds_max: int = DEFAULT_ROUNDS_MAX  # the sequential test's cap
    delta: float = DEFAULT_DELTA
    alpha: float = DEFAULT_ALPHA
    beta: float = DEFAULT_BETA

    @property
    def on(self) -> bool:
        return self.command is not None

    @property
    def sequential(self) -> bool:
        return self.rounds is None

    @property
    def most_rounds(self) -> int:
        """The rounds a session may run: the fixed design's, or the sequential test's cap."""
        return self.rounds if self.rounds is not None else self.rounds_max

    def test(self, bar: float | None) -> "Sequential":
        """The sequential test at --min-speedup `bar` (1.0, "faster than the reference", when none is given)."""
        from oracle.speed.sequential import Sequential  # numpy: only when a gate judges speed

        return Sequential(bar=bar or 1.0, delta=self.delta, alpha=self.alpha, beta=self.beta,
                          rounds_max=self.rounds_max)


def _reference_launch(value: str) -> str:
    if value.strip() == RECORDED:
        return RECORDED
    if not value.strip():
        raise pytest.UsageError("--reference-launch '': give the reference server's command with {port}, or "
                                f"{RECORDED} (the command the reference was recorded with)")
    return shell_command("--reference-launch")(value)


def _rounds(flag: str, least: int):
    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise pytest.UsageError(f"{flag} {value!r}: expected a whole number, e.g. {flag} 6") from None
        if not least <= n <= MAX_ROUNDS:
            raise pytest.UsageError(f"{flag} {value!r}: must be between {least} and {MAX_ROUNDS}"
                                    + (" (a between-run interval needs two paired rounds)" if least == 2 else ""))
        return n
    return parse


def _fraction(flag: str, example: str, top: float):
    def parse(value: str) -> float:
        try:
            x = float(value)
        except ValueError:
            x = -1.0
        if not 0 < x < top:
            raise pytest.UsageError(f"{flag} {value!r}: expected a fraction above 0 and below {top:g}, e.g. "
                                    f"{flag} {example}")
        return x
    return parse


_servers = one_of("--interleave-servers", INTERLEAVE_SERVERS, "must be one-at-a-time (each pass on its own boot, "
                  "one server up at a time) or both-up (both servers up together, when memory allows)")


def add_options(g) -> None:
    g.addoption("--reference-launch", metavar="CMD|recorded", type=_reference_launch, default=None,
                help="add the speed-ab item: start the reference config with this command ({port} replaced), or "
                     "`recorded` (the command the reference was recorded with), and measure reference and candidate "
                     "alternately in ABBA rounds in this session; the speed comparison is then the interleaved one, "
                     "with a between-run interval (default: none; the reference's speed is the one it recorded)")
    g.addoption("--speed-rounds", metavar="N", type=_rounds("--speed-rounds", 2), default=None,
                help="the fixed design: exactly N ABBA rounds of --reference-launch, each measuring both sides once, "
                     "judged by their 95%% interval (default: the sequential test, --speed-rounds-max)")
    g.addoption("--speed-rounds-max", metavar="N", type=_rounds("--speed-rounds-max", 2), default=None,
                help="the sequential test's cap: after each ABBA round a sequential probability ratio test on the "
                     "rounds' log ratios stops when its LLR leaves its bounds; at N rounds undecided it is "
                     f"inconclusive (default: {DEFAULT_ROUNDS_MAX})")
    g.addoption("--speed-delta", metavar="D", type=_fraction("--speed-delta", "0.03", 1.0), default=None,
                help="the sequential test's indifference zone: H1 is a speed-up >= --min-speedup x (1 + D), H0 one "
                     f"<= --min-speedup (default: {DEFAULT_DELTA:g})")
    g.addoption("--speed-alpha", metavar="A", type=_fraction("--speed-alpha", "0.05", 0.5), default=None,
                help="the sequential test's chance of passing a candidate no faster than the bar "
                     f"(default: {DEFAULT_ALPHA:g})")
    g.addoption("--speed-beta", metavar="B", type=_fraction("--speed-beta", "0.05", 0.5), default=None,
                help="the sequential test's chance of failing a candidate faster than the bar x (1 + --speed-delta) "
                     f"(default: {DEFAULT_BETA:g})")
    g.addoption("--speed-control", metavar="N", type=_rounds("--speed-control", 0), default=None,
                help="with --reference-launch, also run N A/A pairs (the reference config against itself, each run "
                     "as the A/B session) and report how many claimed a difference: the false-claim rate on this "
                     "machine, and the noise band from where their points landed (default: 0)")
    g.addoption("--interleave-servers", metavar="HOW", type=_servers, default=None,
                help="one-at-a-time: each pass of --reference-launch on its own boot, one server up at a time; "
                     "both-up: reference and candidate servers up together, when memory allows (a --oracle-url candidate "
                     "needs both-up) (default: one-at-a-time)")


def settings_of(option, context: OptionContext) -> InterleaveOptions:
    """The interleave options, cross-checked; UsageError naming the fix."""
    sequential = [(f, v) for f, v in (("--speed-rounds-max", option.speed_rounds_max), ("--speed-delta", option.speed_delta),
                                      ("--speed-alpha", option.speed_alpha), ("--speed-beta", option.speed_beta))
                  if v is not None]
    given = [f for f, v in (("--speed-rounds", option.speed_rounds), *sequential, ("--speed-control", option.speed_control),
                            ("--interleave-servers", option.interleave_servers)) if v is not None]
    if option.reference_launch is None:
        if given:
            raise pytest.UsageError(f"{given[0]} belongs to the interleaved A/B session: add --reference-launch CMD "
                                    f"(or --reference-launch {RECORDED}), or drop {given[0]}")
        return InterleaveOptions()
    if not context.reference:
        raise pytest.UsageError("--reference-launch measures the reference config beside the candidate: add "
                                "--reference DIR (the reference it gates against)")
    if context.family.in_process:
        raise pytest.UsageError(f"--reference-launch starts a reference server; --backend {context.backend} runs the model "
                                "in this process: compare in-process speed without it")
    if context.workers > 1:
        raise pytest.UsageError(f"--reference-launch measures one candidate server against the reference; with -n "
                                f"{context.workers} the servers run at once and share the machine: interleave without "
                                "-n")
    servers = option.interleave_servers or INTERLEAVE_SERVERS[0]
    if context.urls and servers == "one-at-a-time":
        raise pytest.UsageError("--reference-launch with a --oracle-url candidate: oracle cannot stop a server it did not "
                                "start, so one-at-a-time cannot run; add --interleave-servers both-up (both servers "
                                "up together), or start the candidate with --launch CMD")
    if option.speed_rounds is not None and sequential:
        raise pytest.UsageError(f"--speed-rounds {option.speed_rounds} is the fixed design; {sequential[0][0]} belongs to "
                                f"the sequential test: drop --speed-rounds (sequential, the default) or drop "
                                f"{sequential[0][0]}")
    got = dict(sequential)
    return InterleaveOptions(command=option.reference_launch, rounds=option.speed_rounds, control=option.speed_control or 0,
                             servers=servers, rounds_max=got.get("--speed-rounds-max", DEFAULT_ROUNDS_MAX),
                             delta=got.get("--speed-delta", DEFAULT_DELTA), alpha=got.get("--speed-alpha", DEFAULT_ALPHA),
                             beta=got.get("--speed-beta", DEFAULT_BETA))


def resolve_reference_launch(interleave: InterleaveOptions, reference) -> InterleaveOptions:
    """`recorded` becomes the reference's recorded launch command; UsageError when it has none (a reference of a
    --oracle-url server) or its secrets were redacted when it was recorded."""
    if interleave.command != RECORDED:
        return interleave
    command = ((reference.manifest.get("identity") or {}).get("launch_command") if reference is not None else None)
    if not command:
        raise pytest.UsageError(f"--reference-launch {RECORDED}: the reference {reference.path if reference else ''} "
                                "keeps no launch command (it was recorded against a server given by --oracle-url); give the "
                                "reference server's command: --reference-launch CMD")
    if MASK in command:
        raise pytest.UsageError(f"--reference-launch {RECORDED}: the recorded command had secrets redacted ({MASK}) "
                                "when it was recorded, so it cannot be started again; give the command: "
                                "--reference-launch CMD")
    return dataclasses.replace(interleave, command=command)
