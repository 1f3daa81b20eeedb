"""The speed card in words: the headline's one line, and the acceptance shown beside the speed."""

from __future__ import annotations

from oracle.speed.report import headline, html_section, markdown_lines, speculation_words, speed_words

VERSUS = {"label": "headline", "median": 1.4213, "ci95": [1.31, 1.55], "min": 1.2, "max": 1.7, "prompts": 11,
          "candidate_median": 177.3, "reference_median": 124.9, "reasons": [], "notes": []}
SUMMARY = {"conventional_tok_s": {"median": 177.3, "p10": 150.0, "mean": 170.0, "min": 140.0, "max": 190.0,
                                  "prompts": 11}}
CARD = {"label": "headline", "reasons": [], "token_times": "bytes-arrival", "condition": "boot1-c1",
        "warmup": {"requests": 1, "completion_tokens": 64}, "excluded": {"tool-json": 60}, "min_tokens": 101,
        "summary": SUMMARY, "prompts": {"p": {"tokens": 150, "ttft_s": 0.1, "conventional_tok_s": 177.3,
                                               "after_ttft_tok_s": 170.0, "full_output_tok_s": 160.0, "events": 40,
                                               "event_rate": 50.0}}}
SPEC = {"drafted": 400, "accepted": 240, "rate": 0.6, "mean_accepted_length": 2.5}


def test_headline_speed_words():
    assert speed_words(VERSUS) == ("1.42x faster [1.31, 1.55] (conventional decode median 177.3 vs 124.9 tok/s, "
                                   "11 prompts, headline)")
    assert headline({**CARD, "vs_reference": VERSUS}) == speed_words(VERSUS)
    slower = {**VERSUS, "median": 0.8, "ci95": [0.7, 0.9]}
    assert speed_words(slower).startswith("0.80x slower [0.70, 0.90]")


def test_headline_without_a_number_says_why():
    nc = {"label": "not comparable", "median": None, "reasons": ["different hardware: cpu: a vs b"]}
    assert headline({**CARD, "vs_reference": nc}) == "speed not comparable (different hardware: cpu: a vs b)"
    assert headline(CARD) == "conventional decode median 177.3 tok/s (11 prompts, headline)"
    empty = {**CARD, "label": "insufficient", "summary": {"conventional_tok_s": None}}
    assert headline(empty) == "speed insufficient (no prompt reached 101 tokens)"
    assert headline(None) is None


def test_acceptance_stays_beside_the_speed():
    assert speculation_words(SPEC) == "acceptance 60.0%, mean accepted length 2.50 (drafted 400, accepted 240)"
    assert speculation_words({"drafted": None}) is None
    md = "\n".join(markdown_lines({**CARD, "vs_reference": VERSUS}, SPEC))
    assert "- speculation: acceptance 60.0%" in md
    assert "left out of the conventional rate (fewer than 101 tokens): tool-json (60)" in md
    assert "Against the reference (reference measured in another run): 1.42x faster [1.31, 1.55]" in md
    html = html_section(CARD, SPEC)
    assert "acceptance 60.0%" in html and "event-counting rate (events/s, not tokens)" in html
