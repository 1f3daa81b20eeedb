"""Concurrency ladder on the real llama-server: per-level counts, proof of overlap, a fault only under load."""

from __future__ import annotations

import pytest

from proxy import FaultProxy, change_token_when_busy

pytestmark = pytest.mark.slow


def test_ladder_levels_with_overlap_and_a_level_the_slots_cannot_reach(gate_run, read_report):
    result = gate_run("--server-args=-np 8", "--ladder=1,2,4,8,16", report="ladder")
    assert result.ret == 1
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 3 + 2 + 4 and outcomes["inconclusive"] == 1
    result.stdout.fnmatch_lines(["*ladder[[]c16[]] INCONCLUSIVE*", "*overlap reached 8 of 16*",
                                 "*only 8 of 16 requests generated at the same time: the level was not proven (give "
                                 "the server more slots: llama-server -np N, vllm serve --max-num-seqs N)*"])
    # The live progress line, one per condition (written whole when the output is not a terminal).
    result.stdout.fnmatch_lines(["oracle boot1-c1: 3/3 records, 96 tokens, * tok/s · run *% of ~* s, ETA * s",
                                 "oracle boot1-c8: 8/8 records, 256 tokens, * tok/s · run *% of ~* s, ETA * s"])
    rep = read_report(result.folder)
    ladder = rep["ladder"]
    assert list(ladder) == ["c1", "c2", "c4", "c8", "c16"]
    # 3 prompts cycled in full waves: c2 sends 2 waves of 2, c4 one wave of 4, c8 one of 8, c16 one of 16.
    assert [ladder[k]["records"] for k in ladder] == [3, 4, 4, 8, 16]
    for level in (2, 4, 8):
        assert ladder[f"c{level}"]["overlap"]["reached"] == level, ladder[f"c{level}"]
        assert ladder[f"c{level}"]["verdict"] == "exact"
    assert ladder["c16"]["overlap"]["reached"] == 8 and ladder["c16"]["verdict"] == "inconclusive"
    assert ladder["c8"]["overlap"]["server_peak"] == 8
    assert ladder["c16"]["confidence"]["exact"] == {"k": 16, "n": 16, "wilson95": [0.8064, 1.0]}
    assert rep["determinism"] == "within-boot"
    md = (result.folder / "identity.md").read_text()
    assert "| c16 | 16/16 (0.81–1.00) | 0 | 0 | 0 | 16 | 8/16 (server 8) | inconclusive | - |" in md
    assert len(list((result.folder / "records" / "boot1-c16").glob("*.npz"))) == 16


def test_streams_passed_one_at_a_time_leave_the_level_unproven_though_the_server_ran_both(gate_run, llama_server,
                                                                                         read_report):
    """A proxy passes one completion's stream at a time and holds the other until the first has ended, as a front
    end that withholds a stream: llama-server (-np 2) generates both at once and its gauge counts 2 running, but
    the client receives them one after the other. The level is not proven (inconclusive, kind overlap, exit 1),
    and its line says the streams were held back on their way, not that the server lacks slots."""
    server = llama_server("-np 2")
    with FaultProxy(server.url, one_stream_at_a_time=True) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", "--ladder=2", report="held", max_tokens=96)
    assert result.ret == 1
    c2 = read_report(result.folder)["ladder"]["c2"]
    assert c2["verdict"] == "inconclusive" and c2["counts"]["exact"] == 4, c2
    assert c2["overlap"]["per_wave"] == [1, 1] and c2["overlap"]["server_peak"] == 2, c2["overlap"]
    result.stdout.fnmatch_lines(["*ladder[[]c2[]] INCONCLUSIVE*",
                                 "*only 1 of 2 requests streamed at the same time, although the server counted 2 "
                                 "running: their streams reached this client one after another*"])


def test_a_token_changed_only_under_load_fails_c4_and_c8_not_c1_c2(gate_run, llama_server, read_report):
    server = llama_server("-np 8")
    with FaultProxy(server.url, rewrite_chunk=change_token_when_busy(at_least=4, position=3)) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", "--ladder=1,2,4,8", "--allow-inconclusive=overlap", report="busy")
    assert result.ret == 1
    rep = read_report(result.folder)
    outcome = {c["id"]: (c["verdict"], c["outcome"]) for c in rep["checks"]}
    assert outcome["ladder[c1]"] == ("exact", "passed") and outcome["ladder[c2]"] == ("exact", "passed")
    assert outcome["ladder[c4]"] == ("divergent", "failed") and outcome["ladder[c8]"] == ("divergent", "failed")
    assert rep["ladder"]["c8"]["first_divergences"] == [3] * 8
    result.stdout.fnmatch_lines(["*ladder[[]c4[]]: divergent: c4: 0/4 exact; first divergences at tokens 3, 3, 3, 3*"])


def test_ladder_min_accepts_a_level_with_enough_exact_records(gate_run, llama_server, read_report):
    server = llama_server("-np 4")
    with FaultProxy(server.url, rewrite_chunk=change_token_when_busy(at_least=4, position=3)) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", "--ladder=2,4", "--ladder-min=c4=0/4", report="min")
    result.assert_outcomes(passed=3 + 2 + 2)
    c4 = [c for c in read_report(result.folder)["checks"] if c["id"] == "ladder[c4]"][0]
    assert c4["verdict"] == "pass" and "(at least 0 required)" in c4["detail"]


def test_prefix_cache_reused_at_a_level_fails_it(gate_run, shared_server, read_report):
    """A proxy turns prompt caching back on: the c1 repeat finds its prompts cached and fails the level."""
    server = shared_server

    def cache_on(path, body):
        return dict(body, cache_prompt=True) if path.startswith("/completion") else body

    with FaultProxy(server.url, rewrite_request=cache_on) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", "--ladder=1", report="cached")
    assert result.ret == 1
    check = [c for c in read_report(result.folder)["checks"] if c["id"] == "ladder[c1]"][0]
    assert check["verdict"] == "fail" and check["detail"].startswith("prefix cache was reused")
    assert check["evidence"]["cache"]["verdict"] == "fail"
    result.stdout.fnmatch_lines(["*ladder[[]c1[]]: fail: prefix cache was reused*"])
