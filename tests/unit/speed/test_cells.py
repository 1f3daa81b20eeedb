"""Speed cells: parsing, prompts of exact token length with unique entropy-first prefixes, the campaign's samples
and statistics against llama-server's protocol played by a mock transport, dropped cells, the report section."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from types import SimpleNamespace

import httpx
import pytest

from oracle.backends import CompletionRequest
from oracle.backends.llamacpp import LlamaCppBackend
from oracle.speed import cells_report
from oracle.speed.campaign import REFERENCE_LABEL, measure_cells, reference_ratios
from oracle.speed.cells import FIELD_CELLS, Cell, cell_prompt, entropy_prefix, haystack_ids, parse_cells


def tokenize(text: str) -> list[int]:
    """One id per character: lengths are easy to see, and a prefix's length varies with its text."""
    return [ord(c) for c in text]


def test_the_field_preset_and_a_list_parse_in_order():
    assert parse_cells("field") == parse_cells(FIELD_CELLS)
    assert [c.name for c in parse_cells("field")] == ["p512/g128", "p2048/g128", "p8192/g128", "p2048/g1", "p8192/g1"]
    assert parse_cells(" p256/g32 , p512/g1") == (Cell(256, 32), Cell(512, 1))
    assert Cell(2048, 1).measures == "cold input" and Cell(512, 128).measures == "decode"


@pytest.mark.parametrize("text, words", [("p512g128", "is not a cell; write pPROMPT/gGENERATED"),
                                         ("p8/g1", "needs a prompt of 32 to"), ("p512/g0", "1 to"),
                                         ("p512/g1,p512/g1", "listed twice"), ("", "is not a cell")])
def test_bad_cells_name_the_fix(text, words):
    with pytest.raises(ValueError, match="--speed-cells") as err:
        parse_cells(text)
    assert words in str(err.value)


@pytest.mark.parametrize("length", [32, 100, 2048, 5000])
def test_a_prompt_has_exactly_the_cells_length_whatever_the_prefix(length):
    hay = haystack_ids(tokenize, ["The river ran. ", "Stones lay still. "])
    prefix = entropy_prefix("0123456789ab", "nonce", Cell(length, 1), "r3")
    ids = cell_prompt(Cell(length, 1), prefix, tokenize=tokenize, haystack=hay)
    assert len(ids) == length and ids[:len(prefix)] == tokenize(prefix)  # cycled haystack past its own length


def test_a_prefix_longer_than_the_cell_is_refused():
    with pytest.raises(ValueError, match="unique prefix alone is"):
        cell_prompt(Cell(32, 1), "x" * 40, tokenize=tokenize, haystack=[1, 2])


class LlamaServer:
    """llama-server's /completion stream and /metrics, as a mock transport plays them: `cap` generated tokens at
    most (a capped generation); every request and its body kept."""

    def __init__(self, cap: int | None = None, cached: int = 0) -> None:
        self.cap, self.cached, self.bodies, self.generated = cap, cached, [], 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/metrics":
            return httpx.Response(200, text=f"llamacpp:prompt_tokens_cached_total {self.cached}\n"
                                            f"llamacpp:tokens_predicted_total {self.generated}\n")
        body = json.loads(request.content)
        self.bodies.append(body)
        n = min(body["n_predict"], self.cap or body["n_predict"])
        self.generated += n
        events = [{"tokens": [7], "content": "x", "stop": False} for _ in range(n)]
        events.append({"stop": True, "stop_type": "limit", "content": "", "timings": {
            "prompt_n": len(body["prompt"]), "prompt_ms": 0.0, "cache_n": 0, "predicted_n": n,
            "predicted_ms": 1e6, "predicted_per_second": 1e-3}})

        async def stream():  # one piece per token, a millisecond apart: a stream, not a burst
            for e in events:
                await asyncio.sleep(0.001)
                yield f"data: {json.dumps(e)}\n\n".encode()
        return httpx.Response(200, content=stream())


def backend(server: LlamaServer) -> LlamaCppBackend:
    transport = httpx.MockTransport(server)
    return LlamaCppBackend("http://test", transport=transport, async_transport=transport)


