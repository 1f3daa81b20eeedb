"""Candidate vs reference: the paired speed-up and its bootstrap interval, and "not comparable" (never a number)
across hardware or without token times."""

from __future__ import annotations

from oracle.speed.validity import DIAGNOSTIC, HEADLINE, INSUFFICIENT, NOT_COMPARABLE
from oracle.speed.versus import compare_cards, hardware, paired_ratio

HW = {"accelerator": {"nvidia-smi": "NVIDIA H200, 580.159.03"}, "cpu": "Xeon", "cpu_count": 16, "model_sha256": "ab"}


def card(rates: dict[str, float], label=HEADLINE, reasons=()):
    return {"label": label, "reasons": list(reasons), "notes": [],
            "prompts": {k: {"conventional_tok_s": v} for k, v in rates.items()},
            "summary": {"conventional_tok_s": {"median": sorted(rates.values())[len(rates) // 2]}}}


REF = {f"p{i}": 100.0 + i for i in range(8)}


def test_paired_ratio_of_a_uniform_speedup_is_exact():
    r = paired_ratio({k: 1.5 * v for k, v in REF.items()}, REF)
    assert r["median"] == 1.5 and r["ci95"] == [1.5, 1.5] and r["min"] == 1.5 and r["max"] == 1.5
    assert r["prompts"] == 8 and set(r["per_prompt"]) == set(REF)


def test_paired_ratio_interval_brackets_the_median_and_is_seeded():
    cand = {k: v * (1.2 + 0.05 * ((i % 3) - 1)) for i, (k, v) in enumerate(REF.items())}
    a, b = paired_ratio(cand, REF), paired_ratio(cand, REF)
    assert a == b  # the same two runs always give the same interval
    lo, hi = a["ci95"]
    assert 1.15 <= lo <= a["median"] <= hi <= 1.25
    assert paired_ratio({"p0": 1.0}, REF) is None


def test_same_hardware_headline_cards_compare():
    out = compare_cards(card({k: 2 * v for k, v in REF.items()}), card(REF), candidate_hw=HW, reference_hw=dict(HW))
    assert out["label"] == HEADLINE and out["median"] == 2.0 and out["reasons"] == []
    assert out["candidate_median"] == 2 * out["reference_median"]


def test_different_hardware_is_not_comparable_without_a_number():
    other = {**HW, "accelerator": {"nvidia-smi": "NVIDIA H100, 580.159.03"}}
    out = compare_cards(card(REF), card(REF), candidate_hw=other, reference_hw=HW)
    assert out["label"] == NOT_COMPARABLE and out["median"] is None and out["ci95"] is None
    assert out["reasons"][0].startswith("different hardware: accelerator:")


def test_missing_reference_times_is_not_comparable():
    out = compare_cards(card(REF), None, candidate_hw=HW, reference_hw=HW, reference_missing="no token times")
    assert out["label"] == NOT_COMPARABLE and out["reasons"] == ["no token times"] and out["median"] is None


def test_the_worse_card_labels_the_comparison():
    diag = card(REF, label=DIAGNOSTIC, reasons=["history-based speculation"])
    out = compare_cards(diag, card(REF), candidate_hw=HW, reference_hw=HW)
    assert out["label"] == DIAGNOSTIC and out["reasons"] == ["candidate: history-based speculation"]
    assert out["median"] == 1.0  # measured, but not a headline
    few = {k: REF[k] for k in list(REF)[:3]}
    out = compare_cards(card(few), card(few), candidate_hw=HW, reference_hw=HW)
    assert out["label"] == INSUFFICIENT
    assert out["reasons"][-1] == "3 prompt(s) have a conventional rate on both sides; a headline needs 5"


def test_hardware_of_an_identity():
    ident = {"accelerator": {"nvidia-smi": "x"}, "host": {"cpu": "c", "cpu_count": 2}, "model": {"sha256": "s"}}
    assert hardware(ident) == {"accelerator": {"nvidia-smi": "x"}, "cpu": "c", "cpu_count": 2, "model_sha256": "s"}
    assert hardware({})["accelerator"] is None


def test_another_model_file_is_not_comparable_and_is_not_called_hardware():
    other = {**HW, "model_sha256": "b" * 64}
    out = compare_cards(card(REF), card(REF), candidate_hw=other, reference_hw=HW)
    assert out["label"] == NOT_COMPARABLE and out["median"] is None
    assert len(out["reasons"]) == 1 and out["reasons"][0].startswith(
        "a different model file (speed is compared for the same target model and quantization): sha256 ")
