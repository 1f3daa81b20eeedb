"""The Wilson 95% interval against a published table, and its JSON and words forms."""

from __future__ import annotations

from math import sqrt

import pytest

from oracle.compare.confidence import Z95, count_json, count_words, interval_words, wilson_interval

# Newcombe RG (1998), "Two-sided confidence intervals for the single proportion: comparison of seven
# methods", Statistics in Medicine 17:857-872, Table I, method 3 (score method without continuity
# correction): k/n -> (lower, upper) to 4 decimals.
NEWCOMBE_TABLE_I = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize("k,n,lower,upper", NEWCOMBE_TABLE_I, ids=[f"{k}/{n}" for k, n, *_ in NEWCOMBE_TABLE_I])
def test_wilson_interval_matches_newcombe_table_i(k, n, lower, upper):
    lo, hi = wilson_interval(k, n)
    assert round(lo, 4) == lower and round(hi, 4) == upper
    assert count_json(k, n) == {"k": k, "n": n, "wilson95": [lower, upper]}


def _by_the_quadratic(k: int, n: int, z: float) -> tuple[float, float]:
    # Wilson's own form: the p for which |k/n - p| = z sqrt(p(1-p)/n), the roots of a quadratic in p.
    a = 1 + z * z / n
    b = -(2 * k / n + z * z / n)
    c = (k / n) ** 2
    root = sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (3, 7), (7, 8), (12, 12), (29, 32), (500, 1000)])
def test_the_closed_form_is_the_root_of_the_score_test(k, n):
    lo, hi = wilson_interval(k, n)
    want_lo, want_hi = _by_the_quadratic(k, n, Z95)
    assert lo == pytest.approx(want_lo, abs=1e-12) and hi == pytest.approx(want_hi, abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_symmetric_exact_at_the_edges_and_narrowing_with_n():
    for k, n in [(0, 5), (2, 9), (30, 32)]:
        lo, hi = wilson_interval(k, n)
        mlo, mhi = wilson_interval(n - k, n)
        assert lo == pytest.approx(1 - mhi) and hi == pytest.approx(1 - mlo)
    assert wilson_interval(0, 12)[0] == 0.0 and wilson_interval(12, 12)[1] == 1.0
    widths = [(lambda i: i[1] - i[0])(wilson_interval(n, n)) for n in (4, 16, 64, 256)]
    assert widths == sorted(widths, reverse=True)


def test_no_trials_says_nothing():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert count_json(0, 0) == {"k": 0, "n": 0, "wilson95": [0.0, 1.0]}


@pytest.mark.parametrize("k,n", [(-1, 3), (4, 3), (0, -1)])
def test_a_count_outside_0_to_n_is_refused(k, n):
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson_interval(k, n)


def test_words_carry_two_decimals():
    assert count_words(7, 8) == "7/8 (0.53–0.98)"
    assert count_words(12, 12) == "12/12 (0.76–1.00)"
    assert interval_words(0, 20) == "0.00–0.16"