def measure(server, cells, repeats=3, context=8192, meter=None):
    return measure_cells(backend(server), cells, repeats, tokenize=tokenize, haystack=["Some haystack text. "],
                         context=SimpleNamespace(tokens=context), meter=meter)


class Meter:
    """A window factory (as oracle/checks/speed_cells/producer.meter): every window it opens logs its calls; 1.5 J per window."""

    def __init__(self):
        self.calls = []

    def __call__(self, backend):
        return self

    def start(self):
        self.calls.append("start")

    def close(self):
        self.calls.append("close")

    def stop(self, generated_tokens):
        self.calls.append(f"stop {generated_tokens}")
        power = {"joules": 1.5, "window_s": 0.5, "watts_mean": 3.0, "generated_tokens": generated_tokens,
                 "joules_per_token": round(1.5 / generated_tokens, 4), "device": "cpu",
                 "meters": [{"source": "rapl", "available": True}]}
        return power, {"verdict": "isolated"}


def test_each_cell_a_warm_up_then_cold_repeats_every_sample_kept():
    server, meter = LlamaServer(), Meter()
    block = measure(server, parse_cells("p64/g20,p128/g1,p8192/g1"), meter=meter)
    assert [b["n_predict"] for b in server.bodies] == [20] * 4 + [1] * 4  # warm-up + 3 repeats, p8192 never sent
    assert all(b["ignore_eos"] is True for b in server.bodies) and "ignore_eos" in block["fixed_length"]
    assert [len(b["prompt"]) for b in server.bodies] == [64] * 4 + [128] * 4
    firsts = [tuple(b["prompt"][:13]) for b in server.bodies]
    assert len(set(firsts)) == 8  # entropy first: no two requests share their first 13 tokens
    decode, cold = block["cells"]["p64/g20"], block["cells"]["p128/g1"]
    assert decode["status"] == cold["status"] == "measured"
    assert len(decode["samples"]) == 3 and decode["warmup"]["generated"] == 20
    assert [s["repeat"] for s in decode["samples"]] == [1, 2, 3]
    assert all(s["prompt_exact"] and s["server_prompt_tokens"] == 64 and not s["short"] for s in decode["samples"])
    assert decode["cache"]["verdict"] == "pass" and decode["unique_prefixes"]
    assert "after-TTFT" in decode["metric"] and cold["metric"].startswith("prompt tokens / TTFT")
    s = decode["summary"]
    assert s["samples"] == 3 and s["min"] <= s["p10"] <= s["median"] <= s["max"]
    values = sorted(x["value"] for x in decode["samples"])
    assert s["min"] == values[0] and s["max"] == values[-1] and s["median"] == values[1]
    # prompt tokens / TTFT (the row's ttft_s is rounded to 0.1 ms: a millisecond-long mock TTFT reads within 10%)
    assert cold["samples"][0]["value"] == pytest.approx(128 / cold["samples"][0]["ttft_s"], rel=0.1)
    assert decode["energy"]["joules"] == 1.5 and decode["energy"]["joules_per_token"] == 0.025  # 1.5 J / 60 tokens
    assert meter.calls == ["start", "close", "stop 60", "start", "close", "stop 3"]
    dropped = block["cells"]["p8192/g1"]
    assert dropped["status"] == "dropped" and "beyond the server's context of 8192 tokens" in dropped["reason"]
    # the counters moved by what the client received
    assert decode["credible"]["counters"]["generated"] == 60 and cold["credible"]["counters"]["received"] == 3
    assert cold["credible"]["not_checked"][0].startswith("stream and server timings: a 1-token completion")


def test_a_capped_generation_is_counted_short_and_left_out_of_the_figures():
    block = measure(LlamaServer(cap=16), [Cell(64, 128)], repeats=2)
    cell = block["cells"]["p64/g128"]
    assert cell["short"] == 2 and cell["summary"] is None and cell["metric"].startswith("conventional")


