"""The A/A false-claim rate of the interleaved between-run interval, measured on the embedded llama-server.

    python benchmarks/aa_control.py [--pairs 20] [--rounds 4] [--prompts 2] [--max-tokens 24] [--servers both-up]
                                    [--server-args "-t 1"]

Records a reference of the default suite's first `--prompts` prompts with the embedded llama-server started by
--launch (so its manifest keeps the command), then gates the same config against it with
`--reference-launch recorded --speed-control PAIRS`: PAIRS interleaved A/A sessions of the reference config
against itself, each of `--rounds` ABBA rounds with its Student t 95% interval. Prints how many intervals excluded
1.0 (false claims; nominal 5%) with the Wilson 95% interval of that rate, the A/B session's interval, and the
report folder. Exit 0 when it ran (the figure is a measurement, not a bar).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from oracle.targets.cache import default_model
from oracle.targets.embedded import embedded_command, llama_cpp_tools

REPO = Path(__file__).resolve().parents[1]


def gate(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--backend=llamacpp", "--canaries=none",
           *args]
    return subprocess.run(cmd, cwd=folder, capture_output=True, text=True, env=env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--prompts", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=24)
    ap.add_argument("--servers", default="both-up", choices=("both-up", "one-at-a-time"))
    ap.add_argument("--server-args", default="", help="llama-server flags beside the embedded default's, e.g. -t 1")
    ap.add_argument("--folder", type=Path, default=None, help="where the reference and report go (default: a temp dir)")
    a = ap.parse_args()
    folder = a.folder or Path(tempfile.mkdtemp(prefix="oracle-aa-"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n")
    rows = (REPO / "prompts" / "default.jsonl").read_text().splitlines()[:a.prompts]
    (folder / "suite.jsonl").write_text("\n".join(rows) + "\n")
    tools = llama_cpp_tools()
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in tools.env.items())
    launch = f"{env} {embedded_command(tools, default_model(), a.server_args).removeprefix('exec ')}"
    common = (f"--launch={launch}", "--oracle-suite=suite.jsonl", f"--max-tokens={a.max_tokens}")
    t0 = time.monotonic()
    rec = gate(folder, *common, "--record=ref", "--record-overwrite", "--report-dir=rec")
    if rec.returncode != 0:
        print(rec.stdout[-3000:], rec.stderr[-2000:])
        return 2
    run = gate(folder, *common, "--reference=ref", "--reference-launch=recorded", f"--speed-rounds={a.rounds}",
               f"--speed-control={a.pairs}", f"--interleave-servers={a.servers}", "--report-dir=aa")
    wall = time.monotonic() - t0
    report = folder / "aa" / "identity.json"
    if not report.exists():
        print(run.stdout[-3000:], run.stderr[-2000:])
        return 2
    speed = json.loads(report.read_text())["speed"]
    control, versus = speed["interleave"]["control"], speed["vs_reference"]
    print(control["words"])
    print("A/A intervals:", ", ".join(f"[{lo:.3f}, {hi:.3f}]" for lo, hi in control["intervals"]))
    print(f"A/B session (the same config): {versus.get('median')} {versus.get('ci95')} ({versus['label']})")
    print(f"{a.pairs} pairs x {a.rounds} rounds, {a.prompts} prompts x {a.max_tokens} tokens, {a.servers}, "
          f"server args {a.server_args or 'none'}; "
          f"{wall:.0f} s; report {folder / 'aa'} (gate exit {run.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
