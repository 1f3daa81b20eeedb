"""The sequential speed test on seeded simulated passes: each case's decisions, the identical config's pass rate with
its Wilson 95% interval, and how often a session decided within 2 rounds.

    python benchmarks/sequential_simulation.py [--runs 1000] [--seed 11] [--rounds-max 8] [--delta 0.03]

Cases: an identical config (1.0x), a 1.5x speed-up and a 0.8x slow-down at 1% and 8% pass-to-pass CV, each alone and
after one A/A control measured first (its spread the A/B session's prior), and the identical config under a drift
both sides of a round share (`oracle.speed.sequential.simulate`). Exit 0 when it ran (the figures are measurements).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from oracle.speed.sequential import Sequential, simulate


def line(name: str, sim: dict, runs: int) -> str:
    """'1.5x cv 8% control 1: pass 1000/1000 (Wilson 95% 0.996-1.000), fail 0, inconclusive 0; <= 2 rounds 98.8%'."""
    rounds = np.array([n for block in sim.values() for n in block["rounds"]])
    lo, hi = sim["pass"]["count"]["wilson95"]
    return (f"{name}: pass {sim['pass']['count']['k']}/{runs} (Wilson 95% {lo:.3f}-{hi:.3f}), "
            f"fail {sim['fail']['count']['k']}, inconclusive {sim['inconclusive']['count']['k']}; "
            f"<= 2 rounds {np.mean(rounds <= 2):.1%}, median {np.median(rounds):g}, at most {rounds.max()}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--rounds-max", type=int, default=8)
    ap.add_argument("--delta", type=float, default=0.03)
    a = ap.parse_args(argv)
    test = Sequential(delta=a.delta, rounds_max=a.rounds_max)
    for cv in (0.01, 0.08):
        for control in (0, 1):
            for ratio in (1.0, 1.5, 0.8):
                sim = simulate(ratio, cv, a.runs, test=test, seed=a.seed, control=control)
                print(line(f"{ratio:g}x cv {cv:.0%} control {control}", sim, a.runs))
        sim = simulate(1.0, cv, a.runs, test=test, seed=a.seed, drift=cv)
        print(line(f"1x cv {cv:.0%} shared drift {cv:.0%}", sim, a.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
