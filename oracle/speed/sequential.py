"""The sequential speed test: after each interleaved ABBA round, a generalized sequential probability ratio test (as
fishtest decides Stockfish patches) on the rounds' paired log ratios, stopping when its log-likelihood ratio (LLR)
leaves Wald's bounds.

    test = Sequential(bar=1.2, delta=0.03, alpha=0.05, beta=0.05, rounds_max=8)
    result = test.run([0.41, 0.39])          # log(candidate / reference) of each round so far
    result["decision"]                       # "pass", "fail", "inconclusive" (the cap), or "continue"
    result["path"]                           # [{"round": 2, "llr": 3.1, "ratio": 1.49}, ...]; result["bounds"]

The hypotheses, on the speed-up r = candidate / reference (the geometric mean of the rounds' ratios estimates it):
H0 "r <= bar" against H1 "r >= bar x (1 + delta)", the indifference zone (bar, bar x (1 + delta)) above the bar.
Accepting H1 is `pass`, accepting H0 is `fail`; reaching `rounds_max` rounds is `inconclusive` with the rounds and the
LLR. Wald's bounds: log(beta / (1 - alpha)) below, log((1 - beta) / alpha) above.

The LLR. Each round's log ratio d_i is taken as normal with unknown spread (paired rounds cancel shared drift; logs
because a speed ratio's spread is multiplicative). With a known spread the generalized LLR of the composite
hypotheses is (z0+^2 - z1-^2) / 2, z_j = (mean(d) - log(theta_j)) / (sigma / sqrt(n)), z0+ = max(z0, 0),
z1- = min(z1, 0). The spread is estimated, so each z is calibrated: it is the normal quantile of the one-sided
Student t tail of the t statistic at the spread's degrees of freedom. A plug-in spread (z = t) would make two close
rounds look certain (an identical config passed in 11% of simulated sessions at 8% pass-to-pass noise).

The spread (`spread`): the rounds' ratios give n - 1 degrees of freedom, too few for two rounds to decide a clear
case (t with 1 df must reach 41 for Wald's bound). Pooled with them: the rounds' levels ln(candidate) + ln(reference)
(another n - 1: under independent pass noise a level varies as much as a ratio, and drift both passes of a round
share only widens it), and with `prior`, the A/A control's spread measured before the A/B session (`control_prior`).
Figures: docs/speed.md, "Where the spread comes from"; benchmarks/sequential_simulation.py.

`aa_calibration(rates)` turns a file of alternating passes of one config into A/A sessions judged by the same test:
the false-claim rate (sessions that passed) with its Wilson 95% interval (benchmarks/aa_calibrate.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Sequence

import numpy as np

from oracle.compare.confidence import count_json, count_words
from oracle.speed.interleave import t_two_sided_cdf
from oracle.speed.sequential_defaults import (DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_DELTA, DEFAULT_ROUNDS_MAX,
                                              MIN_ROUNDS)

__all__ = ["CONTINUE", "DEFAULT_ALPHA", "DEFAULT_BETA", "DEFAULT_DELTA", "DEFAULT_ROUNDS_MAX", "MIN_ROUNDS",
           "Sequential", "aa_calibration", "aa_summary", "calibrated_z", "control_prior", "llr", "path_words", "round_logs",
           "simulate", "spread", "verdict_words"]

CONTINUE = "continue"
_Z_CAP = 8.0  # a z beyond 8 is certainty in any float; keeps a zero spread finite
_NORMAL = NormalDist()


def calibrated_z(t: float, df: int) -> float:
    """The normal quantile with the same one-sided tail as Student's t statistic `t` at `df` degrees of freedom."""
    if not math.isfinite(t):
        return math.copysign(_Z_CAP, t)
    tail = (1.0 - t_two_sided_cdf(abs(t), df)) / 2
    if tail <= 1e-15:
        return math.copysign(_Z_CAP, t)
    return math.copysign(min(-_NORMAL.inv_cdf(tail), _Z_CAP), t)


