"""ReportState: findings applied, typed keys serialised, workers' states merged into one report."""

from pathlib import Path

from oracle.compare.verdicts import Check
from oracle.report.state import ReportState
from oracle.store.records import PRIMARY, Condition, Record, RecordKey


def _meta(pid: str, condition: Condition = PRIMARY, repeat: int = 0, sha: str = "a") -> dict:
    meta = Record(id=pid, condition=condition, prompt_ids=[1], completion_ids=[2], finish_reason="stop",
                  repeat=repeat).meta()
    return meta | {"completion_sha256": sha}


def test_findings_update_dicts_extend_lists_and_replace_the_rest():
    state = ReportState(mode="gate", backend="llamacpp")
    state.apply({"ladder": {"c2": {"verdict": "exact"}}, "notes": ["a"], "determinism": "within-boot"})
    state.apply({"ladder": {"c4": {"verdict": "divergent"}}, "notes": ["a", "b"], "complete": True})
    assert list(state.ladder) == ["c2", "c4"] and state.notes == ["a", "b"]
    assert state.determinism == "within-boot" and state.complete


def test_finished_records_are_written_by_their_key_and_counted_at_c1_only():
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p", "q"])
    state.finished[RecordKey("p", PRIMARY)] = _meta("p")
    state.finished[RecordKey("p~1", Condition(concurrency=2))] = _meta("p", Condition(concurrency=2), 1)
    data = state.as_json()
    assert list(data["records"]["finished"]) == ["p@boot1-c1", "p~1@boot1-c2"]
    assert data["missing"] == ["q"] and data["summary"]["records"] == [1, 2]


def _payload(index: int, owned: list[str], finished: list[dict], checks: list[Check]) -> dict:
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p", "q"], complete=True, closed=True)
    state.identity = {"server": {"build": "b1"}, "url": f"http://127.0.0.1:{9000 + index}"}
    for meta in finished:
        state.finished[RecordKey.of_meta(meta)] = meta
    for c in checks:
        c.outcome = "passed"
        state.judged(c)
    return {"server": index, "url": state.identity["url"], "owned": owned, "report_dir": "x",
            "state": state.as_json(), "condition_rows": {}}


def test_workers_merge_into_one_report_with_each_record_under_its_owner():
    p0 = _payload(0, ["p"], [_meta("p")], [Check("tokens[p]", "tokens", "exact", "ok")])
    # server2 owns q, and also ran p at c1 as the baseline of a ladder level on its own server.
    p1 = _payload(1, ["q"], [_meta("q"), _meta("p", sha="b")], [Check("tokens[q]", "tokens", "exact", "ok")])
    state = ReportState(mode="gate", backend="llamacpp")
    state.merge({0: p0, 1: p1}, workers=2, root=Path("/r"), allow_mixed=False)
    state.closed = True
    assert set(map(str, state.finished)) == {"p@boot1-c1", "q@boot1-c1", "p@boot1-c1@server2"}
    assert state.identity["servers_c1_crosscheck"] == {"identical": 0, "different": ["p: server1 vs server2"]}
    assert state.verdict() == "pass" and [c.id for c in state.checks] == ["tokens[p]", "tokens[q]"]


def test_a_worker_that_sent_nothing_leaves_a_partial_merged_report():
    p0 = _payload(0, ["p"], [_meta("p")], [Check("tokens[p]", "tokens", "exact", "ok")])
    state = ReportState(mode="gate", backend="llamacpp")
    state.merge({0: p0, 1: None}, workers=2, root=Path("/r"), allow_mixed=False)
    state.closed = True
    assert state.verdict() == "partial" and "server2 (worker gw1) sent no results" in state.interruption


def test_summary_counts_carry_their_wilson_intervals():
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p", "q", "r"])
    state.checks = [Check(f"tokens[{p}]", "tokens", v, "") for p, v in zip("pqr", ["exact", "exact", "near-tie"])]
    state.boots = {"2": {"counts": {"exact": 3}, "records": 3}, "3": {"counts": {"exact": 2}, "records": 3}}
    state.canaries = {"code[a]": {"family": "code", "ok": True}, "code[b]": {"family": "code", "ok": False},
                      "repeats[burst]": {"family": "burst", "ok": True, "repeats": {"n": 5, "identical": 5}}}
    state.identity = {"servers_c1_crosscheck": {"identical": 4, "different": ["p: server1 vs server2"]}}
    summary = state.as_json()["summary"]
    assert summary["exact"] == [2, 3]  # the count itself is unchanged
    assert summary["confidence"] == {
        "exact": {"k": 2, "n": 3, "wilson95": [0.2077, 0.9385]},
        "boots": {"k": 2, "n": 3, "wilson95": [0.2077, 0.9385]},
        "canaries": {"code": {"k": 1, "n": 2, "wilson95": [0.0945, 0.9055]},
                     "burst": {"k": 5, "n": 5, "wilson95": [0.5655, 1.0]}},
        "servers_c1": {"k": 4, "n": 5, "wilson95": [0.3755, 0.9638]}}


def test_a_record_run_without_boots_or_canaries_gives_only_the_exact_count():
    state = ReportState(mode="record", backend="llamacpp", prompt_ids=["p"])
    assert state.as_json()["summary"]["confidence"] == {"exact": {"k": 0, "n": 0, "wilson95": [0.0, 1.0]}}
