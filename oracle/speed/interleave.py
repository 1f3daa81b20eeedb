"""Interleaved A/B speed: the reference (A) and the candidate (B) measured alternately in one session, in ABBA
order, and the ratio's interval taken between runs, over paired rounds.

    abba_order(4)                                   # [("reference", "candidate"), ("candidate", "reference"), ...]
    between_run_ratio([(c1, r1), (c2, r2), ...])    # candidate / reference per round: ratio, ci95, rounds
    control_summary([pair["ci95"] for pair in aa])  # A/A pairs: how many intervals excluded 1.0 (Wilson 95%)

Why a t interval over paired rounds. The speed card's bootstrap interval resamples prompts of one run: it covers
prompt-to-prompt spread, not run-to-run drift (another boot, another thermal state, a neighbour on the machine).
Here each round measures both sides back to back (every prompt once, after a warm-up), so whatever drifts slowly
(clocks, heat, the load of a shared host) moves both halves of a round together and cancels in that round's
ratio. ABBA order puts A first in one round and B first in the next, so a steady trend over the session cancels
too. The rounds' log ratios d_i = ln(median_B,i / median_A,i) are then independent paired differences; their mean
is estimated with Student's t interval d̄ ± t(0.975, n-1) · s / √n and taken back by exp: the point is the geometric
mean of the per-round ratios, the interval its 95% interval (logs, because a ratio's spread is multiplicative).
The per-round median is the median over prompts of the decode rate (`Measurement.rates`); its spread over rounds
is shown as the coefficient of variation of each side (as AIPerf reports repeated profile runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from oracle.compare.confidence import count_json, count_words
from oracle.speed.validity import DIAGNOSTIC, HEADLINE, INSUFFICIENT, NOT_CREDIBLE

__all__ = ["BETWEEN_RUN", "CANDIDATE", "CONTROL", "FIGURE_WORDS", "MIN_ROUNDS", "Measurement", "REFERENCE",
           "WITHIN_RUN", "abba_order", "between_run_ratio", "control_summary", "interleaved_comparison",
           "round_medians", "t_quantile", "t_two_sided_cdf"]

REFERENCE, CANDIDATE, CONTROL = "reference", "candidate", "control"  # A, B, and A again (the A/A control)
BETWEEN_RUN, WITHIN_RUN = "between-run", "within-run"  # what an interval covers
MIN_ROUNDS = 2  # a t interval needs two paired rounds (a spread); more rounds, a narrower interval


@dataclass
class Measurement:
    """One side's pass in one round: each key's decode rate (today one key per suite prompt, every prompt once at
    c1; further keys, e.g. speed cells, join the same dict) and what makes the pass trustworthy."""

    rates: dict[str, float]  # key -> decode rate, tok/s (the figure named by `figure`)
    figure: str  # "conventional_tok_s" or "after_ttft_tok_s"
    wall_s: float = 0.0
    tokens: int = 0  # generated tokens received
    cache: str | None = None  # the pass's cache-zero verdict
    credible: list[str] = field(default_factory=list)  # why its timestamps are not credible (empty: credible)
    boot: int | None = None  # the server's boot this pass ran on

    @property
    def median(self) -> float | None:
        return float(np.median(list(self.rates.values()))) if self.rates else None

    def as_json(self) -> dict:
        return {"median": _r(self.median), "rates": {k: _r(v) for k, v in self.rates.items()}, "figure": self.figure,
                "wall_s": round(self.wall_s, 3), "tokens": self.tokens, "cache": self.cache,
                "credible": not self.credible, "not_credible": list(self.credible), "boot": self.boot}


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def abba_order(rounds: int, first: str = REFERENCE, second: str = CANDIDATE) -> list[tuple[str, str]]:
    """The interleaved schedule: round 1 A then B, round 2 B then A, and so on (ABBA ABBA ...)."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    return [(first, second) if i % 2 == 0 else (second, first) for i in range(rounds)]