def test_cached_tokens_in_the_counters_fail_the_cells_cache_proof():
    server = LlamaServer()
    b = backend(server)
    calls = iter([0, 512])  # before and after the repeats  # the counter moves while the cell's repeats run

    def counters():
        server.cached = next(calls)
        return LlamaCppBackend.counters(b)
    b.counters = counters
    block = measure_cells(b, [Cell(64, 1)], 1, tokenize=tokenize, haystack=["Hay. "],
                          context=SimpleNamespace(tokens=None))
    assert block["cells"]["p64/g1"]["cache"]["verdict"] == "fail"


def test_a_backend_that_cannot_force_the_length_says_so():
    b = backend(LlamaServer())
    b.capabilities = dataclasses.replace(b.capabilities, fixed_length=None)  # as the openai backend's
    block = measure_cells(b, [Cell(64, 2)], 1, tokenize=tokenize, haystack=["Hay. "],
                          context=SimpleNamespace(tokens=None))
    assert block["fixed_length"] is None and "cannot force the generation length" in block["fixed_length_missing"]


def test_a_failed_request_stops_the_cells_after_it():
    def refuse(request):
        if request.url.path == "/metrics":
            return httpx.Response(200, text="")
        return httpx.Response(500, json={"error": {"message": "slot crashed"}})
    transport = httpx.MockTransport(refuse)
    b = LlamaCppBackend("http://test", transport=transport, async_transport=transport)
    seen = []  # the partial report after each cell
    block = measure_cells(b, [Cell(64, 1), Cell(128, 1)], 2, tokenize=tokenize, haystack=["Hay. "],
                          context=SimpleNamespace(tokens=None),
                          on_cell=lambda kept: seen.append({k: v["status"] for k, v in kept["cells"].items()}))
    assert seen == [{"p64/g1": "failed"}, {"p64/g1": "failed", "p128/g1": "not run"}]
    assert block["cells"]["p64/g1"]["status"] == "failed" and "slot crashed" in block["cells"]["p64/g1"]["reason"]
    assert block["cells"]["p128/g1"]["status"] == "not run"


def test_the_ratio_against_a_reference_is_labelled_without_an_interval():
    mine = {"cells": {"p512/g1": {"summary": {"median": 300.0}}, "p64/g20": {"summary": {"median": 60.0}},
                      "p9/g1": {"status": "dropped"}}}
    ref = {"cells": {"p512/g1": {"summary": {"median": 200.0}}, "p64/g20": {"summary": {"median": 60.0}}}}
    versus = reference_ratios(mine, ref)
    assert versus["label"] == REFERENCE_LABEL == "reference measured in another run, no interval"
    assert versus["ratios"]["p512/g1"]["ratio"] == 1.5 and versus["median_of_ratios"] == 1.25
    assert versus["not_compared"] == ["p9/g1"] and "ci95" not in versus
    assert reference_ratios(mine, None) is None


def test_the_report_section_shows_cells_warm_up_samples_and_the_reference():
    block = measure(LlamaServer(), parse_cells("p64/g20,p8192/g1"), repeats=2)
    block["vs_reference"] = reference_ratios(block, block)
    data = {"speed": {"label": "headline", "cells": block}}
    md = "\n".join(cells_report.markdown(data))
    assert "## Speed cells" in md and "| p64/g20 | decode | measured | 2 |" in md
    assert "warm-up (discarded)" in md and "(20 tok)" in md and "p8192/g1 | cold input | dropped: beyond" in md
    assert f"against the reference's cells ({REFERENCE_LABEL}): p64/g20 1.00x" in md
    assert "- p64/g20: " in md  # every sample
    page = cells_report.html(data)
    assert page.startswith("<h2>Speed cells</h2>") and "p64/g20" in page and "<script" not in page
    assert cells_report.markdown({"speed": {"label": "headline"}}) == [] and cells_report.html({}) == ""


def test_the_default_request_body_is_unchanged_and_ignore_eos_only_when_asked():
    b = LlamaCppBackend("http://test")
    plain = b.request_body(CompletionRequest(prompt_ids=(1, 2), max_tokens=8, logprobs=0))
    assert "ignore_eos" not in plain  # the suite's requests stop at the end of sequence, as before
    assert b.request_body(CompletionRequest(prompt_ids=(1, 2), max_tokens=8, logprobs=0, ignore_eos=True))["ignore_eos"]
