"""Condition coverage from records (pure): the mixed-batch intervals, chunked prefill against the chunk size,
preemption and overlap, and the report section built from them."""

from __future__ import annotations

from oracle.backends.base import PrefillChunk
from oracle.compare.coverage import held_anywhere, mixed_pairs, run_coverage
from oracle.report.coverage import html, markdown
from oracle.store.records import Condition, Record

C2 = Condition(boot=1, concurrency=2)


def rec(pid: str, sent: float, first: float, last: float, *, prompt: int = 40, tokens: int = 8) -> Record:
    """A record sent at `sent` whose first token came at `first` and last at `last` (wall clock)."""
    times = [first - sent + (last - first) * k / max(tokens - 1, 1) for k in range(tokens)]
    return Record(id=pid, condition=C2, prompt_ids=list(range(prompt)), completion_ids=[1] * tokens,
                  finish_reason="length", token_times_s=times, started_at=sent)


def test_a_prefill_inside_another_requests_decode_is_a_mixed_pair():
    a = rec("a", 0.0, 1.0, 5.0)
    b = rec("b", 2.0, 2.5, 6.0)  # sent after a's first token, first token before a's last
    pairs = mixed_pairs([a, b])
    assert [(p["decoding"], p["prefilling"]) for p in pairs] == [("a", "b")]
    assert pairs[0]["sent_after_first_token_s"] == 1.0 and pairs[0]["first_token_before_last_s"] == 2.5


def test_requests_sent_together_or_queued_behind_a_decode_are_not_mixed():
    together = [rec("a", 0.0, 1.0, 5.0), rec("b", 0.0, 1.1, 5.1)]  # both sent before either's first token
    assert mixed_pairs(together) == []
    queued = [rec("a", 0.0, 1.0, 5.0), rec("b", 2.0, 5.5, 9.0)]  # b's prefill ran after a's last token
    assert mixed_pairs(queued) == []
    one_token = [rec("a", 0.0, 1.0, 1.0, tokens=1), rec("b", 0.5, 0.9, 2.0)]  # a never decoded
    assert [(p["decoding"], p["prefilling"]) for p in mixed_pairs(one_token)] == []


def test_chunked_prefill_holds_only_past_the_chunk_and_names_the_fix():
    chunk = PrefillChunk(512, "llama.cpp's default -ub 512", "-ub")
    short = run_coverage([rec("a", 0, 1, 2, prompt=96)], chunk=chunk, preemptions=None)["chunked-prefill"]
    assert not short["held"]
    assert short["detail"] == "no prompt exceeded -ub 512 (longest: a, 96 tokens)"
    assert short["how"] == ("add a prompt longer than 512 tokens (e.g. --oracle-suite coverage) or lower -ub below 96")
    exactly = run_coverage([rec("a", 0, 1, 2, prompt=512)], chunk=chunk, preemptions=None)["chunked-prefill"]
    assert not exactly["held"]  # 512 tokens fit one micro-batch of 512
    long = run_coverage([rec("a", 0, 1, 2, prompt=664)], chunk=chunk, preemptions=None)["chunked-prefill"]
    assert long["held"] and long["prompts"] == ["a"] and long["how"] == ""
    unknown = run_coverage([rec("a", 0, 1, 2, prompt=664)], chunk=PrefillChunk(None, "a --oracle-url server"),
                           preemptions=None)["chunked-prefill"]
    assert not unknown["held"] and "unknown (a --oracle-url server)" in unknown["detail"]


def test_preemption_and_overlap_from_counters_and_the_level():
    chunk = PrefillChunk(512, "x", "-ub")
    rows = [rec("a", 0, 1, 5)]
    counter = "vLLM /metrics vllm:num_preemptions_total"
    assert run_coverage(rows, chunk=chunk, preemptions=3.0, preemption_counter=counter)["preemption"]["held"]
    still = run_coverage(rows, chunk=chunk, preemptions=0.0, preemption_counter=counter)["preemption"]
    assert not still["held"] and "did not move" in still["detail"] and "--num-gpu-blocks-override" in still["how"]
    none = run_coverage(rows, chunk=chunk, preemptions=None)["preemption"]
    assert not none["held"] and none["detail"] == "the server exposes no preemption counter"
    assert run_coverage(rows, chunk=chunk, preemptions=None, asked=4, reached=4)["overlap"]["held"]
    short = run_coverage(rows, chunk=chunk, preemptions=None, asked=4, reached=2)["overlap"]
    assert not short["held"] and "-np" in short["how"]


def test_mixed_batch_says_how_to_cause_it_for_the_way_the_run_was_sent():
    chunk = PrefillChunk(512, "x", "-ub")
    together = [rec("a", 0.0, 1.0, 5.0), rec("b", 0.0, 1.1, 5.1)]
    at_once = run_coverage(together, chunk=chunk, preemptions=None, asked=2, reached=2)["mixed-batch"]
    assert not at_once["held"] and "--ladder-arrivals staggered" in at_once["how"]
    c1 = run_coverage(together, chunk=chunk, preemptions=None)["mixed-batch"]
    assert c1["detail"] == "one request at a time"
    mixed = run_coverage([rec("a", 0.0, 1.0, 5.0), rec("b", 2.0, 2.5, 6.0)], chunk=chunk, preemptions=None,
                         asked=2, reached=2, staggered=True, server_peak=2)["mixed-batch"]
    assert mixed["held"] and mixed["count"] == 1 and "gauge saw up to 2 running" in mixed["detail"]


def test_the_report_section_shows_each_run_and_what_was_not_reached():
    chunk = PrefillChunk(512, "llama.cpp's default -ub 512", "-ub")
    c1 = run_coverage([rec("a", 0, 1, 2, prompt=664)], chunk=chunk, preemptions=None)
    c2 = run_coverage([rec("a", 0.0, 1.0, 5.0), rec("b", 2.0, 2.5, 6.0)], chunk=chunk, preemptions=None, asked=2,
                      reached=2, staggered=True)
    coverage = {"boot1-c1": c1, "boot1-c2": c2}
    assert held_anywhere(coverage, "mixed-batch") == ["boot1-c2"]
    data = {"coverage": coverage, "identity": {"prefill_chunk": chunk.as_json()},
            "checks": [{"id": "coverage", "evidence": {"required": ["chunked-prefill", "mixed-batch"]}}]}
    md = markdown(data)
    assert "| boot1-c1 | yes | no | no | no |" in md and "| boot1-c2 | no | yes | no | yes |" in md
    assert "- required (--require-conditions): chunked-prefill, mixed-batch" in md
    assert any(line.startswith("- preemption not reached: the server exposes no preemption counter") for line in md)
    page = html(data)
    assert "<h2>Condition coverage</h2>" in page and "<td>boot1-c2</td>" in page and "preemption not reached" in page
    assert markdown({"coverage": {}}) == [] and html({}) == ""