def spread(logs: Sequence[float], levels: Sequence[float] | None = None,
           prior: tuple[float, int] | None = None) -> tuple[float, int]:
    """The variance of one round's log ratio and its degrees of freedom: the rounds' ratios (n - 1 df); with each
    round's level ln(candidate) + ln(reference), pooled with the level's spread (another n - 1 df: under independent
    pass noise the level varies exactly as much as the ratio, and drift both sides share only widens it, so the pool
    is never narrower than the truth); with `prior` (the A/A control's (variance, df)), pooled with it too."""
    x = np.asarray(logs, dtype=float)
    n = x.size
    ss, df = float(x.var(ddof=1)) * (n - 1), n - 1
    if levels is not None and len(levels) == n:
        ss, df = ss + float(np.var(np.asarray(levels, dtype=float), ddof=1)) * (n - 1), df + n - 1
    if prior is not None and prior[1] > 0:
        ss, df = ss + prior[0] * prior[1], df + int(prior[1])
    return ss / df, df


def llr(logs: Sequence[float], bar: float, delta: float, *, levels: Sequence[float] | None = None,
        prior: tuple[float, int] | None = None) -> float:
    """The calibrated generalized LLR of H1 (r >= bar (1 + delta)) against H0 (r <= bar) over the rounds' log
    ratios (the spread from `spread`); needs MIN_ROUNDS rounds."""
    x = np.asarray(logs, dtype=float)
    n = x.size
    if n < MIN_ROUNDS:
        raise ValueError(f"the sequential test needs {MIN_ROUNDS} rounds, got {n}")
    var, df = spread(x, levels, prior)
    mean = float(x.mean())
    se = max(math.sqrt(var), 1e-12) / math.sqrt(n)
    z0 = calibrated_z((mean - math.log(bar)) / se, df)
    z1 = calibrated_z((mean - math.log(bar * (1 + delta))) / se, df)
    return 0.5 * (max(z0, 0.0) ** 2 - min(z1, 0.0) ** 2)


def round_logs(medians: Sequence) -> tuple[list[float], list[float]]:
    """The rounds' log ratios ln(candidate / reference) and levels ln(candidate) + ln(reference), from each round's
    (candidate median, reference median, ...) (interleave.round_medians); rounds without both rates left out."""
    both = [(math.log(m[0]), math.log(m[1])) for m in medians if m and m[0] and m[1] and m[0] > 0 and m[1] > 0]
    return [c - r for c, r in both], [c + r for c, r in both]


def control_prior(sessions: Sequence[tuple[Sequence[float], Sequence[float]]]) -> tuple[float, int] | None:
    """The A/A control's spread as a prior for the A/B session: each session's (log ratios, levels) pooled (its
    rounds - 1 df each); None without a session of MIN_ROUNDS rounds."""
    ss, df = 0.0, 0
    for logs, levels in sessions:
        if len(logs) >= MIN_ROUNDS:
            var, k = spread(logs, levels)
            ss, df = ss + var * k, df + k
    return (ss / df, df) if df else None


