"""The run plan on the real embedded llama-server: --oracle-plan prints it after the warm-up, sends nothing more and writes
no report folder, the estimate holds against the measured time, a budget too small drops the default needles
(terminal, identity.json, HTML), a length given with --needle-lengths runs whatever the budget, and a gate follows
its reference's needles."""

from __future__ import annotations

import json

import pytest

from conftest import report_json


def _plan(folder) -> dict:
    return report_json(folder)["identity"]["plan"]


def test_plan_prints_the_plan_and_writes_nothing(gate_run):
    """--oracle-plan answers with the plan on the terminal: no report folder (#52: it left `identity report (partial)`
    for a run that judged nothing), so no server log and no record either."""
    result = gate_run("--oracle-plan", "--oracle-budget=off")
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["oracle plan: prefill * tok/s, decode * tok/s (from the warm-up)",
                                 "  warm-up: 1 requests, * prompt + * generated tokens, ~*",
                                 "  primary prompts (c1): 3 requests, * prompt + 96 generated tokens, ~*",
                                 "oracle plan: about * in all", "*no tests ran*"])
    assert not result.folder.exists(), sorted(str(p) for p in result.folder.rglob("*"))
    assert "identity report" not in result.stdout.str()
    assert not (result.folder.parent / "reports").exists()  # nor a default folder beside it


def test_the_estimate_holds_within_30_percent_of_the_measured_c1_run(gate_run):
    result = gate_run("--oracle-budget=off")
    assert result.ret == 0, result.stdout.str()[-3000:]
    primary = next(p for p in _plan(result.folder)["parts"] if p["name"] == "primary prompts (c1)")
    result.stdout.fnmatch_lines(["oracle run: primary prompts (c1) took * (estimated *) · run *% of ~*, ETA *"])
    assert primary["actual_s"] > 0
    assert abs(primary["estimate_s"] - primary["actual_s"]) <= 0.3 * primary["actual_s"], primary


def test_a_budget_too_small_drops_the_default_needles_and_says_so_everywhere(gate_run):
    result = gate_run("--canaries=needle", "--needle-depths=50", "--oracle-budget=1s")
    assert result.ret == 0, result.stdout.str()[-3000:]
    out = result.stdout.str()
    assert "oracle: dropped" in out and "DROPPED" in out
    result.stdout.fnmatch_lines(["*needle[[]8176-d50[]] DROPPED: needle 8176 would take ~* s (1 depth(s)) at * tok/s "
                                 "prefill, beyond the budget of 1 s (--oracle-budget 1s; *); --needle-lengths * to run it"])
    rep = report_json(result.folder)
    plan = rep["identity"]["plan"]
    assert [d["length"] for d in plan["dropped"]] == [1024, 2048, 4096, 8176]
    for length in (1024, 2048, 4096, 8176):
        row = rep["canaries"][f"needle[{length}-d50]"]
        assert row["verdict"] == "dropped" and f"needle {length} would take ~" in row["why"], row
    assert any("would take ~" in n for n in rep["notes"])
    html = (result.folder / "identity.html").read_text()
    assert "needle 8176 would take ~" in html and "run plan" in html


def test_a_needle_length_given_runs_whatever_the_budget(gate_run):
    result = gate_run("--canaries=needle", "--needle-lengths=256", "--needle-depths=50", "--oracle-budget=1s")
    assert result.ret == 0, result.stdout.str()[-3000:]
    rep = report_json(result.folder)
    assert rep["canaries"]["needle[256-d50]"]["verdict"] != "dropped"
    assert rep["canaries"]["needle[256-d50]"]["prompt_tokens"] == 256
    plan = rep["identity"]["plan"]
    assert not plan["dropped"] and any("run whatever the budget" in n for n in plan["notes"])


def test_a_gate_follows_the_needle_set_of_its_reference(gate_run, pytester):
    needles = ("--canaries=needle", "--needle-depths=50", "--oracle-budget=off")
    rec = gate_run(*needles, "--needle-lengths=256", f"--record={pytester.path / 'ref'}", report="rec")
    assert rec.ret == 0, rec.stdout.str()[-3000:]
    manifest = json.loads((pytester.path / "ref" / "manifest.json").read_text())
    assert manifest["run"]["canary_set"] == {"needle_lengths": [256], "dropped": []}
    gate = gate_run(*needles, f"--reference={pytester.path / 'ref'}", report="gate")
    assert gate.ret == 0, gate.stdout.str()[-3000:]
    rep = report_json(gate.folder)
    assert sorted(k for k in rep["canaries"] if k.startswith("needle")) == ["needle[256-d50]"]  # not 1K..8K
    assert any("follow the reference's canary set: 256 tokens" in n for n in rep["notes"])


@pytest.mark.parametrize("given", ["--needle-lengths=512"])
def test_a_gate_given_needle_lengths_runs_those_not_the_references(gate_run, pytester, given):
    """The reference is the one above's shape, recorded here with no needle at all: the gate's own lengths win."""
    rec = gate_run("--canaries=needle", "--oracle-budget=1s", f"--record={pytester.path / 'ref'}", report="rec")
    assert rec.ret == 0, rec.stdout.str()[-3000:]
    manifest = json.loads((pytester.path / "ref" / "manifest.json").read_text())
    assert manifest["run"]["canary_set"]["needle_lengths"] == []
    assert [d["length"] for d in manifest["run"]["canary_set"]["dropped"]] == [1024, 2048, 4096, 8176]
    follows = gate_run("--canaries=needle", f"--reference={pytester.path / 'ref'}", "--collect-only", report="c")
    assert "test_needle" not in follows.stdout.str()  # the reference ran none: neither does its gate
    own = gate_run("--canaries=needle", "--needle-depths=50", given, f"--reference={pytester.path / 'ref'}",
                   "--collect-only", report="o")
    assert "test_needle[512-d50]" in own.stdout.str()
