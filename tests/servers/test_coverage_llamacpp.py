"""Condition coverage on the real llama-server (the embedded default, -np 2): chunked prefill from the coverage
suite's long prompt past -ub 512, mixed-batch from staggered arrivals at c2, and --require-conditions failing
closed (inconclusive, kind coverage, exit 1) with short prompts sent at once, naming why and the fix."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

SLOTS = "--server-args=-np 2"


def _check(rep: dict, cid: str) -> dict:
    return next(c for c in rep["checks"] if c["id"] == cid)


def test_the_coverage_suite_proves_chunked_prefill_and_mixed_batch(gate_run, read_report):
    result = gate_run(SLOTS, "--ladder=2", "--ladder-arrivals=staggered",
                      "--require-conditions=chunked-prefill,mixed-batch,overlap", suite="coverage",
                      report="covered", max_tokens=16)
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.assert_outcomes(passed=6)  # run[x2], cache-zero, speculation, ladder[c2], coverage
    rep = read_report(result.folder)
    chunk = rep["identity"]["prefill_chunk"]
    assert chunk["tokens"] == 512 and chunk["flag"] == "-ub"
    assert chunk["source"].startswith("llama.cpp's default -ub 512, llama.cpp's default -b 2048")
    coverage = rep["coverage"]
    assert list(coverage) == ["boot1-c1", "boot1-c2"]
    # the long manifest (664 tokens with SmolLM2's template) is past -ub 512 in both runs
    assert coverage["boot1-c1"]["chunked-prefill"]["prompts"] == ["long-manifest"]
    assert coverage["boot1-c1"]["chunked-prefill"]["longest_tokens"] > 512
    assert not coverage["boot1-c1"]["mixed-batch"]["held"]  # one request at a time
    mixed = coverage["boot1-c2"]["mixed-batch"]
    assert mixed["held"] and mixed["pairs"][0]["decoding"] == "long-manifest"
    assert mixed["pairs"][0]["prefilling"] == "short-capital~1" and mixed["pairs"][0]["sent_after_first_token_s"] > 0
    assert coverage["boot1-c2"]["overlap"]["held"] and not coverage["boot1-c2"]["preemption"]["held"]
    check = _check(rep, "coverage")
    assert check["verdict"] == "pass" and check["evidence"]["held_in"]["mixed-batch"] == ["boot1-c2"]
    assert rep["ladder"]["c2"]["overlap"]["arrivals"] == "staggered"
    md = (result.folder / "identity.md").read_text()
    assert "| boot1-c2 | yes | yes | no | yes |" in md
    assert "- preemption not reached: the server exposes no preemption counter" in md


def test_short_prompts_sent_at_once_are_inconclusive_naming_the_fix(gate_run, read_report):
    result = gate_run(SLOTS, "--ladder=2", "--require-conditions=chunked-prefill,mixed-batch", report="short",
                      max_tokens=16)
    assert result.ret == 1
    result.assert_outcomes(passed=6)  # run[x3], cache-zero, speculation, ladder[c2]; coverage is inconclusive
    assert result.parseoutcomes()["inconclusive"] == 1
    result.stdout.fnmatch_lines([
        "*coverage: inconclusive: chunked-prefill, mixed-batch did not happen; chunked-prefill: no prompt exceeded "
        "-ub 512 (longest: *, * tokens): add a prompt longer than 512 tokens (e.g. --oracle-suite coverage) or lower -ub*",
        "*mixed-batch did not happen in any of 2 run(s): add --ladder-arrivals staggered*"])
    check = _check(read_report(result.folder), "coverage")
    assert check["verdict"] == "inconclusive" and check["inconclusive_kind"] == "coverage"
    assert check["outcome"] == "failed" and check["evidence"]["missing"] == ["chunked-prefill", "mixed-batch"]


def test_mixed_batch_at_a_staggered_level_of_the_default_suite(gate_run, read_report):
    """The default suite's prompts (its first three): staggered arrivals at c2 give mixed batches; the missing
    chunked prefill is passed by --allow-inconclusive coverage, as for the other kinds."""
    result = gate_run(SLOTS, "--ladder=2", "--ladder-arrivals=staggered",
                      "--require-conditions=mixed-batch,chunked-prefill", "--allow-inconclusive=coverage",
                      report="staggered", max_tokens=16)
    assert result.ret == 0, result.stdout.str()[-3000:]
    rep = read_report(result.folder)
    mixed = rep["coverage"]["boot1-c2"]["mixed-batch"]
    assert mixed["held"] and mixed["count"] >= 1
    check = _check(rep, "coverage")
    assert (check["verdict"], check["outcome"]) == ("inconclusive", "passed")
    assert check["evidence"]["held_in"] == {"mixed-batch": ["boot1-c2"], "chunked-prefill": []}
