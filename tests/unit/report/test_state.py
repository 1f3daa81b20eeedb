"""ReportState: findings applied, typed keys serialised and read back."""

import json
from dataclasses import MISSING, fields

from oracle.checks import fresh_states, read_state
from oracle.compare.verdicts import Check
from oracle.report.state import ReportState
from oracle.compare.noise import UNMEASURED
from oracle.store.records import PRIMARY, Condition, Record, RecordKey


def _meta(pid: str, condition: Condition = PRIMARY, repeat: int = 0, sha: str = "a") -> dict:
    meta = Record(id=pid, condition=condition, prompt_ids=[1], completion_ids=[2], finish_reason="stop",
                  repeat=repeat).meta()
    return meta | {"completion_sha256": sha}


def test_findings_update_dicts_extend_lists_and_replace_the_rest():
    state = ReportState(mode="gate", backend="llamacpp", states=fresh_states())
    state.apply({"ladder": {"c2": {"verdict": "exact"}}, "notes": ["a"], "determinism": "within-boot"})
    state.apply({"ladder": {"c4": {"verdict": "divergent"}}, "notes": ["a", "b"], "complete": True})
    conditions = state.states["conditions"]  # a check kind's own keys go to its state
    assert list(conditions.ladder) == ["c2", "c4"] and state.notes == ["a", "b"]
    assert conditions.determinism == "within-boot" and state.complete


def test_finished_records_are_written_by_their_key_and_counted_at_c1_only():
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p", "q"])
    state.finished[RecordKey("p", PRIMARY)] = _meta("p")
    state.finished[RecordKey("p~1", Condition(concurrency=2))] = _meta("p", Condition(concurrency=2), 1)
    data = state.as_json()
    assert list(data["records"]["finished"]) == ["p@boot1-c1", "p~1@boot1-c2"]
    assert data["missing"] == ["q"] and data["summary"]["records"] == [1, 2]


def test_summary_counts_carry_their_wilson_intervals():
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["p", "q", "r"], states=fresh_states())
    state.checks = [Check(f"tokens[{p}]", "tokens", v, "") for p, v in zip("pqr", ["exact", "exact", "near-tie"])]
    state.apply({"boots": {"2": {"counts": {"exact": 3}, "records": 3}, "3": {"counts": {"exact": 2}, "records": 3}}})
    state.apply({"canaries": {
        "code[a]": {"family": "code", "ok": True}, "code[b]": {"family": "code", "ok": False},
        "repeats[burst]": {"family": "burst", "ok": True, "repeats": {"n": 5, "identical": 5}}}})
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


def _default(f):
    return f.default_factory() if f.default_factory is not MISSING else f.default


_SECTIONS = {  # the sections: each kept by the run's own field or by a check kind's state
    "runs": [{"condition": "boot1-c1", "records": 2}], "speculation": {"drafted": 4, "accepted": 3},
    "cache": {"verdict": "pass"}, "evidence": {"token_ids": True},
    "canaries": {"code[a]": {"family": "code", "ok": True}}, "ladder": {"c2": {"verdict": "exact"}},
    "boots": {"2": {"verdict": "exact", "counts": {"exact": 2}, "records": 2}}, "determinism": "within-boot",
    "speed": {"label": "headline", "cells": {"repeats": 3, "cells": {"p512/g1": {"status": "measured"}}}},
    "logits": {"overall": {"positions": 0}}, "decode_vs_prefill": {"modes": {"one-pass": {"positions": 3}}},
    "chunked_prefill": {"modes": {"chunks-4": {"chunk": 4}}}, "prompt_logprob": {"candidate": -0.66},
    "coverage": {"boot1-c2": {"mixed-batch": {"held": True, "detail": "d", "how": "h"}}},
    "sampling": {"settings": {"temperature": 0.8}, "distribution": {"verdict": "consistent"}},
    "token_match": {"c1": {"vs_reference": {"k": 3, "n": 4}}},
}


def _every_field_set() -> ReportState:
    """A state whose every field differs from its default: a field added to ReportState and left out of this
    sample fails test_the_sample_sets_every_field; one left out of as_json / from_json fails the round trip."""
    state = ReportState(
        mode="gate", backend="vllm", started_utc="2026-01-02T03:04:05Z",
        identity={"backend": "vllm", "server": {"build": "b1"}}, suite={"name": "s", "prompts": 2},
        reference={"path": "/ref", "kind": "f16"}, prompt_ids=["p", "q"],
        finished={RecordKey("p", PRIMARY): _meta("p"), RecordKey("q~1", Condition(concurrency=2), "server2"):
                  _meta("q", Condition(concurrency=2), 1)},
        checks=[Check("tokens[p]", "tokens", "exact", "ok", ["  a line"], {"first": 3}, "passed", "overlap")],
        interruption="stopped", complete=True, closed=True, recorded_reference="/ref2", notes=["a note"],
        localize={"status": "not-run", "detail": "not run: a reason"},
        states=fresh_states(), sealing={"judged_under": {"near_tie_nats": 0.5}})
    state.apply(_SECTIONS)
    return state


def test_the_sample_sets_every_field():
    sample = _every_field_set()
    left = [f.name for f in fields(ReportState) if getattr(sample, f.name) == _default(f)]
    assert left == [], f"give these fields a non-default value in _every_field_set: {left}"


def test_the_cells_are_kept_under_the_speed_card():
    data = _every_field_set().as_json()
    assert data["speed"] == {"label": "headline", "cells": {"repeats": 3, "cells": {"p512/g1": {"status": "measured"}}}}
    alone = ReportState(mode="run", backend="llamacpp", states=fresh_states())
    alone.apply({"speed": {"cells": {"repeats": 1, "cells": {}}}})  # the cells' finding, without a card
    back = read_state(alone.as_json())
    assert back.states["speed"].card is None and back.states["speed"].cells == {"repeats": 1, "cells": {}}


def test_a_state_reads_back_from_its_json():
    sample = _every_field_set()
    assert read_state(sample.as_json()) == sample
    # as the xdist worker sends it: through JSON text
    assert read_state(json.loads(json.dumps(sample.as_json(), default=str))) == sample
    fresh = ReportState(mode="record", backend="llamacpp", started_utc="x", states=fresh_states())
    assert read_state(fresh.as_json()) == fresh and fresh.states["conditions"].determinism == UNMEASURED


def test_a_report_written_before_backend_complete_and_closed_were_kept_reads_them_from_identity_and_verdict():
    data = _every_field_set().as_json()
    for key in ("backend", "complete", "closed"):
        del data[key]
    state = read_state(data)  # its verdict is partial (it was interrupted)
    assert (state.backend, state.complete, state.closed) == ("vllm", False, False)
