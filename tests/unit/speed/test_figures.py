"""The speed figures against hand-computed values: the conventional rate counts tokens 1..100, events are kept
apart, and a request under 101 tokens has no conventional rate."""

from __future__ import annotations

import pytest

from oracle.speed.figures import (after_ttft_rate, conventional_rate, event_rate, events, full_output_rate,
                                  prompt_figures, spread)


def steady(n: int, ttft: float = 0.5, gap: float = 0.02) -> list[float]:
    return [ttft + i * gap for i in range(n)]


def test_conventional_rate_is_99_over_t100_minus_t1():
    times = steady(150)  # 20 ms per token after a 0.5 s TTFT
    assert conventional_rate(times) == pytest.approx(50.0)
    # only tokens 1..100 count: a slow tail after token 100 does not move it
    assert conventional_rate(times[:100] + [t + 10 for t in times[100:]]) == pytest.approx(50.0)


def test_fewer_than_101_tokens_have_no_conventional_rate():
    assert conventional_rate(steady(100)) is None
    assert conventional_rate(steady(101)) == pytest.approx(50.0)


def test_tokens_1_to_100_in_one_piece_have_no_rate():
    assert conventional_rate([1.0] * 120) is None


def test_after_ttft_and_full_output_rates():
    times = steady(11, ttft=1.0, gap=0.1)  # t1 = 1.0, t11 = 2.0
    assert after_ttft_rate(times) == pytest.approx(10 / 1.0)
    assert full_output_rate(times) == pytest.approx(11 / 2.0)
    assert after_ttft_rate([1.0]) is None and full_output_rate([]) is None


def test_event_rate_counts_pieces_not_tokens():
    # speculation: every event carries 4 tokens, 40 ms apart -> 100 tok/s but 25 events/s
    times = [0.2 + (i // 4) * 0.04 for i in range(440)]
    assert len(events(times)) == 110
    assert conventional_rate(times) == pytest.approx(99 / (times[99] - times[0]))
    assert event_rate(times) == pytest.approx(25.0)
    row = prompt_figures(times)
    assert row["events"] == 110 and row["tokens"] == 440 and row["event_rate"] == pytest.approx(25.0)


def test_prompt_figures_row():
    row = prompt_figures(steady(120))
    assert row == {"tokens": 120, "ttft_s": 0.5, "conventional_tok_s": 50.0, "after_ttft_tok_s": 50.0,
                   "full_output_tok_s": round(120 / (0.5 + 119 * 0.02), 3), "events": 120, "event_rate": 50.0}
    assert prompt_figures([])["ttft_s"] is None


def test_spread_over_prompts():
    s = spread([10.0, 20.0, 30.0, 40.0, 50.0])
    assert s == {"median": 30.0, "p10": 14.0, "mean": 30.0, "min": 10.0, "max": 50.0, "prompts": 5}
    assert spread([]) is None
