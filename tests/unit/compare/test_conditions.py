"""Ladder waves, overlap, per-condition verdicts, the noise envelope and determinism classes: pure, fast."""

from __future__ import annotations

import pytest

from oracle.compare.conditions import (compare_condition, condition_check, condition_confidence, headline_parts,
                                      required_exact)
from oracle.run.ladder import ladder_condition, ladder_waves
from oracle.compare.noise import NoiseEnvelope, classify_determinism
from oracle.run.overlap import achieved_concurrency, max_overlap, unproven_overlap
from oracle.run.prompting import RenderedPrompt
from oracle.run.suite import Prompt
from oracle.store.records import Condition, Record
from oracle.compare.verdicts import INCONCLUSIVE, Check, passed


def prompt(pid: str) -> RenderedPrompt:
    return RenderedPrompt(prompt=Prompt(id=pid, klass="chat", messages=(), max_tokens=4), text=pid, ids=(1, 2))


def rec(pid: str, ids, *, repeat=0, cond=Condition(), started=0.0, times=None, tops=None) -> Record:
    tops = tops or {}
    return Record(id=pid, condition=cond, prompt_ids=[1, 2], completion_ids=list(ids), finish_reason="length",
                  logprobs=[dict(tops.get(i, [(tok, -0.1)])).get(tok, -0.1) for i, tok in enumerate(ids)],
                  top_ids=[[t for t, _ in tops.get(i, [(tok, -0.1)])] for i, tok in enumerate(ids)],
                  top_logprobs=[[lp for _, lp in tops.get(i, [(tok, -0.1)])] for i, tok in enumerate(ids)],
                  token_times_s=times or [], started_at=started, repeat=repeat)


def test_waves_cycle_the_suite_in_full_waves():
    ps = [prompt(p) for p in "abc"]
    assert [[(p.id, i) for p, i in w] for w in ladder_waves(ps, 2, "cycle")] == [[("a", 0), ("b", 1)],
                                                                                   [("c", 2), ("a", 3)]]
    assert [len(w) for w in ladder_waves(ps, 8, "cycle")] == [8]
    assert [[p.id for p, _ in w] for w in ladder_waves(ps, 1, "cycle")] == [["a"], ["b"], ["c"]]
    assert {p.id for p, _ in ladder_waves(ps, 4, "same")[0]} == {"a"}
    assert ladder_condition(1).key == "boot1-c1-r2" and ladder_condition(8).key == "boot1-c8"
    assert Condition.from_key("boot1-c1-r2") == Condition(1, 1, 2)


def test_overlap_counts_only_requests_generating_together():
    assert max_overlap([(0, 10), (1, 9), (2, 8)]) == 3
    assert max_overlap([(0, 1), (2, 3), (4, 5)]) == 1  # queued one behind the other: no overlap
    assert max_overlap([(0, 1), (1, 2)]) == 2  # touching at one instant
    records = [rec("a", [1, 2], started=0.0, times=[1.0, 5.0]), rec("b", [1, 2], started=0.5, times=[4.0, 9.0])]
    assert achieved_concurrency(records) == 2
    records[1].token_times_s = [6.0, 9.0]  # its first token came after the other's last
    assert achieved_concurrency(records) == 1


def test_an_unproven_level_asks_for_slots_unless_the_server_counted_the_level_running():
    slots = "give the server more slots: llama-server -np N, vllm serve --max-num-seqs N"
    for peak in (None, 0, 3):  # no gauge, or one that saw fewer running than the level asks
        line = unproven_overlap(4, 3, server_peak=peak)
        assert line.startswith("only 3 of 4 requests generated at the same time") and slots in line, line
    line = unproven_overlap(2, 1, server_peak=2)  # the server ran both; the client got one stream after the other
    assert line.startswith("only 1 of 2 requests streamed at the same time, although the server counted 2 "
                           "running: their streams reached this client one after another") and slots not in line
    assert "a buffering proxy, or a front end short of CPU" in line

def test_required_exact_from_ladder_min():
    assert required_exact(32, 32, ((32, 29, 32),)) == 29
    assert required_exact(8, 16, ((8, 7, 8),)) == 14
    assert required_exact(4, 4, ((32, 29, 32),)) == 4


def level_rows(candidates, envelope=None, reference=None):
    oracle = {"a": rec("a", [1, 2, 3, 4]), "b": rec("b", [5, 6, 7, 8])}
    records = [rec(pid, ids, repeat=i) for i, (pid, ids) in enumerate(candidates)]
    return compare_condition(records, oracle, reference, envelope, near_tie_nats=0.5)


def test_condition_check_verdicts_and_thresholds():
    rows = level_rows([("a", [1, 2, 3, 4]), ("b", [5, 6, 7, 8])])
    assert condition_check("ladder[c2]", "ladder", "c2", rows, required=2, recording=False).verdict == "exact"
    rows = level_rows([("a", [1, 2, 9, 4]), ("b", [5, 6, 7, 8])])
    check = condition_check("ladder[c2]", "ladder", "c2", rows, required=2, recording=False)
    assert check.verdict == "divergent" and "first divergences at tokens 2" in check.detail
    assert check.lines == ["a: vs c1: divergent at token 2"]
    assert condition_check("x", "ladder", "c2", rows, required=1, recording=False).verdict == "pass"
    assert condition_check("x", "ladder", "c2", rows, required=2, recording=True).verdict == "info"


