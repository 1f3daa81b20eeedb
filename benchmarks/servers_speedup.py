"""The same gate on one server and on two servers under `pytest -n 2`: wall time and speed-up.

Each llama-server (embedded build, SmolLM2-135M Q4_1) is launched by oracle itself, pinned to its
own core with `taskset -c {worker}` and one thread (`-t 1`), so two servers have two cores' worth
of compute and one server has one. The whole pytest command is timed, startup and report included.

    python benchmarks/servers_speedup.py --rounds 3 --max-tokens 128
    python benchmarks/servers_speedup.py --rounds 1 --max-tokens 4 --prompts 2     (CI's smoke size)
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from oracle.targets.embedded import default_model, embedded_command, llama_cpp_tools

DEFAULT_SUITE = Path(__file__).resolve().parents[1] / "prompts" / "default.jsonl"


def launch_command() -> str:
    tools = llama_cpp_tools()
    inner = embedded_command(tools, default_model(), "-t 1").removeprefix("exec ")
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in tools.env.items())
    return f"{env} exec taskset -c {{worker}} {inner}"


def gate(workdir: Path, workers: int, max_tokens: int, name: str, suite: Path) -> float:
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--backend=llamacpp-cpu",
            f"--launch={launch_command()}", "--canaries=none", f"--max-tokens={max_tokens}", f"--oracle-suite={suite}",
            f"--report-dir={workdir / name}"]
    if workers > 1:
        args += ["-n", str(workers)]
    start = time.perf_counter()
    done = subprocess.run(args, cwd=workdir, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{name}: pytest exited {done.returncode}\n{done.stdout[-3000:]}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--prompts", type=int, default=12, help="the first N prompts of the default suite (12)")
    a = ap.parse_args()
    if shutil.which("taskset") is None:
        raise SystemExit("taskset not found (util-linux): it pins each server to its own core")
    one, two = [], []
    with tempfile.TemporaryDirectory(prefix="oracle-bench-") as tmp:
        work = Path(tmp)
        (work / "pytest.ini").write_text("[pytest]\n")  # a rootdir of its own: not the project's testpaths
        lines = [line for line in DEFAULT_SUITE.read_text().splitlines() if line.strip()]
        if not 2 <= a.prompts <= len(lines):
            raise SystemExit(f"--prompts {a.prompts}: give 2 to {len(lines)} (two servers need two prompts)")
        suite = work / "suite.jsonl"
        suite.write_text("\n".join(lines[: a.prompts]) + "\n")
        for r in range(a.rounds):
            one.append(gate(work, 1, a.max_tokens, f"one-{r}", suite))
            two.append(gate(work, 2, a.max_tokens, f"two-{r}", suite))
            print(f"round {r + 1}: 1 server {one[-1]:.1f} s, 2 servers (-n 2) {two[-1]:.1f} s, "
                  f"speed-up {one[-1] / two[-1]:.2f}x", flush=True)
    ratios = [x / y for x, y in zip(one, two)]
    print(f"default suite ({a.prompts} prompts) x {a.max_tokens} tokens, {a.rounds} rounds; one thread per server, "
          f"each pinned to its own core")
    print(f"1 server: median {statistics.median(one):.1f} s; 2 servers: median {statistics.median(two):.1f} s")
    print(f"speed-up: median {statistics.median(ratios):.2f}x (min {min(ratios):.2f}, max {max(ratios):.2f})")


if __name__ == "__main__":
    main()
