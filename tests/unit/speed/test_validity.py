"""Validity labels are computed from what a run proves: each rule that a headline needs can take it away."""

from __future__ import annotations

from oracle.speed.validity import (DIAGNOSTIC, HEADLINE, INSUFFICIENT, diagnostics, history_speculation, label_of)

CLEAN = dict(cache_verdict="pass", warmup_requests=1, history=None, text_only=0)


def test_a_clean_cold_run_with_enough_long_prompts_is_a_headline():
    assert diagnostics(**CLEAN) == []
    assert label_of([], 5) == (HEADLINE, [])


def test_fewer_than_5_long_prompts_is_insufficient():
    label, why = label_of([], 4)
    assert label == INSUFFICIENT
    assert why == ["4 prompt(s) generated >= 101 tokens; a headline needs at least 5"]


def test_each_broken_rule_makes_it_diagnostic_with_its_reason():
    cases = {
        "cache_verdict": ("fail", "cache-zero not proven for every request (cache-zero fail)"),
        "warmup_requests": (0, "no warm-up request before the timed run (--warmup 0)"),
        "text_only": (2, "2 request(s) returned text without token ids"),
    }
    for key, (value, reason) in cases.items():
        reasons = diagnostics(**{**CLEAN, key: value})
        assert len(reasons) == 1 and reasons[0].startswith(reason), (key, reasons)
        assert label_of(reasons, 12) == (DIAGNOSTIC, reasons)
    assert diagnostics(**CLEAN, servers=2) == ["the prompts were split over 2 servers running at the same time"]
    # diagnostic outranks insufficient, and both reasons are kept
    label, why = label_of(["cache"], 1)
    assert label == DIAGNOSTIC and len(why) == 2


def test_history_based_speculation_is_found_in_flags_and_configs():
    assert history_speculation(("the launch command", "llama-server -m m.gguf --spec-type ngram-simple")).startswith(
        "history-based speculation (ngram-simple in the launch command)")
    assert history_speculation(("--server-args", '--speculative-config {"method": "ngram"}'))
    assert history_speculation(("cfg", '{"method": "suffix"}'))
    assert history_speculation(("cfg", "--lookup-ngram-min 2"))
    assert history_speculation(("cfg", "prompt_lookup_max=4"))
    # a draft model or MTP is verified speculation, not history-based
    assert history_speculation(("the launch command", "llama-server --spec-type draft-simple -md d.gguf"),
                               ("cfg", '{"method": "mtp", "num_speculative_tokens": 1}'), ("none", None)) is None