def test_near_tie_rows_need_allow_near_ties():
    oracle = {"a": rec("a", [1, 2, 3], tops={1: [(2, -0.6), (7, -0.7)]})}
    rows = compare_condition([rec("a", [1, 7, 3], tops={1: [(7, -0.6), (2, -0.7)]})], oracle, None, None,
                             near_tie_nats=0.5)
    check = condition_check("x", "ladder", "c2", rows, required=1, recording=False)
    assert check.verdict == "near-tie"
    assert not passed(check, allow_near_ties=False, allow_inconclusive=())
    assert passed(check, allow_near_ties=True, allow_inconclusive=())


def test_reference_is_compared_too_and_the_worse_verdict_counts():
    reference = {"a": rec("a", [1, 2, 3, 0]), "b": rec("b", [5, 6, 7, 8])}
    rows = level_rows([("a", [1, 2, 3, 4])], reference=reference)
    assert rows[0]["vs_c1"]["verdict"] == "exact" and rows[0]["verdict"] == "divergent"
    assert rows[0]["vs_reference"]["first_divergence"] == 3


def test_a_conditions_counts_carry_their_wilson_intervals():
    reference = {"a": rec("a", [1, 2, 3, 0]), "b": rec("b", [5, 6, 7, 8])}
    rows = level_rows([("a", [1, 2, 3, 4]), ("b", [5, 6, 7, 8])], reference=reference)
    assert condition_confidence(rows) == {"exact": {"k": 1, "n": 2, "wilson95": [0.0945, 0.9055]},
                                          "vs_c1": {"k": 2, "n": 2, "wilson95": [0.3424, 1.0]},
                                          "vs_reference": {"k": 1, "n": 2, "wilson95": [0.0945, 0.9055]}}
    assert "vs_reference" not in condition_confidence(level_rows([("a", [1, 2, 3, 4])]))


def test_headline_parts_name_the_count_each_states():
    ladder = {"c8": {"counts": {"exact": 7}, "records": 8, "speed": {"throughput_tok_s": 412.2}}}
    boots = {"2": {"counts": {"exact": 11}, "records": 12}, "3": {"counts": {"exact": 12}, "records": 12}}
    assert headline_parts(ladder, boots) == [("c8 7/8 (412 tok/s)", (7, 8)), ("boots 2/3", (2, 3))]


def test_noise_envelope_marks_splits_at_or_after_the_references_own():
    ref_rows = {"boot2-c1": level_rows([("a", [1, 2, 3, 9]), ("b", [5, 6, 7, 8])])}
    env = NoiseEnvelope.from_rows(ref_rows, determinism="within-boot-only")
    assert env.varies == {"a": {"first_position": 3, "conditions": {"boot2-c1": 3}}}
    assert env.covers("a", 3) and not env.covers("a", 2) and not env.covers("b", 3)
    assert NoiseEnvelope.from_json(env.as_json()).varies == env.varies
    rows = level_rows([("a", [1, 2, 3, 7]), ("b", [5, 6, 0, 8])], envelope=env)
    assert [r["verdict"] for r in rows] == ["within-reference-noise", "divergent"]
    check = condition_check("x", "ladder", "c2", rows[:1], required=1, recording=False)
    assert check.verdict == "within-reference-noise"
    assert passed(check, allow_near_ties=False, allow_inconclusive=())


def test_determinism_classes():
    same = level_rows([("a", [1, 2, 3, 4])])
    split = level_rows([("a", [1, 2, 0, 4])])
    assert classify_determinism(None, [same]) == "unmeasured"
    assert classify_determinism(split, [same]) == "not-within-boot"
    assert classify_determinism(same, [split]) == "within-boot-only"
    assert classify_determinism(same, [same]) == "across-boots"
    assert classify_determinism(same, []) == "within-boot"


def test_overlap_inconclusive_passes_only_when_allowed():
    check = Check("ladder[c16]", "ladder", INCONCLUSIVE, "reached 8 of 16", inconclusive_kind="overlap")
    assert not passed(check, allow_near_ties=False, allow_inconclusive=("cache",))
    assert passed(check, allow_near_ties=False, allow_inconclusive=("overlap",))


@pytest.mark.parametrize("args, message", [
    (["--ladder=0,2"], "*levels must be between 1 and 1024*"),
    (["--ladder=two"], "*expected comma-separated concurrency levels*"),
    (["--ladder=2", "--ladder-min=c2=3/2"], "*expected cLEVEL=EXACT/TOTAL with EXACT <= TOTAL*"),
    (["--ladder=2", "--ladder-min=c4=3/4"], "*names c4, which is not a --ladder level*"),
    (["--ladder-mode=random"], "*must be cycle*"),
    (["--boots=2", "--oracle-url=http://127.0.0.1:1"], "*--boots 2 needs a server oracle can restart*"),
])
def test_ladder_and_boot_usage_errors(pytester, args, message):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
