"""Credible timestamps: the arrival spread of a stream, the client's rate against the server's own timings, the
generated-token counter against the tokens received, and the card they label `not credible`."""

from __future__ import annotations

import pytest

from oracle.speed.card import speed_card
from oracle.speed.credible import (CREDIBLE, MIN_SPREAD, MIN_SPREAD_TOKENS, NOT_CREDIBLE, RATE_TOLERANCE,
                                   arrival_spread, client_server_ratio, counter_evidence, credibility,
                                   merge_credibility, server_decode_rate, timestamp_figures)
from oracle.speed.figures import BYTES_ARRIVAL, prompt_figures
from oracle.speed.report import credible_lines, headline
from oracle.speed.versus import compare_cards


def stream(n: int = 120, *, ttft: float = 0.05, gap: float = 0.01) -> list[float]:
    return [ttft + i * gap for i in range(n)]


def burst(n: int = 120, *, at: float = 1.2, pieces: int = 3) -> list[float]:
    """What a buffering proxy delivers: every token within a few reads, microseconds apart."""
    return [at + (i * pieces // n) * 1e-5 for i in range(n)]


def timings(n: int, rate: float, prompt_ms: float = 40.0) -> dict:
    return {"prompt_n": 30, "prompt_ms": prompt_ms, "predicted_n": n, "predicted_ms": n / rate * 1000,
            "predicted_per_second": rate}


def test_a_stream_spreads_over_its_time_and_a_burst_does_not():
    assert arrival_spread(stream()) == pytest.approx(1.19 / 1.24, abs=1e-3)
    assert arrival_spread(burst()) < 1e-4
    assert arrival_spread([1.0] * 50) == 0.0  # one read: all at one instant


def test_the_servers_prompt_time_is_left_out_of_the_spread():
    # 8 s of prefill before a 1.2 s stream: over the whole wall time it would look like a burst (0.13)
    long_prefill = stream(ttft=8.0)
    assert arrival_spread(long_prefill) < 0.2
    assert arrival_spread(long_prefill, prompt_s=7.95) == pytest.approx(1.19 / 1.24, abs=1e-3)
    # a burst stays a burst, whatever the server says about its prompt
    assert arrival_spread(burst(at=9.0), prompt_s=7.95) < 1e-3
    # a prompt time past the first token (clocks that disagree) is not trusted past t_1
    assert arrival_spread(stream(), prompt_s=99.0) == 1.0


def test_short_completions_are_not_judged():
    assert arrival_spread(stream(MIN_SPREAD_TOKENS - 1)) is None
    assert arrival_spread([]) is None
    assert arrival_spread(stream(MIN_SPREAD_TOKENS)) is not None
    assert client_server_ratio(stream(MIN_SPREAD_TOKENS - 1), timings(15, 100.0)) is None


def test_the_servers_own_rate():
    assert server_decode_rate(None) is None and server_decode_rate({}) is None
    assert server_decode_rate({"predicted_per_second": 50.0}) == 50.0
    assert server_decode_rate({"predicted_n": 100, "predicted_ms": 2000.0}) == 50.0  # derived when not stated
    assert server_decode_rate({"predicted_per_second": 0.0}) is None
    assert server_decode_rate({"predicted_per_second": float("nan")}) is None


def test_the_client_agrees_with_the_server_on_a_stream_and_not_on_a_burst():
    # 120 tokens 10 ms apart: the server made them at ~100 tok/s (its span is 1.19 s for 119 intervals)
    ratio = client_server_ratio(stream(), timings(120, 120 / 1.2))
    assert ratio == pytest.approx((119 / 1.19) / 100, abs=1e-3) and ratio <= 1 + RATE_TOLERANCE
    assert client_server_ratio(burst(), timings(120, 100.0)) > 1000
    one_instant = client_server_ratio([2.0] * 120, timings(120, 100.0))
    assert one_instant == pytest.approx(119 / 1e-3 / 100)  # a finite number, so identity.json stays plain JSON
    # slower than the server (a network, a pacing proxy): the client measures what it gets, not a contradiction
    assert client_server_ratio(stream(gap=0.02), timings(120, 100.0)) < 1
    assert client_server_ratio(stream(), None) is None


def test_the_counter_must_move_by_at_least_the_tokens_received():
    assert counter_evidence(100, None, counter="c") is None
    same = counter_evidence(100, 100.0, counter="c")
    assert same == {"counter": "c", "received": 100, "generated": 100, "contradicts": False}
    assert counter_evidence(100, 40.0, counter="c")["contradicts"] is True  # tokens the server never made
    assert counter_evidence(100, 0.0, counter="c")["contradicts"] is True
    more = counter_evidence(100, 130.0, counter="c")
    assert more["contradicts"] is False and "30 token(s) more" in more["note"]


def rows_of(*pairs) -> dict:
    return {f"p{i}": {**prompt_figures(t), **timestamp_figures(t, tm)} for i, (t, tm) in enumerate(pairs)}


def test_a_real_stream_is_credible_and_says_what_it_checked():
    rows = rows_of(*[(stream(gap=0.01 * (i + 1)), timings(120, 1 / (0.01 * (i + 1)))) for i in range(5)])
    block = credibility(rows, counters=counter_evidence(600, 600.0, counter="c"), counters_missing="")
    assert block["verdict"] == CREDIBLE and block["reasons"] == [] and block["not_checked"] == []
    assert block["stream"]["judged"] == 5 and block["stream"]["lowest_spread"] >= MIN_SPREAD
    assert block["timings"]["judged"] == 5 and block["timings"]["highest_ratio"] <= 1 + RATE_TOLERANCE
    card = speed_card(rows, reasons=[], clock=BYTES_ARRIVAL, credible=block)
    assert card["label"] == "headline"
    lines = credible_lines(card)
    assert lines[0] == "timestamps: credible"
    assert any(line.startswith("server timings agree") for line in lines)
    assert "counters moved: the server generated 600 token(s), the client received 600" in lines


def test_a_burst_makes_the_card_not_credible_and_never_a_headline():
    rows = rows_of(*[(burst(), timings(120, 90.0)) for _ in range(5)])
    block = credibility(rows, counters=None, counters_missing="no counter")
    assert block["verdict"] == NOT_CREDIBLE and len(block["reasons"]) == 2
    assert block["reasons"][0].startswith("burst delivery: 5 of 5 completion(s)")
    assert block["reasons"][1].startswith("the server's own timings contradict the client's clock: 5 of 5")
    assert block["not_checked"] == ["counters: no counter"]
    card = speed_card(rows, reasons=[], clock=BYTES_ARRIVAL, credible=block)
    assert card["label"] == NOT_CREDIBLE and card["reasons"][:2] == block["reasons"]
    assert headline(card).startswith("speed not credible (burst delivery")
    # against a credible reference: no number at all, the reasons named per side
    good = speed_card(rows_of(*[(stream(), timings(120, 100.0)) for _ in range(5)]), reasons=[], clock=BYTES_ARRIVAL)
    versus = compare_cards(card, good, candidate_hw={}, reference_hw={})
    assert versus["label"] == NOT_CREDIBLE and versus["median"] is None and versus["ci95"] is None
    assert versus["reasons"][0].startswith("candidate: burst delivery")
    card["vs_reference"] = versus
    assert headline(card).startswith("speed not credible (candidate: burst delivery")
    assert compare_cards(good, card, candidate_hw={}, reference_hw={})["reasons"][0].startswith("reference: burst")


def test_one_contradiction_is_enough():
    pairs = [(stream(), timings(120, 100.0)) for _ in range(10)] + [(stream(), timings(120, 50.0))]
    block = credibility(rows_of(*pairs), counters=None, counters_missing="x")
    assert block["verdict"] == NOT_CREDIBLE and block["timings"]["faster_than_server"] == ["p10"]
    assert "1 of 11 completion(s) reached the client faster" in block["reasons"][0]


def test_a_counter_that_did_not_move_contradicts_the_client():
    rows = rows_of(*[(stream(), None) for _ in range(5)])
    block = credibility(rows, counters=counter_evidence(600, 0.0, counter="generated tokens"), counters_missing="")
    assert block["verdict"] == NOT_CREDIBLE
    assert block["reasons"][0].startswith("the server's own counter (generated tokens) moved by 0 token(s) while "
                                          "the client received 600")
    assert block["not_checked"] == ["server timings: the server reported no per-request timings (llama.cpp's "
                                    "`timings`)"]


def test_absent_evidence_is_said_not_invented():
    rows = rows_of((stream(10), None))  # too short to judge, no server timings, no counters
    block = credibility(rows, counters=None, counters_missing="the server exposes no generated-token counter")
    assert block["verdict"] == CREDIBLE
    assert block["not_checked"] == [f"stream: no completion reached {MIN_SPREAD_TOKENS} tokens",
                                    "server timings: the server reported no per-request timings (llama.cpp's "
                                    "`timings`)",
                                    "counters: the server exposes no generated-token counter"]
    assert credible_lines({"credible": block})[-3:] == [f"not checked: {g}" for g in block["not_checked"]]
    assert credible_lines({}) == ["timestamps: not checked (a card from an older oracle)"]


def test_merged_servers_are_not_credible_when_one_is():
    good = credibility(rows_of((stream(), None)), counters=None, counters_missing="a")
    bad = credibility(rows_of((burst(), None)), counters=None, counters_missing="a")
    assert merge_credibility([]) is None and merge_credibility([good, None]) is good
    merged = merge_credibility([good, bad])
    assert merged["verdict"] == NOT_CREDIBLE and merged["reasons"] == bad["reasons"]
    assert merged["not_checked"] == good["not_checked"] and len(merged["servers"]) == 2
