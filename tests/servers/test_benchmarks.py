"""Every script in benchmarks/ runs, in a smoke size (one round, a few tokens), so none can rot unseen.

At this size, on a shared CI machine, their figures say little; they are printed to the log all the same."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

# script -> (its smallest arguments, a pattern for each figure it must print)
SMOKE = {
    "ladder_overhead.py": (["--levels", "2", "--rounds", "1", "--max-tokens", "8", "--prompts", "4"],
                           [r"^c2: 4 requests in 2 wave\(s\); oracle/bare wall-time ratio min [\d.]+ median [\d.]+",
                            r"achieved overlap min \d+ max \d+ of 2$"]),
    "html_report_size.py": (["--prompts", "4", "--tokens", "16", "--levels", "1,2"],
                            [r"identity\.html [\d.]+ MB, written in [\d.]+ s",
                             r"headless Chromium load .* median \d+ ms"]),
    "client_ingest.py": (["--levels", "8", "--requests", "16", "--rounds", "1", "--fidelity-requests", "1"],
                         [r"^llamacpp c8: oracle aiohttp [\d,]+ tok/s \([\d.]+ us CPU/token\), bare aiohttp [\d,]+ "
                          r"tok/s \([\d.]+ us CPU/token\), oracle httpx [\d,]+ tok/s \([\d.]+ us CPU/token\), bare "
                          r"httpx [\d,]+ tok/s \([\d.]+ us CPU/token\), bare aiohttp\+json [\d,]+ tok/s \([\d.]+ us "
                          r"CPU/token\); oracle/bare: aiohttp [\d.]+, httpx [\d.]+; oracle aiohttp / bare httpx "
                          r"[\d.]+; oracle aiohttp / bare aiohttp\+json [\d.]+;",
                          r"^vllm c8: oracle aiohttp [\d,]+ tok/s",
                          r"^llamacpp fidelity c1: conventional rate median [\d.]+ tok/s .* ok",
                          r"^vllm fidelity c64: conventional rate median [\d.]+ tok/s .* ok"]),
    "aa_control.py": (["--pairs", "1", "--rounds", "2", "--prompts", "1", "--max-tokens", "8", "--server-args", "-t 1"],
                      [r"^A/A control: [01] of 1 intervals excluded 1\.0 \(false-claim rate [01]/1 \(",
                       r"^A/B session \(the same config\): [\d.]+ \[[\d.]+, [\d.]+\] \([\w ]+\)"]),
    "aa_calibrate.py": ([str(BENCHMARKS / "fixtures" / "aa_passes_simulated.json")],  # 40 simulated passes, 1% CV
                        [r"^A/A sequential sessions: \d+ of \d+ passed \(false-claim rate \d+/\d+ \(",
                         r"^mean rounds per session [\d.]+; farthest A/A point"]),
    "sequential_simulation.py": (["--runs", "20"],
                                 [r"^1x cv 8% control 0: pass \d+/20 \(Wilson 95% [\d.]+-[\d.]+\)",
                                  r"^1\.5x cv 8% control 1: pass 20/20 .*; <= 2 rounds [\d.]+%"]),
    "chaos.py": (["--rounds", "1", "--seed", "0", "--max-tokens", "8", "--prompts", "2"],
                 [r"^faults injected: 1 \(server-kill 1\)$", r"^runs stopped cleanly: 1 of 1$",
                  r"^records lost: 0$", r"^servers left running: 0$", r"^input folders changed: 0$",
                  r"^tracebacks: 0$",
                  r"^clean gates after a fault that passed: 1 of 1$"]),
    "servers_speedup.py": (["--rounds", "1", "--max-tokens", "4", "--prompts", "2"],
                           [r"^round 1: 1 server [\d.]+ s, 2 servers \(-n 2\) [\d.]+ s", r"^speed-up: median [\d.]+x"]),
    "bad_inputs.py": (["--only", "seed-negative,diff-missing", "--jobs", "1"],
                      [r"^2 cases run, 0 tracebacks, 0 wrong exit codes, 0 silent acceptances, 0 changed input "
                       r"folders, 0 messages without the value; 0 failing$"]),
    "plugin_cost.py": (["--rounds", "1"],
                       [r"^one-test pytest session, median of 1: with oracle \d+ ms, without \(-p no:oracle\) \d+ ms; "
                        r"oracle's cost [-+]\d+ ms \(target: within 50 ms\)$",
                        r"^import oracle\.plugin alone: \d+ ms, \d+ oracle modules$"]),
    "fuzz_inputs.py": (["--examples", "1"],
                       [r"^references: 1 cases, \d+ tracebacks, \d+ wrong exit codes, \d+ changed input folders",
                        r"^total: 4 cases run, \d+ tracebacks, \d+ wrong exit codes, \d+ changed input folders, "
                        r"\d+ bad input taken to the server$"]),
}


def test_every_benchmark_has_a_smoke_size():
    assert sorted(p.name for p in BENCHMARKS.glob("*.py")) == sorted(SMOKE), "add the new script to SMOKE"


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(SMOKE))
def test_benchmark_runs_in_smoke_size(script, tmp_path, capsys):
    args, figures = SMOKE[script]
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=900)
    with capsys.disabled():  # the figures go to the log, as when the script is run by hand
        print(f"\n$ python benchmarks/{script} {' '.join(args)}\n{done.stdout.rstrip()}")
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    for pattern in figures:
        assert re.search(pattern, done.stdout, re.M), f"{script} printed no figure matching {pattern!r}:\n{done.stdout}"
