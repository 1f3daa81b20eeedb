"""Decode vs prefill on the real llama-server (the shared embedded server, 2 prompts x 8 tokens): the candidate's
own path, the top-k it streamed while decoding against the same path scored as a prompt in one pass and in
chunks; a proxy that shifts the streamed logprobs at one position (never the prefill's) fails it."""

from __future__ import annotations

import math

import pytest

from conftest import NO_WARMUP, tiny_rows, write_suite
from proxy import FaultProxy, offset_logprobs

pytestmark = pytest.mark.slow

POSITIONS = 2 * 7  # 2 prompts x 8 tokens: positions 1..7 of each (position 0 is a prefill on both sides)


@pytest.fixture
def two_prompts(tmp_path):
    return write_suite(tmp_path, "two", tiny_rows()[:2])


def test_decode_vs_prefill_reports_its_figures(gate_run, shared_server, two_prompts, read_report):
    run = gate_run(f"--oracle-url={shared_server.url}", "--logits", "--prefill-chunks=48,served", *NO_WARMUP,
                   suite=two_prompts, max_tokens=8, report="dvp")
    run.assert_outcomes(passed=5)  # run[x2], cache-zero (the diagnostic requests ran apart), speculation, dvp
    rep = read_report(run.folder)
    dvp = rep["decode_vs_prefill"]
    assert dvp["kld_is_lower_bound"] is True and dvp["tolerance_nats"] is None
    assert set(dvp["modes"]) == {"one-pass", "chunks-48", "chunks-served"}
    assert "prefill chunk is unknown" in dvp["modes"]["chunks-served"]["not_offered"]  # a --oracle-url server's flags are not seen
    for name in ("one-pass", "chunks-48"):
        mode = dvp["modes"][name]
        o = mode["overall"]
        assert not mode["errors"] and o["positions"] == POSITIONS, (name, mode)
        assert 0 <= o["bit_identical"] <= POSITIONS
        assert math.isfinite(o["max_abs_delta"]) and 0.0 <= o["max_abs_delta"] < 2.0, o  # measured: <= 0.55
        assert o["same_top1"] >= 0.8 and 0.0 <= o["mean_kld"] < 0.05, o
        assert set(mode["per_prompt"]) == {"code-palindrome", "code-hashmap"}
        assert 1 <= o["worst"]["position"] <= 7
    assert dvp["modes"]["one-pass"]["requests"] == POSITIONS  # one fresh prefill per position
    assert dvp["modes"]["chunks-48"]["requests"] >= 2 * POSITIONS  # every prefix is longer than 48 tokens
    check = next(c for c in rep["checks"] if c["id"] == "decode-vs-prefill")
    assert check["verdict"] == "info" and f"/{POSITIONS} positions" in check["detail"]
    assert next(c for c in rep["checks"] if c["id"] == "cache-zero")["verdict"] == "pass"
    assert "## Decode vs prefill" in (run.folder / "identity.md").read_text()
    assert "<h2>Decode vs prefill</h2>" in (run.folder / "identity.html").read_text()


def test_planted_decode_logprob_offset_fails_decode_vs_prefill(gate_run, shared_server, two_prompts, read_report):
    # 8 nats off at position 4 of every streamed answer; the tolerance (3 nats) lies well above what the embedded
    # server itself shows between decode and one-pass prefill (measured up to 0.55 nats, docs/logits.md).
    with FaultProxy(shared_server.url, rewrite_chunk=offset_logprobs(position=4, offset=-8.0)) as proxy:
        run = gate_run(f"--oracle-url={proxy.url}", "--logits", "--prefill-chunks=none", "--dvp-max-delta=3", *NO_WARMUP,
                       suite=two_prompts, max_tokens=8, report="planted")
    assert run.ret == 1
    run.assert_outcomes(passed=4, failed=1)  # the tokens are untouched: only decode-vs-prefill fails
    run.stdout.fnmatch_lines(["*decode-vs-prefill: fail: one-pass: |Δlogprob| 8* > --dvp-max-delta 3 at "
                              "code-* position 4 (token *: decode *, prefill *)*"])
    dvp = read_report(run.folder)["decode_vs_prefill"]
    assert list(dvp["modes"]) == ["one-pass"]
    worst = dvp["modes"]["one-pass"]["overall"]["worst"]
    assert worst["position"] == 4 and abs(worst["decode"] - worst["prefill"]) > 7
