"""`oracle bisect`'s options, and their check into a `BisectConfig`: bad input is a `BisectUsage` whose message
names the fix (exit 2), before any server starts.

    add_parser(subparsers)                  # in cli.py
    config = bisect_config(args)            # BisectUsage on bad input
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from oracle.backends import check_platform, is_in_process, server_families
from oracle.launch_command import Launch, LaunchError, parse_launch, port_refusal
from oracle.run.suite import Suite, SuiteError, builtin_suite_path, load_suite
from oracle.store.folder_safety import (Place, earlier_report_refusal, folder_refusal, name_refusal,
                                         reference_inside_refusal)
from oracle.store.folders import FolderError, fresh_report_dir, preflight

__all__ = ["BisectConfig", "BisectUsage", "add_parser", "bisect_config"]

DEFAULT_MAX_TOKENS = 64
DEFAULT_TRIALS = 2
DEFAULT_MAX_PROBES = 32


class BisectUsage(ValueError):
    """Bad input to `oracle bisect`; the message names the fix."""


@dataclass(frozen=True)
class BisectConfig:
    backend: str
    good: str
    bad: str
    a: Launch
    b: Launch
    suite: Suite
    max_tokens: int
    concurrency: int
    trials: int
    max_probes: int
    report_dir: Path
    seed: int
    request_timeout: float
    launch_timeout: float


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("bisect", help="name the launch flag, env var or program argument that changes the outputs: "
                                      "delta debugging between a good and a bad launch command; exit 0 when a "
                                      "culprit is named or B reproduces A, 1 when --max-probes ran out first, 2 on "
                                      "bad input, an unreproducible A or an interrupted run")
    p.add_argument("--backend", required=True, metavar="FAMILY",
                   help=f"the protocol the servers speak, as for the gate: family[-platform], the family "
                        f"one of {', '.join(server_families())}")
    p.add_argument("--good", required=True, metavar="CMD", help="launch command A (with {port}), the good one")
    p.add_argument("--bad", required=True, metavar="CMD", help="launch command B (with {port}), whose outputs differ")
    p.add_argument("--suite", default="default", metavar="NAME|PATH", help="prompt suite (default: default)")
    p.add_argument("--prompts", default="", metavar="ID,...", help="only these prompts of the suite (default: all)")
    p.add_argument("--max-tokens", default=str(DEFAULT_MAX_TOKENS), metavar="N",
                   help=f"tokens per prompt (default: {DEFAULT_MAX_TOKENS})")
    p.add_argument("--concurrency", default="1", metavar="N", help="requests at once (default: 1)")
    p.add_argument("--trials", default=str(DEFAULT_TRIALS), metavar="N",
                   help=f"server starts per probe; a probe is bad when any diverges (default: {DEFAULT_TRIALS})")
    p.add_argument("--max-probes", default=str(DEFAULT_MAX_PROBES), metavar="N",
                   help=f"probes at most (default: {DEFAULT_MAX_PROBES})")
    p.add_argument("--report-dir", default=None, metavar="DIR",
                   help="where bisect.json / .md / .html and the server logs go (default: reports/<UTC time>-bisect/)")
    p.add_argument("--seed", default="1234", metavar="N", help="request seed (default: 1234)")
    p.add_argument("--request-timeout", default="600", metavar="S", help="per-read timeout of a request (default: 600)")
    p.add_argument("--launch-timeout", default="600", metavar="S",
                   help="seconds a server may take to become healthy (default: 600)")
    return p


def _int(args, name: str, least: int) -> int:
    flag = "--" + name.replace("_", "-")
    value = getattr(args, name)
    try:
        n = int(value)
    except ValueError:
        raise BisectUsage(f"{flag} {value!r}: expected a whole number, e.g. {flag} {max(least, 2)}") from None
    if n < least:
        raise BisectUsage(f"{flag} {value!r}: must be at least {least}")
    return n


def _launch(flag: str, command: str) -> Launch:
    try:
        return parse_launch(command)
    except LaunchError as exc:
        raise BisectUsage(f"{flag}: {exc}") from None


def bisect_config(args) -> BisectConfig:
    try:
        check_platform(args.backend)  # parses it, then the platform tag
    except ValueError as exc:
        raise BisectUsage(str(exc)) from None
    if is_in_process(args.backend):
        raise BisectUsage(f"--backend {args.backend} runs the model in this process: bisect starts servers from "
                          "launch commands; give the family the server speaks "
                          f"({', '.join(server_families())})")
    numbers = {name: _int(args, name, least) for name, least in
               (("max_tokens", 1), ("concurrency", 1), ("trials", 1), ("max_probes", 1), ("request_timeout", 1),
                ("launch_timeout", 1))}
    seed = _int(args, "seed", 0)  # a negative seed is the server's "random each time"
    a, b = _launch("--good", args.good), _launch("--bad", args.bad)
    if a != b:
        for flag, command in (("--good", args.good), ("--bad", args.bad)):
            refusal = port_refusal(flag, command)
            if refusal:
                raise BisectUsage(refusal)
    try:
        suite = load_suite(args.suite).with_max_tokens(numbers["max_tokens"])
    except SuiteError as exc:
        raise BisectUsage(str(exc)) from None
    if args.prompts:
        wanted = [p.strip() for p in args.prompts.split(",") if p.strip()]
        unknown = [p for p in wanted if p not in suite.ids()]
        if unknown or not wanted:
            raise BisectUsage(f"--prompts {args.prompts!r}: no prompt {unknown[0] if unknown else ''!r} in the suite "
                              f"{suite.name}; its ids: {', '.join(suite.ids())}")
        suite = suite.only(set(wanted))
    folder = Path(args.report_dir) if args.report_dir else fresh_report_dir("bisect")
    written = Place("--report-dir", folder)
    reads = [] if builtin_suite_path(args.suite) else [Place("--suite", Path(args.suite), file=True)]
    refusal = (name_refusal(written) or earlier_report_refusal(written, marker="bisect.json")
               or folder_refusal([written], reads) or reference_inside_refusal(written))
    if refusal:
        raise BisectUsage(refusal)
    try:
        preflight(folder, "--report-dir")
    except FolderError as exc:
        raise BisectUsage(str(exc)) from None
    return BisectConfig(backend=args.backend, good=args.good, bad=args.bad, a=a, b=b, suite=suite,
                        seed=seed, report_dir=folder, **numbers)
