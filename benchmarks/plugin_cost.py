"""What oracle costs a pytest session that does not use it: a one-test pytest run of an unrelated project, with the
plugin loaded (as its `pytest11` entry point loads it wherever oracle is installed) and without (`-p no:oracle`).

    python benchmarks/plugin_cost.py [--rounds 15]

Each round runs both sessions, in turn, as fresh processes in a temporary project that holds one test; prints the
median wall time of each, their difference (the target: within 50 ms), and what `import oracle.plugin` costs alone
(its time and the oracle modules it imports). Other plugins installed beside oracle load in both sessions alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_TARGET_MS = 50


def _session(project: Path, extra: list[str]) -> float:
    """Wall seconds of one pytest session in `project` (a fresh process)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra], cwd=project,
                          capture_output=True, text=True, env={**os.environ, "PYTEST_ADDOPTS": ""})
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pytest {' '.join(extra)} exited {done.returncode}:\n"
                         f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return took


def _import_alone(project: Path) -> tuple[float, int]:
    """Seconds `import oracle.plugin` takes in a fresh process after pytest itself, and the oracle modules it
    imports (run in `project`: `python -c` puts its folder first on sys.path, and a checkout's own oracle would win
    over the one the sessions load)."""
    code = ("import sys, time, pytest; t = time.perf_counter(); import oracle.plugin; "
            "print(time.perf_counter() - t, sum(m.startswith('oracle') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[0]), int(out[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        (project / "pytest.ini").write_text("[pytest]\n")  # the project's own root: no parent ini is read
        _session(project, [])  # warm the file cache once, not counted
        with_oracle, without = [], []
        for _ in range(args.rounds):
            with_oracle.append(_session(project, []))
            without.append(_session(project, ["-p", "no:oracle"]))
        seconds, modules = _import_alone(project)
    a, b = statistics.median(with_oracle) * 1000, statistics.median(without) * 1000
    print(f"one-test pytest session, median of {args.rounds}: with oracle {a:.0f} ms, without (-p no:oracle) "
          f"{b:.0f} ms; oracle's cost {a - b:+.0f} ms (target: within {_TARGET_MS} ms)")
    print(f"import oracle.plugin alone: {seconds * 1000:.0f} ms, {modules} oracle modules")
    # With PYTHONDONTWRITEBYTECODE set no .pyc is written, and a module without one is compiled in every session:
    # measured +80 ms against +55 ms with the bytecode cache (one 2-core host, 2026-12-07).
    off = "off (PYTHONDONTWRITEBYTECODE is set: a module without its .pyc is compiled in every session)"
    print("bytecode cache: " + (off if sys.flags.dont_write_bytecode else "on"))


if __name__ == "__main__":
    main()
