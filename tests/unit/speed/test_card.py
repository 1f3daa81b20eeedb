"""The speed card: its summary over prompts, the prompts it leaves out, merging servers, a ladder level's speed,
and a reference's card rebuilt from its records."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from oracle.speed.card import TIMES_AFTER_PARSING, level_speed, merge_cards, prompt_rows, reference_card, speed_card
from oracle.speed.figures import BYTES_ARRIVAL
from oracle.speed.validity import DIAGNOSTIC, HEADLINE, INSUFFICIENT


def record(key: str, n: int, gap: float, ttft: float = 0.1):
    times = [ttft + i * gap for i in range(n)]
    return SimpleNamespace(key=key, id=key, token_times_s=times, completion_ids=list(range(n)), server_timings=None)


def rows(*specs):
    return prompt_rows([record(k, n, gap) for k, n, gap in specs])


def test_card_summary_counts_only_long_prompts_in_the_conventional_rate():
    r = rows(*[(f"p{i}", 120, 0.01 * (i + 1)) for i in range(5)], ("short", 40, 0.001))
    card = speed_card(r, reasons=[], clock=BYTES_ARRIVAL)
    assert card["label"] == HEADLINE and card["reasons"] == []
    conv = card["summary"]["conventional_tok_s"]
    assert conv["prompts"] == 5 and conv["median"] == pytest.approx(100 / 3, abs=1e-3)
    assert conv["max"] == pytest.approx(100.0)  # 'short' (1000 tok/s after TTFT) is not in it
    assert card["excluded"] == {"short": 40}
    assert card["summary"]["ttft_s"]["prompts"] == 6  # TTFT of every prompt
    assert "notes" not in card


def test_insufficient_names_the_short_prompts():
    card = speed_card(rows(("a", 150, 0.01), ("b", 32, 0.01), ("c", 100, 0.01)), reasons=[], clock=BYTES_ARRIVAL)
    assert card["label"] == INSUFFICIENT
    assert card["excluded"] == {"b": 32, "c": 100}
    assert card["reasons"] == ["1 prompt(s) generated >= 101 tokens; a headline needs at least 5"]


def test_old_clock_is_noted_and_one_piece_prompts_are_listed():
    r = rows(*[(f"p{i}", 120, 0.01) for i in range(5)])
    r["burst"] = {**r["p0"], "conventional_tok_s": None, "tokens": 120}
    card = speed_card(r, reasons=[], clock=TIMES_AFTER_PARSING)
    assert card["notes"] == ["token times taken after parsing each event (recorded by an older oracle)"]
    assert card["one_piece"] == ["burst"]


def test_merged_cards_are_never_a_headline():
    a = speed_card(rows(*[(f"a{i}", 120, 0.01) for i in range(5)]), reasons=[], clock=BYTES_ARRIVAL)
    b = speed_card(rows(*[(f"b{i}", 120, 0.01) for i in range(5)]), reasons=[], clock=BYTES_ARRIVAL)
    merged = merge_cards([a, b], servers=2)
    assert merged["label"] == DIAGNOSTIC and len(merged["prompts"]) == 10
    assert merged["reasons"] == ["the prompts were split over 2 servers running at the same time"]
    assert merge_cards([], servers=2) is None


def test_level_speed_is_aggregate_throughput_and_median_request_rate():
    recs = [record("x", 120, 0.01), record("y", 120, 0.02), record("z", 20, 0.01)]
    level = level_speed(recs, wall_s=2.6)
    assert level == {"tokens": 260, "wall_s": 2.6, "throughput_tok_s": 100.0, "median_conventional_tok_s": 75.0,
                     "requests_timed": 2, "requests": 3}


class FakeReference:
    def __init__(self, records, manifest):
        self._records = {r.id: r for r in records}
        self.case_ids = list(self._records)
        self.manifest = manifest

    def record(self, pid):
        return self._records[pid]


def test_reference_card_from_records_and_manifest():
    recs = [record(f"p{i}", 120, 0.01) for i in range(5)]
    ref = FakeReference(recs, {"speed": {"diagnostics": [], "token_times": BYTES_ARRIVAL, "warmup": {"requests": 1}}})
    card, why = reference_card(ref, [r.id for r in recs])
    assert why is None and card["label"] == HEADLINE and card["token_times"] == BYTES_ARRIVAL
    old, _ = reference_card(FakeReference(recs, {}), [r.id for r in recs])  # recorded before speed cards
    assert old["label"] == DIAGNOSTIC and old["token_times"] == TIMES_AFTER_PARSING
    for r in recs:
        r.token_times_s = []
    none, why = reference_card(FakeReference(recs, {}), [r.id for r in recs])
    assert none is None and why.startswith("the reference holds no token times")
