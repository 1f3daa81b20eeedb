"""Speed cells interleaved with a reference (speed/cells_ab.py) against two llama-server protocol players (one paced
slower), and per-cell energy from the run's real meters over fake sysfs / fake pynvml: the schedule, both sides'
samples kept, the paired interval, the labels, the --min-speedup judgement on the headline decode cell, the numbers
of each cell's energy window, and "not available: <why>" where nothing is readable."""

from __future__ import annotations

import asyncio
import json
import math
from types import SimpleNamespace

import httpx
import pytest
from test_cells import LlamaServer, backend, tokenize
from test_energy import rapl_tree, set_energy
from test_nvml import fake_nvml

from oracle.checks.speed_cells.producer import headline_cell, speedup
from oracle.speed import cells_report
from oracle.speed import power as power_module
from oracle.speed.campaign import measure_cells
from oracle.speed.cell_energy import cell_energy, combine_energy, energy_words
from oracle.speed.cells import Cell, parse_cells
from oracle.speed.cells_ab import cell_versus, measure_cells_interleaved, schedule
from oracle.speed.interleave import t_quantile
from oracle.speed.power import PowerWindow


class Paced(LlamaServer):
    """llama-server's stream with `gap_s` between tokens; `on_request()` runs at each completion (an energy
    counter stepping)."""

    def __init__(self, gap_s: float, on_request=None) -> None:
        super().__init__()
        self.gap_s, self.on_request = gap_s, on_request

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/metrics":
            return super().__call__(request)
        if self.on_request is not None:
            self.on_request()
        body = json.loads(request.content)
        self.bodies.append(body)
        n = body["n_predict"]
        self.generated += n
        events = [{"tokens": [7], "content": "x", "stop": False} for _ in range(n)]
        events.append({"stop": True, "stop_type": "limit", "content": "", "timings": {
            "prompt_n": len(body["prompt"]), "prompt_ms": 0.0, "cache_n": 0, "predicted_n": n,
            "predicted_ms": n * self.gap_s * 1000, "predicted_per_second": 1 / self.gap_s}})
        gap = self.gap_s

        async def stream():
            for e in events:
                await asyncio.sleep(gap)
                yield f"data: {json.dumps(e)}\n\n".encode()
        return httpx.Response(200, content=stream())


class Sides:
    """Both sides up (both-up) or booted per pass (one-at-a-time: a new boot number each pass)."""

    def __init__(self, reference, candidate, servers: str) -> None:
        self.servers = servers
        self.backends = {"reference": backend(reference), "candidate": backend(candidate)}
        self.candidate = self.backends["candidate"]
        self.opened: list[str] = []
        self.boots = 0

    def tokenizer(self, b):
        return tokenize

    def open(self, side: str):
        self.opened.append(side)
        if self.servers == "both-up":
            return self.backends[side], None
        self.boots += 1
        return self.backends[side], self.boots


def interleaved(reference, candidate, cells="p64/g20,p64/g1", repeats=3, servers="both-up", meter=None):
    sides = Sides(reference, candidate, servers)
    block = measure_cells_interleaved(sides, parse_cells(cells), repeats, servers=servers, tokenize=tokenize,
                                      haystack=["Some haystack text. "], context=SimpleNamespace(tokens=8192),
                                      meter=meter)
    return block, sides


def test_the_schedule_is_abba_over_repeats_cell_after_cell_or_round_after_round():
    a, b = Cell(64, 20), Cell(64, 1)
    assert schedule([a, b], 2, "both-up") == [(1, "reference", [a]), (1, "candidate", [a]), (2, "candidate", [a]),
                                              (2, "reference", [a]), (1, "reference", [b]), (1, "candidate", [b]),
                                              (2, "candidate", [b]), (2, "reference", [b])]
    assert schedule([a, b], 3, "one-at-a-time") == [
        (1, "reference", [a, b]), (1, "candidate", [a, b]), (2, "candidate", [a, b]), (2, "reference", [a, b]),
        (3, "reference", [a, b]), (3, "candidate", [a, b])]


