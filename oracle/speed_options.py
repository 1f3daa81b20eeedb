"""The speed options: the speed item's bar (--min-speedup) and the interleaved A/B session (--reference-launch,
--speed-rounds, --speed-control, --interleave-servers), declared, typed and cross-checked here; `options.py` calls
`add_speed_options` and `speed_settings` and keeps the result in `GateOptions` (`min_speedup`, `interleave`).

    interleave = speed_settings(config.option, urls=urls, workers=1, in_process=False)[1]
    interleave.on, interleave.command, interleave.rounds        # frozen InterleaveOptions
    resolve_reference_launch(interleave, reference)             # `recorded` -> the reference's launch command
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from oracle.option_types import power_mode, shell_command, speedup
from oracle.redaction import MASK
from oracle.speed.noise import NOISE_FLOOR

__all__ = ["DEFAULT_SPEED_ROUNDS", "INTERLEAVE_SERVERS", "RECORDED", "InterleaveOptions", "add_speed_options",
           "resolve_reference_launch", "speed_settings"]

RECORDED = "recorded"  # --reference-launch recorded: the reference's own launch command, from its manifest
INTERLEAVE_SERVERS = ("one-at-a-time", "both-up")
DEFAULT_SPEED_ROUNDS = 6
MAX_ROUNDS = 1000  # rounds and control pairs: a typo, not a plan, beyond this


@dataclass(frozen=True)
class InterleaveOptions:
    """The interleaved A/B session: off unless --reference-launch is given; and the speed verdict's noise floor,
    which judges every comparison (interleaved or not)."""

    command: str | None = None  # the reference's launch command ({port}), or RECORDED until the plan resolves it
    rounds: int = DEFAULT_SPEED_ROUNDS  # ABBA rounds: each round measures reference and candidate once
    control: int = 0  # A/A pairs of the reference config against itself, each of `rounds` rounds
    servers: str = INTERLEAVE_SERVERS[0]  # one-at-a-time (each pass on its own boot) or both-up
    noise_floor: float = NOISE_FLOOR  # --speed-noise-floor: the speed verdict's band without an A/A control

    @property
    def on(self) -> bool:
        return self.command is not None


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


def _servers(value: str) -> str:
    if value not in INTERLEAVE_SERVERS:
        raise pytest.UsageError(f"--interleave-servers {value!r}: must be one-at-a-time (each pass on its own boot, "
                                "one server up at a time) or both-up (both servers up together, when memory allows)")
    return value


def _noise_floor(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        x = -1.0
    if not 0 <= x < 1:
        raise pytest.UsageError(f"--speed-noise-floor {value!r}: expected a fraction of the speed ratio from 0 to "
                                "below 1, e.g. --speed-noise-floor 0.05 (5%)")
    return x


def add_speed_options(g) -> None:
    g.addoption("--min-speedup", metavar="X", type=speedup, default=None,
                help="add the speed item: pass when the 95%% interval of the speed-up over the reference (the "
                     "interleaved between-run interval with --reference-launch, else the median per-prompt "
                     "conventional decode rate against the recorded reference) lies at or above X, fail when it lies "
                     "below; inconclusive (kind speed) when X is inside it or the comparison is not headline "
                     "(default: speed reported, not judged)")
    g.addoption("--speed-noise-floor", metavar="F", type=_noise_floor, default=None,
                help="the noise band of --min-speedup when no A/A control ran (--speed-control): a speed-up whose "
                     "point lies within F of the bar (0.05: +-5%%) is inconclusive, whatever its interval; with "
                     "--speed-control the band is the A/A intervals' farthest reach from 1.0 (default: 0.05, "
                     "identical configs measured up to 3.7%% apart on an H100: docs/speed.md)")
    g.addoption("--power", metavar="auto|off", type=power_mode, default="auto",
                help="auto: the speed card records the energy (RAPL, NVML, an Intel GPU's hwmon), temperature and "
                     "clocks over the timed run, and whether another process shared the server's device (then "
                     "`not isolated`: never a headline); off: none of it (default: auto)")
    g.addoption("--reference-launch", metavar="CMD|recorded", type=_reference_launch, default=None,
                help="add the speed-ab item: start the reference config with this command ({port} replaced), or "
                     "`recorded` (the command the reference was recorded with), and measure reference and candidate "
                     "alternately in ABBA rounds in this session; the speed comparison is then the interleaved one, "
                     "with a between-run interval (default: none; the reference's speed is the one it recorded)")
    g.addoption("--speed-rounds", metavar="N", type=_rounds("--speed-rounds", 2), default=None,
                help=f"ABBA rounds of --reference-launch, each measuring both sides once (default: "
                     f"{DEFAULT_SPEED_ROUNDS})")
    g.addoption("--speed-control", metavar="N", type=_rounds("--speed-control", 0), default=None,
                help="with --reference-launch, also run N A/A pairs (the reference config against itself, each of "
                     "--speed-rounds rounds) and report how many intervals excluded 1.0: the interval's false-claim "
                     "rate on this machine (default: 0)")
    g.addoption("--interleave-servers", metavar="HOW", type=_servers, default=None,
                help="one-at-a-time: each pass of --reference-launch on its own boot, one server up at a time; "
                     "both-up: reference and candidate servers up together, when memory allows (a --url candidate "
                     "needs both-up) (default: one-at-a-time)")


def speed_settings(o, *, urls: tuple[str, ...], workers: int, in_process: bool) -> tuple[float | None,
                                                                                         InterleaveOptions]:
    """(--min-speedup, the interleave options), cross-checked; UsageError naming the fix."""
    if o.min_speedup is not None and not o.reference:
        raise pytest.UsageError(f"--min-speedup {o.min_speedup:g} compares the candidate's speed with a reference's: "
                                "add --reference DIR (a reference recorded on the same hardware)")
    if o.min_speedup is not None and workers > 1:
        raise pytest.UsageError(f"--min-speedup measures one server's cold c1 run; with -n {workers} the servers run "
                                "at once and share the machine: gate the speed without -n")
    given = [f for f, v in (("--speed-rounds", o.speed_rounds), ("--speed-control", o.speed_control),
                            ("--interleave-servers", o.interleave_servers)) if v is not None]
    if o.reference_launch is None:
        if given:
            raise pytest.UsageError(f"{given[0]} belongs to the interleaved A/B session: add --reference-launch CMD "
                                    f"(or --reference-launch {RECORDED}), or drop {given[0]}")
        return o.min_speedup, InterleaveOptions(noise_floor=_floor(o))
    if not o.reference:
        raise pytest.UsageError("--reference-launch measures the reference config beside the candidate: add "
                                "--reference DIR (the reference it gates against)")
    if in_process:
        raise pytest.UsageError(f"--reference-launch starts a reference server; --backend {o.backend} runs the model "
                                "in this process: compare in-process speed without it")
    if workers > 1:
        raise pytest.UsageError(f"--reference-launch measures one candidate server against the reference; with -n "
                                f"{workers} the servers run at once and share the machine: interleave without -n")
    servers = o.interleave_servers or INTERLEAVE_SERVERS[0]
    if urls and servers == "one-at-a-time":
        raise pytest.UsageError("--reference-launch with a --url candidate: oracle cannot stop a server it did not "
                                "start, so one-at-a-time cannot run; add --interleave-servers both-up (both servers "
                                "up together), or start the candidate with --launch CMD")
    return o.min_speedup, InterleaveOptions(command=o.reference_launch, rounds=o.speed_rounds or DEFAULT_SPEED_ROUNDS,
                                            control=o.speed_control or 0, servers=servers, noise_floor=_floor(o))


def _floor(o) -> float:
    given = getattr(o, "speed_noise_floor", None)
    return NOISE_FLOOR if given is None else given


def resolve_reference_launch(interleave: InterleaveOptions, reference) -> InterleaveOptions:
    """`recorded` becomes the reference's recorded launch command; UsageError when it has none (a reference of a
    --url server) or its secrets were redacted when it was recorded."""
    if interleave.command != RECORDED:
        return interleave
    command = ((reference.manifest.get("identity") or {}).get("launch_command") if reference is not None else None)
    if not command:
        raise pytest.UsageError(f"--reference-launch {RECORDED}: the reference {reference.path if reference else ''} "
                                "keeps no launch command (it was recorded against a server given by --url); give the "
                                "reference server's command: --reference-launch CMD")
    if MASK in command:
        raise pytest.UsageError(f"--reference-launch {RECORDED}: the recorded command had secrets redacted ({MASK}) "
                                "when it was recorded, so it cannot be started again; give the command: "
                                "--reference-launch CMD")
    return dataclasses.replace(interleave, command=command)
