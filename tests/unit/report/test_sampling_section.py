"""The sampled-decoding section: settings, no near-ties said, the match rate rows, the distribution statistics."""

from __future__ import annotations

from oracle.report import sampling

DATA = {"sampling": {"settings": {"temperature": 0.8, "top_p": 1.0, "seeds": [1, 2], "top_k": 0, "min_p": 0.0},
                     "check": "distribution",
                     "distribution": {"verdict": "shifted", "max_shift": 0.5, "effect_nats_per_token": -0.4,
                                      "effect_size_d": -2.1, "mean_loglik": {"reference": -1.2, "candidate": -1.6},
                                      "permutations": "exact, all 924 assignments", "per_test_alpha": 0.025,
                                      "p_value_loglik": 0.002, "p_value_ranks": 0.3,
                                      "rank_histogram": {"bins": ["1", ">20"], "reference": [9, 1],
                                                         "candidate": [5, 5]},
                                      "power_statement": "with 2 prompts x 3 seeds x 24 tokens this run can detect",
                                      "scored_by": {"top_k": 20}}},
        "token_match": {"c1": {"vs_reference": {"k": 47, "n": 48, "wilson95": [0.89, 1.0], "rate": 0.979,
                                                "records": 2, "exact_records": 1}}}}


def test_both_documents_say_the_settings_the_rates_and_the_statistics():
    md = "\n".join(sampling.markdown(DATA))
    assert "temperature 0.8, top-p 1, seeds 1, 2" in md and "Near-tie classification does not apply" in md
    assert "| c1 | reference | 47/48 (" in md and "verdict **shifted**" in md
    assert "p 0.002 (mean log-likelihood)" in md and "with 2 prompts x 3 seeds x 24 tokens" in md
    page = sampling.html(DATA)
    assert "<h2>Sampled decoding</h2>" in page and "47/48" in page and "verdict shifted" in page


def test_a_greedy_report_has_no_such_section():
    assert sampling.markdown({"sampling": None}) == [] and sampling.html({}) == ""