def test_a_slower_candidate_gets_a_between_run_interval_below_one_every_sample_of_both_sides_kept():
    reference, candidate = Paced(0.002), Paced(0.006)
    block, sides = interleaved(reference, candidate, cells="p64/g20,p64/g1,p8192/g1")
    assert sides.opened == ["reference", "candidate", "candidate", "reference", "reference", "candidate"] * 2
    assert [len(s.bodies) for s in (reference, candidate)] == [4 + 4, 4 + 4]  # per cell: 1 warm-up + 3 repeats
    assert block["cells"]["p8192/g1"]["status"] == "dropped"
    decode = block["cells"]["p64/g20"]
    assert decode["status"] == "measured" and decode["reference"]["status"] == "measured"
    for side in (decode, decode["reference"]):
        assert [s["repeat"] for s in side["samples"]] == [1, 2, 3] and side["cache"]["verdict"] == "pass"
        assert side["credible"]["counters"]["generated"] == 60  # each side's own counter moved by its 3 x 20 tokens
        assert side["unique_prefixes"]
    firsts = {tuple(b["prompt"][:13]) for s in (reference, candidate) for b in s.bodies}
    assert len(firsts) == 16  # every request of both sides opens differently (each side its own nonce)
    v = decode["vs_reference"]
    assert (v["measured"], v["interval"], v["label"], v["pairs"]) == ("interleaved", "between-run", "headline", 3)
    # Paced at 3x the gap: the point lies well below 1 (a loaded host adds the same overhead to both sides, so
    # the ratio moves toward 1 from 1/3; only its side of 1 is what this test is about).
    assert v["ci95"][1] < 1.0 and 0.2 < v["median"] < 0.8
    # the interval is the t interval of the paired log ratios, the point beside it the ratio of medians
    logs = [math.log(c["value"] / r["value"]) for c, r in zip(decode["samples"], decode["reference"]["samples"])]
    mean, sd = sum(logs) / 3, (sum((x - sum(logs) / 3) ** 2 for x in logs) / 2) ** 0.5
    assert v["ci95"][0] == pytest.approx(math.exp(mean - t_quantile(2) * sd / 3 ** 0.5), rel=1e-3)
    assert v["ratio_of_medians"] == pytest.approx(decode["summary"]["median"] / decode["reference"]["summary"]["median"],
                                                  rel=1e-3)
    assert headline_cell(block) == "p64/g20"
    verdict, words = speedup(block, 1.0)
    assert verdict == "fail" and words.endswith("the headline decode cell; --min-speedup 1: the whole interval is "
                                                "below it")
    assert speedup(block, 0.01)[0] == "pass"
    md = "\n".join(cells_report.markdown({"speed": {"cells": block}}))
    assert "interleaved with the reference (--reference-launch, both-up)" in md
    assert "(interleaved, between-run, headline)" in md and "p64/g20 (reference): " in md


def test_one_at_a_time_warms_each_cell_on_every_boot():
    reference, candidate = Paced(0.001), Paced(0.001)
    block, sides = interleaved(reference, candidate, servers="one-at-a-time", repeats=2)
    assert sides.opened == ["reference", "candidate", "candidate", "reference"]
    # each pass a new boot: both cells warmed up again there, then one repeat of each
    assert [b["n_predict"] for b in candidate.bodies] == [20, 20, 1, 1] * 2
    assert block["cells"]["p64/g20"]["warmups"] == 2 and len(block["cells"]["p64/g20"]["samples"]) == 2
    assert [x.split(":")[0] for x in block["interleaved"]["order"]] == [
        "r1 reference boot 1", "r1 candidate boot 2", "r2 candidate boot 3", "r2 reference boot 4"]


def test_a_failed_request_stops_the_session_without_a_retry():
    class Failing(Paced):
        def __call__(self, request):
            if request.url.path != "/metrics" and len(self.bodies) == 2:
                self.bodies.append("failed")
                return httpx.Response(500, text="boom")
            return super().__call__(request)
    reference, candidate = Paced(0.001), Failing(0.001)
    block, _ = interleaved(reference, candidate)
    assert block["cells"]["p64/g20"]["status"] == "failed" and "candidate" in block["cells"]["p64/g20"]["reason"]
    assert block["cells"]["p64/g1"]["status"] == "not run"
    assert candidate.bodies.count("failed") == 1 and len(reference.bodies) == 2  # nothing sent after it


def test_labels_not_credible_and_insufficient():
    ok = {"credible": {"verdict": "credible", "reasons": []}, "cache": {"verdict": "pass", "detail": ""},
          "summary": {"median": 10.0}, "samples": [{"repeat": 1, "value": 10.0, "short": False}]}
    assert cell_versus(ok, ok)["label"] == "insufficient"  # one pair: no interval
    burst = ok | {"credible": {"verdict": "not credible", "reasons": ["one burst"]}}
    v = cell_versus(burst, ok)
    assert v["label"] == "not credible" and v["reasons"] == ["candidate: timestamps not credible: one burst"]
    block = {"interleaved": {}, "cells": {"p64/g20": {"status": "measured", "measures": "decode",
                                                     "vs_reference": v}}}
    assert speedup(block, 1.0)[0] == "inconclusive" and speedup(block, None) is None
    assert speedup({"cells": {}}, 1.0) is None  # not interleaved: the cells are not judged on --min-speedup


# -- energy per cell ---------------------------------------------------------------------------------------------
class Found:
    """The server as ServerProcesses finds it by its port (the test's own process stands in)."""

    def __init__(self, url, *, in_process, oracle):
        self.pids, self.found, self.local = {4242}, "pid 4242 listens on port 8080", True

    def follow(self):
        pass