@dataclass(frozen=True)
class Sequential:
    """The test's settings: the bar (--min-speedup, 1.0 when not given), the indifference zone, alpha, beta, the
    round cap (--speed-rounds-max)."""

    bar: float = 1.0
    delta: float = DEFAULT_DELTA
    alpha: float = DEFAULT_ALPHA
    beta: float = DEFAULT_BETA
    rounds_max: int = DEFAULT_ROUNDS_MAX
    prior: tuple[float, int] | None = None  # the A/A control's (variance, df) of a round's log ratio; control_prior

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's (lower, upper): accept H0 at or below the lower, H1 at or above the upper."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    @property
    def split_bounds(self) -> tuple[float, float]:
        """Wald's bounds at alpha / 2 and beta / 2: each of two tests' (the paired spread's, the pooled spread's), so
        that the two together err in at most alpha and beta (Bonferroni)."""
        return replace(self, alpha=self.alpha / 2, beta=self.beta / 2).bounds

    def run(self, logs: Sequence[float], levels: Sequence[float] | None = None) -> dict:
        """The test over the rounds so far, stopping at the first round whose LLR leaves the bounds: the decision,
        the rounds it used, its LLR, and the LLR path by round (identity.json's `vs_reference.sequential`). With
        `levels` (each round's ln(candidate) + ln(reference)) two LLRs each round, one on the ratios' spread
        ("paired"), one on the ratios' and levels' pooled ("pooled"), each against the split bounds: a decision when
        one leaves them and the other does not leave them the other way; the path keeps both, and `llr` is the
        one with the stronger evidence."""
        split = levels is not None and len(levels) == len(logs)
        lower, upper = self.split_bounds if split else self.bounds
        path, decision, used = [], CONTINUE, len(logs)
        for n in range(MIN_ROUNDS, len(logs) + 1):
            values = {"paired": llr(logs[:n], self.bar, self.delta, prior=self.prior)}
            if split:
                values["pooled"] = llr(logs[:n], self.bar, self.delta, levels=levels[:n], prior=self.prior)
            high, low = max(values.values()), min(values.values())
            path.append({"round": n, "llr": round(high if high >= -low else low, 4),
                         "ratio": round(math.exp(float(np.mean(logs[:n]))), 4),
                         **({"llrs": {k: round(v, 4) for k, v in values.items()}} if split else {})})
            if (high >= upper) != (low <= lower):  # one way out, and not both ways at once
                decision, used = ("pass" if high >= upper else "fail"), n
                break
        else:
            if len(logs) >= self.rounds_max:
                decision, used = "inconclusive", len(logs)
        return {"decision": decision, "rounds": used, "llr": path[-1]["llr"] if path else None,
                "bounds": [round(lower, 4), round(upper, 4)], "path": path, "bar": self.bar, "delta": self.delta,
                "alpha": self.alpha, "beta": self.beta, "rounds_max": self.rounds_max,
                "h0": f"speed-up <= {self.bar:g}", "h1": f"speed-up >= {self.bar * (1 + self.delta):.4g} "
                                                         f"({self.bar:g} x (1 + {self.delta:g}))",
                "method": "generalized SPRT on the rounds' paired log ratios, each z calibrated by Student's t",
                "spread": self._spread_words(len(logs), split)}

    def _spread_words(self, n: int, split: bool) -> str:
        """Where the spread came from and its degrees of freedom at the last round."""
        prior = f" and the A/A control's ({self.prior[1]} df)" if self.prior is not None and self.prior[1] > 0 else ""
        df = max(n - 1, 0)
        if not split:
            return f"spread from the rounds' ratios ({df} df){prior}"
        return (f"two spreads, each test at alpha/2 and beta/2 (Bonferroni): the rounds' ratios ({df} df){prior}; "
                f"the ratios' pooled with the rounds' levels ({2 * df} df){prior}")


def verdict_words(seq: dict) -> str:
    """'sequential test: pass after 2 rounds (LLR 4.41 >= 3.66; H1 speed-up >= 1.03)', or inconclusive at the cap."""
    lower, upper = seq["bounds"]
    if seq["decision"] == "pass":
        return f"sequential test: pass after {seq['rounds']} rounds (LLR {seq['llr']:.2f} >= {upper:.2f}; {seq['h1']})"
    if seq["decision"] == "fail":
        return f"sequential test: fail after {seq['rounds']} rounds (LLR {seq['llr']:.2f} <= {lower:.2f}; {seq['h0']})"
    llr_now = "no LLR" if seq["llr"] is None else f"LLR {seq['llr']:.2f}"
    return (f"sequential test: {seq['decision']} after {seq['rounds']} of at most {seq['rounds_max']} rounds "
            f"({llr_now}, bounds [{lower:.2f}, {upper:.2f}])")


def path_words(seq: dict) -> str:
    """'LLR by round: r2 1.23 (1.49x), r3 3.05 (1.50x); bounds [-3.66, 3.66]': the path the decision took."""
    steps = ", ".join(f"r{p['round']} {p['llr']:.2f} ({p['ratio']:.4g}x)" for p in seq["path"]) or "none yet"
    return f"LLR by round: {steps}; bounds [{seq['bounds'][0]:.2f}, {seq['bounds'][1]:.2f}]"


