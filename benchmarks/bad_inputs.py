"""The fixed list of bad inputs (tests/helpers/bad_inputs.py) run as a user runs them: each gate as its own
`python -m pytest` process, each `oracle` command through its main(), no server anywhere.

    python benchmarks/bad_inputs.py [--only NAME,...] [--jobs 2]

Prints the cases run, tracebacks, wrong exit codes, silent acceptances (the gate went on to the server),
changed input folders and messages that do not name the value, then every failing case. The goal is 0 of each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "helpers"))

from bad_inputs import CASES, Case, run_case  # noqa: E402
from fuzz import Outcome  # noqa: E402

LABELS = (("traceback", "tracebacks"), ("exit", "wrong exit codes"), ("accepted", "silent acceptances"),
          ("input folder changed", "changed input folders"), ("message lacks", "messages without the value"))


def gate_in(folder: Path):
    """The gate as its own process in `folder` (a rootdir of its own), stdout and stderr together."""

    def run(args: list[str]) -> Outcome:
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
        (folder / "pytest.ini").write_text("[pytest]\n")
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=folder,
                              env=env, capture_output=True, timeout=300, errors="replace")
        return Outcome(done.returncode, done.stdout + done.stderr)

    return run


def one(case: Case) -> tuple[Case, list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            return case, run_case(case, Path(tmp), gate_in(Path(tmp)))
        except Exception as exc:  # noqa: BLE001 - the harness's own failure is reported, never hidden
            return case, [f"traceback in the harness: {type(exc).__name__}: {exc}"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="only these cases, comma-separated names (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="cases at once (default 2)")
    args = ap.parse_args()
    chosen = [c for c in CASES if not args.only or c.name in args.only.split(",")]
    # The oracle commands run in this process (cli.main) and redirect its output: one at a time.
    commands = [one(c) for c in chosen if c.command == "oracle"]
    gates = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for case, found in pool.map(one, [c for c in chosen if c.command == "gate"]):
            gates.append((case, found))
            if found:  # as they come: a long run cut short still shows what it found
                print(f"failing: {case.name}: {'; '.join(found)[:500]}", flush=True)
    tally, failing = Counter(), []
    for case, found in gates + commands:
        tally["cases"] += 1
        for key, label in LABELS:
            tally[label] += any(f.startswith(key) for f in found)
        if found:
            failing.append(f"{case.name} ({case.command}): {'; '.join(found)[:500]}")
    print(f"{tally['cases']} cases run, " + ", ".join(f"{tally[label]} {label}" for _, label in LABELS)
          + f"; {len(failing)} failing")
    for line in failing:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
