"""The Wilson 95% score interval on a count k/n, as identity.json keeps it and as the reports write it.

    wilson_interval(7, 8)   # (0.5291..., 0.9776...)
    count_json(7, 8)        # {"k": 7, "n": 8, "wilson95": [0.5291, 0.9776]}
    count_words(7, 8)       # '7/8 (0.53–0.98)'

The score interval (Wilson 1927) inverts the normal test of a proportion, so it stays inside [0, 1],
never has zero width and keeps close to its nominal coverage even at 0/n and n/n, where the textbook
p ± z·sqrt(p(1-p)/n) collapses to a point (Newcombe 1998, method 3). A count of 12/12 exact prompts
is then read as "at least 0.76 of such prompts, at 95%", not as a certainty.
"""

from __future__ import annotations

from math import sqrt

__all__ = ["Z95", "count_json", "count_words", "interval_words", "wilson_interval"]

Z95 = 1.959963984540054  # the two-sided 95% normal quantile


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """(lower, upper) of the Wilson score interval for k successes in n trials; n = 0 gives (0.0, 1.0)."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"a count needs 0 <= k <= n, got {k}/{n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    # At k = 0 and k = n the closed form is 0 and 1 exactly; clamp the rounding error of the floats.
    return (0.0 if k == 0 else max(0.0, centre - half)), (1.0 if k == n else min(1.0, centre + half))


def count_json(k: int, n: int) -> dict:
    """A count as identity.json holds it: {"k", "n", "wilson95": [lower, upper]} (4 decimals)."""
    lo, hi = wilson_interval(k, n)
    return {"k": k, "n": n, "wilson95": [round(lo, 4), round(hi, 4)]}


def interval_words(k: int, n: int) -> str:
    """'0.53–0.98': the interval alone, 2 decimals."""
    lo, hi = wilson_interval(k, n)
    return f"{lo:.2f}–{hi:.2f}"


def count_words(k: int, n: int) -> str:
    """'7/8 (0.53–0.98)': the count and its Wilson 95% interval, for identity.md and the HTML."""
    return f"{k}/{n} ({interval_words(k, n)})"
