"""A report with every section filled, as identity.json holds it, for the golden test of `ReportState`'s
serialisation: each section's value is small but shaped as a real run writes it.

    data = FULL_REPORT            # identity.json as a dict
"""

from __future__ import annotations

__all__ = ["FULL_REPORT", "SECTIONS"]

_CHECK = {"id": "tokens[a]", "kind": "tokens", "verdict": "exact", "detail": "32/32 tokens equal", "lines": [],
          "evidence": {"first_divergence": None}, "outcome": "passed", "inconclusive_kind": None}

# Every section a check or the run writes (the keys of identity.json that `ReportState` reads back).
SECTIONS = {
    "speculation": {"drafted": 120, "accepted": 96, "source": "metrics", "per_request": {"a": {"drafted": 40}}},
    "cache": {"verdict": "pass", "requests": 3, "requests_with_cache_field": 3, "cached_requests": {}},
    "evidence": {"ids": True, "logprobs": True, "cached_tokens": True, "counters": ["prompt_tokens_total"]},
    "canaries": {"code[fib]": {"family": "code", "ok": True, "sent": True, "expected": "55", "verdict": "pass"},
                 "repeats[seq]": {"family": "repeats", "repeats": {"identical": 5, "n": 5}, "verdict": "pass"}},
    "canary_completions": {"code[fib]": {"completion_ids": [20, 21], "finish_reason": "length", "text": " 55",
                                         "logprobs": [-0.1, -0.2], "top_ids": [[20], [21]],
                                         "top_logprobs": [[-0.1], [-0.2]], "ids_source": "server"}},
    "ladder": {"c2": {"counts": {"exact": 3}, "records": 3, "verdict": "pass"}},
    "boots": {"2": {"counts": {"exact": 3}, "records": 3, "verdict": "pass"}},
    "neighbours": {"9": {"counts": {"exact": 3}, "records": 3, "overlap": {"a": 2}, "verdict": "exact"}},
    "determinism": "deterministic",
    "logits": {"overall": {"mean_kld": 0.001, "same_top1": 99.5, "positions": 96}, "per_prompt": {}},
    "decode_vs_prefill": {"max_delta": 0.0, "modes": {"one-pass": {"positions": 96}}},
    "chunked_prefill": {"sizes": [64], "max_delta": 0.0},
    "prompt_logprob": {"candidate": -0.659, "reference": -0.655, "per_prompt": {"a": {"tokens": 12}}},
    "speed": {"headline": True, "tok_s": 120.5, "cells": {"p512/g128": {"samples": [1.0, 1.1]}}},
    "coverage": {"boot1-c1": {"chunked-prefill": {"held": False, "detail": "one chunk", "how": "longer prompts"}}},
    "sampling": {"settings": {"temperature": 0.8, "top_p": 1.0, "seeds": 2}, "check": "tokens", "near_ties": 0.1},
    "token_match": {"c1": {"vs_reference": {"k": 3, "n": 3, "records": 3, "exact_records": 3}}},
    "width_map": {"ladder": "1,2,4", "widths": [{"width": 1, "class": "A", "proven": True, "records": 2,
                                                 "split_records": 0, "tie_flips": 0, "confident_flips": 0,
                                                 "source": "ladder"}],
                  "classes": [{"class": "A", "widths": [1], "prompts": {}}], "first_parting": None,
                  "never_tried": [3], "near_tie_nats": 0.5},
    "near_tie_density": {"near_tie_nats": 0.5, "positions": 64, "near_tie_positions": 3, "unmeasured_positions": 0,
                         "flips": 0, "tie_flips": 0, "confident_flips": 0, "unmeasured_flips": 0},
}

FULL_REPORT = {
    "schema_version": 2, "verdict": "pass", "mode": "gate", "backend": "llamacpp",
    "started_utc": "2026-01-02T03:04:05Z", "written_utc": "2026-01-02T03:05:06Z",
    "identity": {"backend": "llamacpp", "server": {"server": "llama-server", "build": "b1"},
                 "servers_c1_crosscheck": {"identical": 2, "different": ["b: server0 vs server1"]}},
    "suite": {"name": "default", "path": "default.jsonl", "sha256": "ab" * 32, "prompts": 2},
    "prompts": ["a", "b"], "reference": {"path": "ref", "kind": "mtp0", "created_utc": "2026-01-01T00:00:00Z"},
    "recorded_reference": None, "checks": [_CHECK],
    **SECTIONS,
    "runs": [{"condition": "boot1-c1", "records": 2}], "interruption": None, "complete": True, "closed": True,
    "notes": ["a note"],
    "records": {"folder": "records", "finished": {"a@boot1-c1": {"completion_sha256": "cd" * 32},
                                                  "b@boot1-c1": {"completion_sha256": "ef" * 32}}},
}