def t_two_sided_cdf(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with integer df (Abramowitz & Stegun 26.7.3 / 26.7.4, exact finite sums)."""
    theta = math.atan(t / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 1:
        total, term = 0.0, math.cos(theta)
        for k in range(1, (df - 1) // 2 + 1):
            if k > 1:
                term *= c2 * (2 * k - 2) / (2 * k - 1)
            total += term
        return 2 / math.pi * (theta + (s * total if df > 1 else 0.0))
    total, term = 1.0, 1.0
    for k in range(1, df // 2):
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return s * total


def t_quantile(df: int, level: float = 0.95) -> float:
    """The two-sided `level` quantile of Student's t with df degrees of freedom (t(0.975, df) for 0.95), by
    bisection on the exact CDF; 12.706 for df 1, 2.776 for df 4, 1.96 as df grows."""
    if df < 1:
        raise ValueError(f"a t quantile needs df >= 1, got {df}")
    lo, hi = 0.0, 1.0
    while t_two_sided_cdf(hi, df) < level:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_two_sided_cdf(mid, df) < level else (lo, mid)
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2


def round_medians(candidate: Measurement, reference: Measurement) -> tuple[float, float, int] | None:
    """(candidate median, reference median, keys) over the keys both passes measured; None without one."""
    shared = [k for k in candidate.rates if k in reference.rates]
    if not shared:
        return None
    return (float(np.median([candidate.rates[k] for k in shared])),
            float(np.median([reference.rates[k] for k in shared])), len(shared))


def between_run_ratio(rounds: list[tuple[float, float]]) -> dict | None:
    """Candidate / reference over paired rounds of (candidate median, reference median): the geometric mean of the
    per-round ratios and its Student t 95% interval over the rounds' log ratios (see the module's words); None with
    fewer than MIN_ROUNDS rounds."""
    pairs = [(c, r) for c, r in rounds if c and r and c > 0 and r > 0]
    if len(pairs) < MIN_ROUNDS:
        return None
    cand, ref = np.asarray([c for c, _ in pairs]), np.asarray([r for _, r in pairs])
    logs = np.log(cand / ref)
    n = logs.size
    mean, sd = float(logs.mean()), float(logs.std(ddof=1))
    t = t_quantile(n - 1)
    half = t * sd / math.sqrt(n)
    ratios = cand / ref
    return {"median": _r(math.exp(mean)), "ci95": [_r(math.exp(mean - half)), _r(math.exp(mean + half))],
            "min": _r(float(ratios.min())), "max": _r(float(ratios.max())), "rounds": n,
            "per_round": [_r(float(x)) for x in ratios], "mean_log_ratio": _r(mean, 6), "sd_log_ratio": _r(sd, 6),
            "t_quantile": _r(t, 4), "candidate_median": _r(float(np.median(cand)), 3),
            "reference_median": _r(float(np.median(ref)), 3),
            # the ratio's own terms: the geometric mean of the paired ratios is exactly their quotient
            "candidate_geomean": _r(float(np.exp(np.log(cand).mean())), 3),
            "reference_geomean": _r(float(np.exp(np.log(ref).mean())), 3),
            "cv": {"candidate": _r(_cv(cand)), "reference": _r(_cv(ref))}}


def _cv(a: np.ndarray) -> float:
    """The coefficient of variation over rounds: standard deviation / mean."""
    return float(a.std(ddof=1) / a.mean()) if a.size > 1 and a.mean() > 0 else 0.0


def control_summary(intervals: list[list[float] | None], points: list[float | None] | None = None,
                    decisions: list[str | None] | None = None) -> dict:
    """The A/A control: pairs of the reference config against itself, each with its between-run interval, its point
    (the geometric mean of its rounds' ratios: where the identical config landed) and, in the sequential test, its
    decision. A false claim is a difference where there is none: an interval that excludes 1.0 (the fixed design) or
    a sequential `pass`; its rate over the pairs is the count k/n with its Wilson 95% interval. A pair without an
    interval (too few rounds) is counted apart."""
    judged = [ci for ci in intervals if ci]
    out = {"pairs": len(intervals), "judged": len(judged), "intervals": [list(ci) for ci in judged],
           "points": [p for p in points or [] if p]}
    if decisions:
        decided = [d for d in decisions if d]
        false = sum(d == "pass" for d in decided)
        out.update(decisions=list(decided), passed=false, false_claim_rate=count_json(false, len(decided)))
        out["words"] = (f"A/A control: {false} of {len(decided)} sequential sessions passed (false-claim rate "
                        f"{count_words(false, len(decided))}, nominal alpha); decisions "
                        + ", ".join(decided) + "; points " + ", ".join(f"{p:.4f}" for p in out["points"]))
        return out
    excluded = [ci for ci in judged if ci[0] > 1.0 or ci[1] < 1.0]
    out.update(excluded_one=len(excluded), false_claim_rate=count_json(len(excluded), len(judged)))
    out["words"] = (f"A/A control: {len(excluded)} of {len(judged)} intervals excluded 1.0 (false-claim rate "
                    f"{count_words(len(excluded), len(judged))}, nominal 0.05)")
    return out


FIGURE_WORDS = {"conventional_tok_s": "conventional decode 99/(t100-t1)",
                "after_ttft_tok_s": "post-first decode (n-1)/(tn-t1)"}


def interleaved_comparison(pairs: list[tuple[Measurement, Measurement]], *, diagnostics: list[str],
                           launch: dict | None, figure: str, test=None) -> dict:
    """The speed comparison of an interleaved session (the card's `vs_reference`): label, reasons, the between-run
    ratio of each round's (candidate, reference) pair. `not credible` when any pass's timestamps are not (no
    number), `diagnostic` with the reasons (history-based speculation, a pass whose cache-zero is not proven, no
    warm-up), `insufficient` under MIN_ROUNDS rounds with rates, else `headline`. The unit is the round, not the
    prompt: the interval needs paired rounds, not a count of long prompts. `test` (speed/sequential.py's Sequential):
    its run over the rounds' log ratios is kept as `sequential` (the decision, the LLR path, the bounds)."""
    out = {"label": HEADLINE, "reasons": [], "median": None, "ci95": None, "min": None, "max": None, "prompts": 0,
           "interval": BETWEEN_RUN, "figure": figure, "figure_words": FIGURE_WORDS.get(figure, figure),
           "method": "Student t 95% interval over the rounds' log ratios of median decode rates (paired rounds, "
                     "ABBA order)", "notes": []}
    if launch is not None:
        out["launch"] = launch["label"]
        out["launch_changes"] = {"speculation": launch["speculation"], "other": launch["other"]}
    sides = ((CANDIDATE, [c for c, _ in pairs]), (REFERENCE, [r for _, r in pairs]))
    unbelievable = [f"{side} round {i + 1}: {why}" for side, ms in sides for i, m in enumerate(ms) for why in m.credible]
    if unbelievable:
        out["label"], out["reasons"] = NOT_CREDIBLE, unbelievable
        return out
    reasons = list(diagnostics)
    reasons += [f"{side} round {i + 1}: cache-zero not proven (cache-zero {m.cache or 'not measured'})"
                for side, ms in sides for i, m in enumerate(ms) if m.cache not in ("pass", None)]
    medians = [round_medians(c, r) for c, r in pairs]
    ratio = between_run_ratio([(m[0], m[1]) for m in medians if m])
    if ratio is not None:
        out.update(ratio)
        out["prompts"] = min(m[2] for m in medians if m)
        if test is not None:
            both = [(math.log(m[0]), math.log(m[1])) for m in medians if m and m[0] > 0 and m[1] > 0]
            out["sequential"] = test.run([c - r for c, r in both], [c + r for c, r in both])  # sequential.round_logs
    if figure != "conventional_tok_s":
        out["notes"].append("the suite's completions are under 101 tokens: each pass's rate is the post-first decode "
                            "rate (n-1)/(tn-t1), not the conventional 99/(t100-t1)")
    if ratio is None:
        reasons.append(f"{sum(m is not None for m in medians)} round(s) gave a rate on both sides; an interval "
                       f"needs {MIN_ROUNDS}")
        out["label"] = INSUFFICIENT if not diagnostics else DIAGNOSTIC
    elif reasons:
        out["label"] = DIAGNOSTIC
    out["reasons"] = reasons
    return out
