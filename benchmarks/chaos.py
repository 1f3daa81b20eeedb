"""The chaos run over N seeded rounds: a ladder-and-boots gate on the embedded llama-server (3 prompts x
32 tokens, `--ladder 1,2 --boots 2`), one fault per round at a seeded moment (the server killed or frozen, its
connections cut, the report's files unable to grow, oracle killed or interrupted), each followed by a clean
gate.

    python benchmarks/chaos.py --rounds 12 --seed 1 [--max-tokens 32] [--prompts 3]
    python benchmarks/chaos.py --rounds 1 --seed 0 --max-tokens 8 --prompts 2      (CI's smoke size)

Prints the faults injected, the runs that stopped cleanly (the documented exit code, the cause named, every
record intact and listed), records lost, servers left running, input folders changed, tracebacks, and the
clean gates after a fault that passed; with every broken promise and the seed that reproduces it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))
from chaos import FAULTS, FREEZE_TIMEOUT_S, Chaos, tree_digest  # noqa: E402

SUITE = Path(__file__).resolve().parents[1] / "prompts" / "default.jsonl"


def record_reference(work: Path, suite: Path, max_tokens: int) -> Path:
    """The reference the rounds gate against, recorded on the embedded llama-server."""
    ref = work / "ref"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--backend=llamacpp", f"--oracle-suite={suite}", f"--max-tokens={max_tokens}",
                           "--canaries=none", f"--record={ref}", f"--report-dir={work / 'rec'}",
                           "--rootdir", str(work)],
                          cwd=work, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"recording the reference failed ({done.returncode}):\n{done.stdout[-3000:]}")
    return ref


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=len(FAULTS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--prompts", type=int, default=3, help="the default suite's first N prompts (default: 3)")
    ap.add_argument("--freeze-timeout", type=int, default=FREEZE_TIMEOUT_S,
                    help="--request-timeout of the freeze rounds at least (3 times the clean gate's slowest "
                         "request when that is more)")
    a = ap.parse_args()
    outcomes, next_runs = [], 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="oracle-chaos-") as tmp:
        work = Path(tmp)
        (work / "pytest.ini").write_text("[pytest]\n")
        suite = work / "tiny.jsonl"
        suite.write_text("".join(line + "\n" for line in SUITE.read_text().splitlines()[:a.prompts]))
        ref = record_reference(work, suite, a.max_tokens)
        inputs = {"suite": suite.read_bytes(), "reference": json.dumps(tree_digest(ref))}
        chaos = Chaos(work, suite=suite, reference=ref, max_tokens=a.max_tokens,
                      freeze_timeout_s=a.freeze_timeout)
        plan = chaos.clean("baseline")
        for i in range(a.rounds):
            fault = FAULTS[(a.seed + i) % len(FAULTS)]
            outcome = chaos.round(fault, seed=a.seed + i, plan=plan)
            outcomes.append(outcome)
            print(f"round {i + 1}: {fault} (seed {a.seed + i}, {outcome.moment}): exit {outcome.exit_code}, "
                  f"{outcome.records} record(s) on disk, "
                  f"{'stopped cleanly' if outcome.stopped_cleanly else 'PROBLEMS'} ({outcome.seconds:.1f} s)",
                  flush=True)
            for problem in outcome.problems:
                print(f"  {problem}")
            try:
                chaos.clean(f"next-{i + 1}")
                next_runs += 1
            except AssertionError as exc:
                print(f"  the clean gate after it failed: {str(exc)[:2000]}")
        changed = {"suite": suite.read_bytes(), "reference": json.dumps(tree_digest(ref))} != inputs
    n = len(outcomes)
    kinds = Counter(o.fault for o in outcomes)
    print(f"faults injected: {n} ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")
    print(f"runs stopped cleanly: {sum(o.stopped_cleanly for o in outcomes)} of {n}")
    print(f"records lost: {sum(len(o.lost) for o in outcomes)}")
    print(f"servers left running: {sum(o.servers_left for o in outcomes)}")
    print(f"input folders changed: {sum(o.input_changed for o in outcomes) + changed}")
    print(f"tracebacks: {sum(o.traceback for o in outcomes)}")
    print(f"clean gates after a fault that passed: {next_runs} of {n}")
    print(f"wall time: {time.monotonic() - started:.0f} s (seed {a.seed})")


if __name__ == "__main__":
    main()
