"""Spine part 2 on the real server: nothing lost, nothing overwritten, speculation shown."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import time

import pytest

from conftest import gate_argv

pytestmark = pytest.mark.slow

SPEC_PROMPTS = [
    {"id": "repeat-list", "class": "repetition", "max_tokens": 128, "messages": [
        {"role": "system", "content": "Session a91f03c7e2. You are a helpful assistant."},
        {"role": "user", "content": "Copy this text exactly, three times, one copy per line: The quick brown fox "
                                    "jumps over the lazy dog near the river bank at dawn."}]},
    {"id": "repeat-code", "class": "repetition", "max_tokens": 128, "messages": [
        {"role": "system", "content": "Session 7c22de90b1. You are a helpful assistant."},
        {"role": "user", "content": "Rewrite this Python code with the variable x renamed to total, changing "
                                    "nothing else:\n\nx = 0\nfor i in range(10):\n    x = x + i\n    print(i, x)\n"
                                    "print('done', x)\n"}]},
]


def tree_digest(path):
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def test_tampered_reference_is_refused_and_record_does_not_overwrite(gate_run, pytester):
    gate_run("--record=ref", report="rec").assert_outcomes(passed=5)
    ref = pytester.path / "ref"
    before = tree_digest(ref)
    result = gate_run("--record=ref", report="again")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--record*ref: a reference is already there and was left untouched*"
                                 "--record-overwrite*"])
    assert tree_digest(ref) == before
    npz = ref / "records" / "boot1-c1" / "code-hashmap.npz"
    npz.write_bytes(npz.read_bytes()[:-8] + b"tampered")
    result = gate_run("--reference=ref", report="tainted")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*tainted:*code-hashmap.npz does not match its sha256*--record-overwrite*"])
    assert not (pytester.path / "tainted").exists()  # refused before any server started
    gate_run("--record=ref", "--record-overwrite", report="over").assert_outcomes(passed=5)
    gate_run("--reference=ref", report="clean").assert_outcomes(passed=5)


def test_killing_the_server_midway_leaves_a_partial_report(llama_server, tiny_suite, tmp_path):
    server = llama_server()
    report = tmp_path / "killed"
    cmd = gate_argv(f"--oracle-url={server.url}", f"--oracle-suite={tiny_suite}", "--max-tokens=200", f"--report-dir={report}",
                    "--rootdir", str(tmp_path), "--canaries=none")
    gate = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((report / "records" / "boot1-c1").glob("*.json")):
        time.sleep(0.05)
    server.stop(grace_s=0)  # SIGTERM the whole server process group mid-run
    out, _ = gate.communicate(timeout=120)
    assert gate.returncode == pytest.ExitCode.INTERRUPTED, out
    # A SIGTERMed llama-server resets or closes the open stream, depending on where it was; on a busy machine
    # the gate may not have opened the second request's connection yet, and then it finds nobody listening.
    assert re.search(r"oracle: the run stopped midway: prompt 'code-hashmap' \(boot1-c1, request 2 of 3\): (POST "
                     r"http://127\.0\.0\.1:\d+/completion: the connection broke after \d+ tokens: reset or closed by "
                     r"the server \(\w+.*\)|POST /completion: the stream ended without its final message after \d+ "
                     r"tokens \(server died or connection cut\)|POST http://127\.0\.0\.1:\d+/completion: could not "
                     r"connect: the server is gone \(ConnectError: .*\))\. The run stops here\. No request was "
                     r"retried; 1 finished record\(s\) of that condition kept in .*/records; check the server's log",
                     out), out
    rep = json.loads((report / "identity.json").read_text())
    assert rep["verdict"] == "partial"
    # The server dies as soon as the first record lands: the second prompt (up to 200 tokens) cannot finish
    # in the 50 ms that takes.
    finished = sorted(p.stem for p in (report / "records" / "boot1-c1").glob("*.json"))
    assert finished == ["code-palindrome"], out
    assert rep["missing"] == ["code-hashmap", "math-derivative"]
    assert list(rep["records"]["finished"]) == ["code-palindrome@boot1-c1"]
    assert "partial" in (report / "identity.md").read_text().splitlines()[0].lower()
    assert {c["id"]: (c["verdict"], c["outcome"]) for c in rep["checks"]} == {
        "record[code-palindrome]": ("pass", "passed"), "record[code-hashmap]": ("not-run", "failed"),
        "record[math-derivative]": ("not-run", "failed"), "cache-zero": ("not-run", "failed"),
        "speculation": ("not-run", "failed")}
    assert "1 passed, 4 not-run" in out


def test_speculative_candidate_shows_drafted_and_accepted(gate_run, tmp_path, read_report):
    suite = tmp_path / "spec.jsonl"
    suite.write_text("".join(json.dumps(p) + "\n" for p in SPEC_PROMPTS))
    gate_run("--record=ref", suite=suite, max_tokens=None, report="rec").assert_outcomes(passed=4)
    result = gate_run("--reference=ref", "--server-args=--spec-type ngram-simple", "--speculative",
                      suite=suite, max_tokens=None, report="spec")
    rep = read_report(result.folder)
    spec = rep["speculation"]
    # llama-server gives each request's draft counts in its timings; the totals are their sums. How many tokens
    # are drafted follows the output path, which this machine's build fixes (60 drafted, 11 accepted measured
    # here), so the relations are asserted, not a count from one CPU.
    per_request = spec["per_request"]
    assert set(per_request) == {"repeat-list@boot1-c1", "repeat-code@boot1-c1"}
    assert spec["source"] == "per-request timings" and spec["declared"] is True
    assert spec["drafted"] == sum(v["drafted"] for v in per_request.values()) > 0
    assert spec["accepted"] == sum(v["accepted"] for v in per_request.values()) > 0
    assert all(0 <= v["accepted"] <= v["drafted"] for v in per_request.values())
    assert spec["rate"] == spec["accepted"] / spec["drafted"]
    # token verdicts beside it: ngram speculation keeps greedy output identical on this model
    assert [c["verdict"] for c in rep["checks"] if c["kind"] == "tokens"] == ["exact", "exact"]
    md = (result.folder / "identity.md").read_text()
    assert f"drafted {spec['drafted']:g}, accepted {spec['accepted']:g}, rate" in md
    assert "| repeat-list@boot1-c1 |" in md
    result.assert_outcomes(passed=4)  # ngram speculation keeps greedy output identical on this model


def test_draft_model_speculation_reports_rate_and_mean_accepted_length(gate_run, model_path, read_report):
    """-md with the same GGUF: the draft agrees almost always, and the outputs stay those of the target alone."""
    gate_run("--record=ref", max_tokens=64, report="rec").assert_outcomes(passed=5)
    # Not declared: the server's /slots shows the draft model, so speculation must be proven all the same.
    result = gate_run("--reference=ref", f"--server-args=--spec-type draft-simple -md {model_path}",
                      max_tokens=64, report="draft")
    result.assert_outcomes(passed=5)
    rep = read_report(result.folder)
    spec = rep["speculation"]
    assert spec["accepted"] > 0.9 * spec["drafted"] > 0 and spec["mean_accepted_length"] > 1
    assert [c["verdict"] for c in rep["checks"] if c["kind"] == "tokens"] == ["exact"] * 3
    speculation = [c for c in rep["checks"] if c["id"] == "speculation"][0]
    assert speculation["verdict"] == "pass" and "rate" in speculation["detail"]
    evidence = speculation["evidence"]
    assert evidence["server_config"] == "speculative decoding on (/slots speculative: true)" and not evidence["declared"]
    assert "mean accepted length" in (result.folder / "identity.md").read_text()


def test_speculation_that_never_drafts_is_inconclusive(gate_run, shared_reference, read_report):
    result = gate_run(f"--reference={shared_reference}", "--speculative", report="nospec")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*speculation INCONCLUSIVE*"])
    check = [c for c in read_report(result.folder)["checks"] if c["kind"] == "speculation"][0]
    assert check["verdict"] == "inconclusive" and check["outcome"] == "failed"


def _cut_after(tokens: int, *, stall_s: float = 0.0):
    """Chunk rewriter: after `tokens` tokens of the 2nd request, stall (hang) or cut the stream."""

    def rewrite(chunk, ctx):
        ctx["tokens_seen"] += len(chunk.get("tokens") or [])
        if ctx.get("index") == 2 and ctx["tokens_seen"] > tokens:
            if stall_s:
                time.sleep(stall_s)
            raise ConnectionAbortedError("planted: stream cut")
        return chunk

    return rewrite


# The hang is planted far past its --request-timeout, and the timeout far past any silence of a busy 2-core
# machine's llama-server (5 s was seen mid-generation): only the planted stall can trip it.
@pytest.mark.parametrize("fault, timeout, expect", [
    ({"stall_s": 50.0}, ("--request-timeout=20",), "the server sent no token for * s after 5 tokens "
                                                   "(keep-alive comments are not tokens), and the request reached "
                                                   "--request-timeout 20 s in all: it hangs, or needs a longer*"),
    ({}, (), "POST /completion: the stream ended without its final message after 5 tokens (server died or "
             "connection cut)"),
], ids=["hang", "truncated"])
def test_hung_or_truncated_response_stops_the_run_with_a_partial_report(gate_run, shared_server, read_report,
                                                                       fault, timeout, expect):
    from conftest import NO_WARMUP
    from proxy import FaultProxy

    server = shared_server
    with FaultProxy(server.url, rewrite_chunk=_cut_after(5, **fault)) as proxy:
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", *timeout, report="faulted")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*the run stopped midway: prompt 'code-hashmap' (boot1-c1, request 2 of 3): *{expect}"
                                 f". The run stops here. No request was retried; 1 finished record(s) of that "
                                 f"condition kept in {result.folder / 'records'}; check the server's log"])
    rep = read_report(result.folder)
    assert rep["verdict"] == "partial" and rep["missing"] == ["code-hashmap", "math-derivative"]
    assert list(rep["records"]["finished"]) == ["code-palindrome@boot1-c1"]
    assert sorted(p.name for p in (result.folder / "records" / "boot1-c1").iterdir()) == [
        "code-palindrome.json", "code-palindrome.npz"]
    assert "partial" in (result.folder / "identity.md").read_text().splitlines()[0].lower()
    assert proxy.completions == 2  # nothing was retried
