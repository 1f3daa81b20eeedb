"""The xdist merge: every ReportState field has a rule; workers' typed states become one report."""

from dataclasses import fields
from pathlib import Path

from oracle.checks import fresh_states
from oracle.compare.verdicts import Check
from oracle.gate.merge import MERGE_RULES, merge_workers
from oracle.report.state import ReportState
from oracle.store.records import PRIMARY, Condition, Record, RecordKey


def _meta(pid: str, condition: Condition = PRIMARY, repeat: int = 0, sha: str = "a") -> dict:
    meta = Record(id=pid, condition=condition, prompt_ids=[1], completion_ids=[2], finish_reason="stop",
                  repeat=repeat).meta()
    return meta | {"completion_sha256": sha}


def test_every_report_field_has_a_merge_rule():
    """A field added to ReportState without a rule would vanish from the merged report under pytest -n."""
    names = [f.name for f in fields(ReportState)]
    assert sorted(set(names) - set(MERGE_RULES)) == [], "add a rule to oracle/gate/merge.py MERGE_RULES"
    assert sorted(set(MERGE_RULES) - set(names)) == [], "MERGE_RULES names a field ReportState no longer has"


def _payload(index: int, owned: list[str], finished: list[dict], checks: list[Check]) -> dict:
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p", "q"], complete=True, closed=True)
    state.identity = {"server": {"build": "b1"}, "url": f"http://127.0.0.1:{9000 + index}"}
    for meta in finished:
        state.finished[RecordKey.of_meta(meta)] = meta
    for c in checks:
        c.outcome = "passed"
        state.judged(c)
    return {"server": index, "url": state.identity["url"], "owned": owned, "report_dir": "x",
            "state": state.as_json(), "carried": {}}


def test_workers_merge_into_one_report_with_each_record_under_its_owner():
    p0 = _payload(0, ["p"], [_meta("p")], [Check("tokens[p]", "tokens", "exact", "ok")])
    # server2 owns q, and also ran p at c1 as the baseline of a ladder level on its own server.
    p1 = _payload(1, ["q"], [_meta("q"), _meta("p", sha="b")], [Check("tokens[q]", "tokens", "exact", "ok")])
    state = ReportState(mode="gate", backend="llamacpp", states=fresh_states())
    merge_workers(state, {0: p0, 1: p1}, workers=2, root=Path("/r"), allow_mixed=False)
    state.closed = True
    assert set(map(str, state.finished)) == {"p@boot1-c1", "q@boot1-c1", "p@boot1-c1@server2"}
    assert state.identity["servers_c1_crosscheck"] == {"identical": 0, "different": ["p: server1 vs server2"]}
    assert state.verdict() == "pass" and [c.id for c in state.checks] == ["tokens[p]", "tokens[q]"]


def test_a_worker_that_sent_nothing_leaves_a_partial_merged_report():
    p0 = _payload(0, ["p"], [_meta("p")], [Check("tokens[p]", "tokens", "exact", "ok")])
    state = ReportState(mode="gate", backend="llamacpp", states=fresh_states())
    merge_workers(state, {0: p0, 1: None}, workers=2, root=Path("/r"), allow_mixed=False)
    state.closed = True
    assert state.verdict() == "partial" and "server2 (worker gw1) sent no results" in state.interruption



def _merged(*payloads, allow_mixed=False) -> ReportState:
    state = ReportState(mode="gate", backend="llamacpp", states=fresh_states())  # as the controller's plan
    merge_workers(state, dict(enumerate(payloads)), workers=len(payloads), root=Path("/r"), allow_mixed=allow_mixed)
    state.closed = True
    return state


def test_servers_of_different_builds_fail_the_merge_or_are_noted_when_allowed():
    p0 = _payload(0, ["p"], [_meta("p")], [Check("tokens[p]", "tokens", "exact", "ok")])
    p1 = _payload(1, ["q"], [_meta("q")], [Check("tokens[q]", "tokens", "exact", "ok")])
    p1["state"]["identity"]["server"] = {"build": "b2"}
    refused = _merged(p0, p1)
    assert refused.verdict() == "fail" and refused.checks[-1].id == "servers"
    assert refused.checks[-1].detail == "the 2 servers are not one configuration: 1 identity field(s) differ"
    allowed = _merged(p0, p1, allow_mixed=True)
    assert allowed.verdict() == "pass" and allowed.notes[-1].startswith("the servers differ (--allow-mixed-servers)")


def test_conditions_speculation_cache_and_notes_merge_per_server():
    p0 = _payload(0, ["p"], [_meta("p")], [])
    p1 = _payload(1, ["q"], [_meta("q")], [])
    p0["state"] |= {"ladder": {"c4": {"verdict": "exact"}}, "notes": ["slow"],
                    "speculation": {"drafted": 4, "accepted": 2, "drafts": 2, "source": "metrics",
                                    "per_request": {"p": {"drafted": 4, "accepted": 2}}},
                    "cache": {"verdict": "pass", "requests": 1, "requests_with_cache_field": 1, "cached_requests": {}},
                    "evidence": {"token_ids": True}, "runs": [{"condition": "boot1-c1"}]}
    p1["state"] |= {"ladder": {"c2": {"verdict": "exact"}}, "boots": {"2": {"verdict": "exact"}},
                    "speculation": {"drafted": 6, "accepted": 6, "drafts": 2, "source": "metrics", "per_request": {}},
                    "cache": {"verdict": "inconclusive", "requests": 2, "requests_with_cache_field": 0,
                              "cached_requests": {"q": 3}},
                    "canaries": {"code[a]": {"family": "code", "ok": True}}, "interruption": "boot 2 failed"}
    state = _merged(p0, p1)
    conditions = state.states["conditions"]
    assert list(conditions.ladder) == ["c2", "c4"] and conditions.ladder["c4"]["server"] == "server1"
    assert conditions.boots == {"2": {"verdict": "exact", "server": "server2"}}
    speculation, cache = state.states["speculation"].report, state.states["cache_zero"].report
    assert (speculation["drafted"], speculation["accepted"]) == (10, 8)
    assert cache["verdict"] == "inconclusive" and cache["cached_requests"] == {"q@server2": 3}
    assert state.states["tokens"].evidence == {"token_ids": True}
    assert state.runs == [{"condition": "boot1-c1", "server": "server1"}]
    assert state.notes == ["server1: slow"] and list(state.states["canaries"].rows) == ["code[a]"]
    assert state.interruption == "server2: boot 2 failed" and not state.complete and state.verdict() == "partial"