def rapl_window(b):
    return PowerWindow.open("auto", {"accelerator": {}}, url=b.base_url, in_process=False)


def test_each_cells_repeats_are_metered_by_rapl(tmp_path, monkeypatch):
    """A fake RAPL package whose counter steps 2 J per completion: each cell's window holds its 3 repeats (6 J),
    not its warm-up; J/token over the generated tokens."""
    root = rapl_tree(tmp_path, {"intel-rapl:0": ("package-0", 0, 2**32)})
    energy = {"uj": 0}

    def step():
        energy["uj"] += 2_000_000
        set_energy(root, "intel-rapl:0", energy["uj"])
    real = power_module.rapl_meter
    monkeypatch.setattr(power_module, "rapl_meter", lambda: real(root))
    monkeypatch.setattr(power_module, "ServerProcesses", Found)
    server = Paced(0.001, on_request=step)
    block = measure_cells(backend(server), parse_cells("p64/g20,p64/g1"), 3, tokenize=tokenize,
                          haystack=["Some haystack text. "], context=SimpleNamespace(tokens=8192),
                          meter=rapl_window)
    decode, cold = block["cells"]["p64/g20"]["energy"], block["cells"]["p64/g1"]["energy"]
    assert decode["available"] and decode["source"] == "rapl" and decode["device"] == "cpu"
    assert decode["joules"] == 6.0 and decode["generated_tokens"] == 60 and decode["joules_per_token"] == 0.1
    assert decode["watts_mean"] == pytest.approx(6.0 / decode["window_s"], rel=1e-2)
    assert cold["joules"] == 6.0 and cold["joules_per_token"] == 2.0
    assert decode["isolation"] in ("isolated", "not isolated")
    md = "\n".join(cells_report.markdown({"speed": {"cells": block}}))
    assert "6 J, " in md and "0.1 J/token" in md


def test_interleaved_sides_are_metered_apart_with_nvml(monkeypatch):
    """The fake pynvml's counter steps 1000 mJ at every read (start, each second's sample, stop); each side's cell
    sums its own windows, one per repeat; temperature and SM clock from the samples."""
    reads = iter(range(0, 10**9, 1000))
    nv = fake_nvml({0: [(4242, 2**30)]}, energy_mj=reads)
    monkeypatch.setattr(power_module, "load_nvml", lambda: (nv, None))
    monkeypatch.setattr(power_module, "ServerProcesses", Found)

    def meter(b):
        return PowerWindow.open("auto", {"accelerator": {"nvidia-smi": "NVIDIA H200"}}, url=b.base_url,
                                in_process=False)
    block, _ = interleaved(Paced(0.001), Paced(0.001), cells="p64/g20", meter=meter)
    cell = block["cells"]["p64/g20"]
    for side in (cell, cell["reference"]):
        e = side["energy"]
        assert e["available"] and e["source"] == "nvml" and e["windows"] == 3
        assert e["joules"] == 3.0 and e["generated_tokens"] == 60 and e["joules_per_token"] == 0.05
        assert e["temperature_c_max"] == 61 and e["clock_mhz_min"] == e["clock_mhz_max"] == 1980
        assert e["isolation"] == "isolated"
    assert energy_words(cell["energy"]).startswith("3 J, ") and "61 °C max, 1980-1980 MHz" in energy_words(cell["energy"])


def test_nothing_readable_says_not_available_with_the_reason(tmp_path, monkeypatch):
    real = power_module.rapl_meter
    monkeypatch.setattr(power_module, "rapl_meter", lambda: real(tmp_path / "none"))
    monkeypatch.setattr(power_module, "ServerProcesses", Found)
    window = PowerWindow.open("auto", {"accelerator": {}}, url="http://127.0.0.1:8080", in_process=False)
    window.start()
    e = cell_energy(*window.stop(generated_tokens=60))
    assert e == {"available": False, "device": "cpu", "isolation": e["isolation"],
                 "reason": f"not available: no {tmp_path / 'none'} (no RAPL energy counters on this host: a VM, or a "
                           "kernel without intel_rapl / powercap)"}
    off = PowerWindow.open("off", {"accelerator": {}}, url="http://127.0.0.1:8080", in_process=False)
    off.start()
    assert cell_energy(*off.stop(generated_tokens=1))["reason"] == "not measured: --oracle-power off"
    ok = {"available": True, "device": "cpu", "source": "rapl", "joules": 1.0, "window_s": 1.0, "watts_mean": 1.0,
          "generated_tokens": 10, "joules_per_token": 0.1, "temperature_c_max": None, "clock_mhz_min": None,
          "clock_mhz_max": None, "windows": 1, "isolation": "isolated"}
    assert combine_energy([ok, e]) == e and combine_energy([ok, ok])["joules_per_token"] == 0.1