def simulate(ratio: float, cv: float, runs: int, *, test: Sequential = Sequential(), seed: int = 0,
             control: int = 0, drift: float = 0.0) -> dict:
    """`runs` sessions of the test on simulated passes: each pass's rate is the side's true rate times
    exp(N(0, cv)) (pass-to-pass coefficient of variation ~cv), and each round's two passes share a drift
    exp(N(0, drift)) (0: none, the hardest case for the pairing); with `control` A/A sessions measured first (each
    until it decides or reaches the cap), their spread is the A/B session's prior (`control_prior`). The decisions
    counted, with each decision's rounds."""
    rng = np.random.default_rng(seed)
    out = {"pass": [], "fail": [], "inconclusive": []}
    for _ in range(runs):
        sessions = []
        for _ in range(control):
            logs, levels = _simulated_rounds(rng, 1.0, cv, drift, test.rounds_max)
            used = test.run(logs, levels)["rounds"]
            sessions.append((logs[:used], levels[:used]))
        run_test = replace(test, prior=control_prior(sessions)) if sessions else test
        result = run_test.run(*_simulated_rounds(rng, ratio, cv, drift, test.rounds_max))
        out[result["decision"]].append(result["rounds"])
    return {k: {"count": count_json(len(v), runs), "rounds": v} for k, v in out.items()}


def _simulated_rounds(rng: np.random.Generator, ratio: float, cv: float, drift: float,
                      rounds: int) -> tuple[list[float], list[float]]:
    """One session's rounds: the log ratios ln(candidate / reference) and levels ln(candidate) + ln(reference)."""
    noise, shared = rng.normal(0.0, cv, size=(rounds, 2)), rng.normal(0.0, drift, size=rounds)
    cand, ref = math.log(ratio) + noise[:, 0] + shared, noise[:, 1] + shared
    return list(cand - ref), list(cand + ref)


def aa_calibration(rates: Sequence[float], *, test: Sequential = Sequential()) -> dict:
    """A/A sessions from alternating passes of one config (pass 1, 2, 3, ... in the order measured): the passes are
    read as ABBA rounds (round 1 = passes 1, 2 as A, B; round 2 = passes 3, 4 as B, A; ...), and each session runs
    the sequential test round after round until it decides or reaches the cap; the next session starts at the next
    round. A session that passes is a false claim (the config against itself, declared faster). A tail too short
    for MIN_ROUNDS rounds is left out."""
    rates = [float(x) for x in rates if x and float(x) > 0]
    rounds, levels = [], []
    for i in range(0, len(rates) - 1, 2):
        first, second = rates[i], rates[i + 1]
        a, b = (first, second) if (i // 2) % 2 == 0 else (second, first)
        rounds.append(math.log(b / a))
        levels.append(math.log(a) + math.log(b))
    sessions, start = [], 0
    while len(rounds) - start >= MIN_ROUNDS:
        logs = rounds[start:start + test.rounds_max]
        result = test.run(logs, levels[start:start + test.rounds_max])
        if result["decision"] == CONTINUE:  # the file ended before this session decided
            break
        sessions.append({"first_round": start + 1, **{k: result[k] for k in ("decision", "rounds", "llr")},
                         "ratio": result["path"][-1]["ratio"]})
        start += result["rounds"]
    return aa_summary(sessions, len(rates), len(rounds), test)


def aa_summary(sessions: list[dict], passes: int, rounds: int, test: Sequential, *, runs: int = 1) -> dict:
    """A/A sessions counted: the false-claim rate with its Wilson interval, the decisions, the farthest point. Sessions
    of several runs (each run's formed apart, `aa_calibration`) are counted together with `runs` > 1."""
    passed = sum(s["decision"] == "pass" for s in sessions)
    counts = {d: sum(s["decision"] == d for s in sessions) for d in ("pass", "fail", "inconclusive")}
    points = [abs(math.log(s["ratio"])) for s in sessions]
    over = f" over {runs} runs" if runs > 1 else ""
    return {"passes": passes, "rounds": rounds, "sessions": sessions, "decisions": counts,
            "false_claim_rate": count_json(passed, len(sessions)),
            "largest_point": round(math.exp(max(points)) - 1, 5) if points else None,
            "mean_rounds": round(float(np.mean([s["rounds"] for s in sessions])), 3) if sessions else None,
            "words": (f"A/A sequential sessions{over}: {passed} of {len(sessions)} passed (false-claim rate "
                      f"{count_words(passed, len(sessions))}, nominal {test.alpha:g}); decisions {counts}; "
                      f"{passes} passes, {rounds} rounds")}
