"""The speed-cells item's judgement of each cell: what fails it, what leaves it inconclusive, what passes."""

from oracle.checks.speed_cells.producer import _problems


def cell(**over) -> dict:
    base = {"status": "measured", "cache": {"verdict": "pass", "detail": "0 cached"}, "short": 0, "gen_tokens": 128,
            "prompt_tokens": 512, "prompt_mismatch": [], "unique_prefixes": True,
            "credible": {"verdict": "credible", "reasons": []},
            "samples": [{"generated": 128, "short": False, "server_prompt_tokens": 512, "prompt_exact": True}]}
    return base | over


def test_a_cold_exact_full_cell_has_no_problem():
    assert _problems("p512/g128", cell()) == ([], [])
    assert _problems("p8192/g1", {"status": "dropped", "reason": "beyond"}) == ([], [])


def test_short_samples_a_reused_cache_and_a_miscounted_prompt_fail():
    short = cell(short=1, samples=[{"generated": 16, "short": True, "server_prompt_tokens": 511,
                                    "prompt_exact": False}], prompt_mismatch=[1])
    fail, unsure = _problems("p512/g128", short)
    assert fail[0].startswith("p512/g128: 1 of 1 sample(s) generated 16 of 128 tokens")
    assert "counted 511 prompt tokens, not 512" in fail[1] and unsure == []
    fail, _ = _problems("p512/g128", cell(cache={"verdict": "fail", "detail": "prefix cache was reused"}))
    assert fail == ["p512/g128: not cold: prefix cache was reused"]
    fail, _ = _problems("p512/g1", {"status": "failed", "reason": "HTTP 500"})
    assert fail == ["p512/g1: failed: HTTP 500"]


def test_an_unproven_cache_or_untrusted_timestamps_are_inconclusive():
    _, unsure = _problems("p512/g128", cell(cache={"verdict": "inconclusive", "detail": "cache-zero not proven"},
                                            credible={"verdict": "not credible", "reasons": ["burst delivery"]}))
    assert unsure == ["p512/g128: cache-zero not proven", "p512/g128: timestamps not credible: burst delivery"]
