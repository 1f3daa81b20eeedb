"""The sequential speed test's A/A false-claim rate, from one config's alternating passes measured elsewhere (a device).

    python benchmarks/aa_calibrate.py PASSES [PASSES ...] [--bar 1.0] [--delta 0.03] [--alpha 0.05] [--beta 0.05] [--rounds-max 8]
                                     [--json OUT]

PASSES is a file of one config's pass rates (tok/s) in the order they were measured: a JSON list of numbers, one number
a line, or an identity.json whose `speed.interleave.passes` (their `median`s, in order) it reads. Consecutive passes
are paired into ABBA rounds (round 1 = passes 1, 2 as A, B; round 2 = passes 3, 4 as B, A; ...) and A/A sessions of the
sequential test run one after another over the rounds, each until it decides or reaches the cap
(`oracle.speed.sequential.aa_calibration`). Prints the false-claim rate (sessions that passed: the config declared
faster than itself) with its Wilson 95% interval, the decisions, the mean rounds and the farthest A/A point; exit 0
when it ran (the figure is a measurement, not a bar), 4 on an unreadable file. Several files (e.g. one per device run)
form their sessions apart (no session spans two runs) and the counts are summed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from oracle.speed.sequential import Sequential, aa_calibration, aa_summary


def read_passes(path: Path) -> list[float]:
    """The pass rates in order: a JSON list, an identity.json's interleaved passes, or one number a line."""
    text = path.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return [float(line.split()[0]) for line in text.splitlines() if line.strip() and not line.startswith("#")]
    if isinstance(data, list):
        return [float(x) for x in data]
    passes = ((data.get("speed") or {}).get("interleave") or {}).get("passes") or []
    return [float(p["median"]) for p in passes if p.get("median")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("passes", type=Path, nargs="+")
    ap.add_argument("--bar", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=0.03)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=0.05)
    ap.add_argument("--rounds-max", type=int, default=8)
    ap.add_argument("--json", type=Path, default=None, help="also write the sessions and counts here")
    a = ap.parse_args(argv)
    test = Sequential(bar=a.bar, delta=a.delta, alpha=a.alpha, beta=a.beta, rounds_max=a.rounds_max)
    runs = []
    for path in a.passes:
        try:
            rates = read_passes(path)
        except (OSError, ValueError, AttributeError, KeyError, TypeError) as exc:
            print(f"aa_calibrate: {path}: {exc}; give a JSON list of pass rates, one number a line, or an "
                  "identity.json with speed.interleave.passes", file=sys.stderr)
            return 4
        runs.append(aa_calibration(rates, test=test))
    out = runs[0] if len(runs) == 1 else aa_summary([s for run in runs for s in run["sessions"]],
                                                     sum(r["passes"] for r in runs), sum(r["rounds"] for r in runs),
                                                     test, runs=len(runs))
    for path, run in zip(a.passes, runs) if len(runs) > 1 else ():
        print(f"{path}: {run['words']}")
    print(out["words"])
    if not out["sessions"]:
        print("no A/A session: the passes ended before the first session decided or reached its cap; give more passes")
    else:
        print(f"mean rounds per session {out['mean_rounds']}; farthest A/A point +-{out['largest_point']:.2%}")
    if a.json is not None:
        a.json.write_text(json.dumps(out if len(runs) == 1 else {**out, "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
