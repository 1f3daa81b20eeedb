"""Fuzzing of what users hand oracle, at a larger budget than the test suite's: damaged references, report
folders, gate option values and suite files (tests/helpers/fuzz.py, the checks the tests run), each gate as its
own `python -m pytest` process (as a user runs it), each `oracle` command through its main().

    python benchmarks/fuzz_inputs.py [--examples 50] [--seed 0] [--kinds references,reports,options,suites]

Prints, per kind of input and in all: cases run, tracebacks, wrong exit codes, changed input folders, bad input
taken to the server, and the first example of each failure. The goal is 0 of each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed as hypothesis_seed, settings

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "helpers"))  # the fuzz strategies and checks

from fuzz import Outcome, check_reference, check_report, reference_cases, report_cases  # noqa: E402
from fuzz_gate import check_options, check_suite, gate_option_names, option_args, suite_files  # noqa: E402

PROPERTIES = (("traceback", "tracebacks"), ("exit", "wrong exit codes"), ("input folder changed",
                                                                          "changed input folders"),
              ("accepted", "bad input taken to the server"))


def gate_in(folder: Path):
    """The gate as its own process in `folder`, stdout and stderr together."""

    def run(args: list[str]) -> Outcome:
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
        (folder / "pytest.ini").write_text("[pytest]\n")  # a rootdir of its own
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--backend=llamacpp",
                               *args], cwd=folder, env=env, capture_output=True, timeout=300, errors="replace")
        return Outcome(done.returncode, done.stdout + done.stderr)

    return run


def fuzz(name: str, strategy, check, examples: int, seed: int, tally: dict) -> None:
    """Run `check` on `examples` generated cases; every problem counted, the first of each kind kept."""

    @settings(max_examples=examples, deadline=None, database=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(seed)
    @given(case=strategy)
    def each(case):
        with tempfile.TemporaryDirectory() as tmp:
            found = check(case, Path(tmp))
        tally[name]["cases"] += 1
        words = [p for ps in (found.values() if isinstance(found, dict) else [found]) for p in ps]
        for key, label in PROPERTIES:
            if any(p.startswith(key) for p in words):
                tally[name][label] += 1
                tally["examples"].setdefault((name, label), f"{case!r}: {words}")
        if words:
            tally["failures"].append(f"{name}: {case!r}: {words}")

    each()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=50, help="cases per kind of input (default 50)")
    ap.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    ap.add_argument("--kinds", default="references,reports,options,suites",
                    help="the kinds of input to fuzz, comma-separated (default: all four)")
    ap.add_argument("--all-failures", action="store_true", help="print every failing case, not the first of each")
    args = ap.parse_args()
    names = gate_option_names()
    kinds = {
        "references": (reference_cases(), lambda case, tmp: check_reference(case, tmp, gate_in(tmp))),
        "reports": (report_cases(), lambda case, tmp: check_report(case, tmp)),
        "options": (option_args(names), lambda case, tmp: check_options(case, tmp, gate_in(tmp))),
        "suites": (suite_files(), lambda case, tmp: check_suite(case[1], tmp, gate_in(tmp))),
    }
    unknown = set(args.kinds.split(",")) - set(kinds)
    if unknown:
        ap.error(f"--kinds {args.kinds}: unknown {', '.join(sorted(unknown))}; give some of {', '.join(kinds)}")
    kinds = {name: kinds[name] for name in args.kinds.split(",")}
    tally: dict = {name: Counter() for name in kinds} | {"examples": {}, "failures": []}
    for name, (strategy, check) in kinds.items():
        fuzz(name, strategy, check, args.examples, args.seed, tally)
        row = tally[name]
        print(f"{name}: {row['cases']} cases, " + ", ".join(f"{row[label]} {label}" for _, label in PROPERTIES),
              flush=True)
    total = sum((tally[name] for name in kinds), Counter())
    print(f"total: {total['cases']} cases run, " + ", ".join(f"{total[label]} {label}" for _, label in PROPERTIES))
    for (name, label), example in tally["examples"].items():
        print(f"first of {label} ({name}): {example[:400]}")
    if args.all_failures:
        for line in tally["failures"]:
            print(f"failure: {line[:400]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
