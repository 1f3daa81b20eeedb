"""The conditions' state (ladder levels, boots, determinism, token match): merged from several servers by its own
rule, its rows against c1 carried from each worker to the controller, and a recorded reference's noise envelope
made from them."""

from __future__ import annotations

import json
from pathlib import Path

from oracle.checks import fresh_states
from oracle.checks.conditions import ConditionsState
from oracle.compare.noise import ACROSS_BOOTS, UNMEASURED, WITHIN_BOOT_ONLY
from oracle.gate.merge import merge_workers
from oracle.report.state import ReportState
from oracle.store.records import REPEAT, Condition

BOOT2 = Condition(boot=2).key


def _row(prompt: str, first: int | None) -> dict:
    verdict = "exact" if first is None else "divergent"
    return {"prompt": prompt, "record": prompt, "verdict": verdict, "vs_reference": None,
            "vs_c1": {"verdict": verdict, "first_divergence": first, "reference_length": 32}}


def _payload(index: int, rows: dict, **sections) -> dict:
    state = ReportState(mode="record", backend="llamacpp", prompt_ids=["p"], complete=True, closed=True,
                        states=fresh_states())
    state.identity = {"server": {"build": "b1"}, **({"boots": {"2": {"url": "u"}}} if BOOT2 in rows else {})}
    state.states["conditions"].rows.update(rows)
    state.apply(sections)
    carried = state.states["conditions"].carried()
    # As a worker sends it: plain JSON.
    return json.loads(json.dumps({"url": f"http://127.0.0.1:{9000 + index}", "owned": None,
                                  "state": state.as_json(), "carried": carried}))


def _merged(*payloads) -> ReportState:
    state = ReportState(mode="record", backend="llamacpp", states=fresh_states())
    merge_workers(state, dict(enumerate(payloads)), workers=len(payloads), root=Path("/r"), allow_mixed=False)
    return state


def test_the_determinism_class_is_made_from_every_servers_rows():
    repeat = _payload(0, {REPEAT.key: [_row("p", None)]}, ladder={"c1": {"verdict": "exact"}},
                      token_match={"c1": {"vs_reference": {"k": 3, "n": 4, "records": 1, "exact_records": 0}}})
    boot = _payload(1, {BOOT2: [_row("p", 7)]}, boots={"2": {"verdict": "divergent", "counts": {"exact": 0}, "records": 1}},
                    token_match={"c1": {"vs_reference": {"k": 5, "n": 5, "records": 1, "exact_records": 1}},
                                 "boot 2": {"vs_c1": {"k": 7, "n": 8}}})
    merged = _merged(repeat, boot)
    conditions = merged.states["conditions"]
    assert conditions.determinism == WITHIN_BOOT_ONLY  # c1 repeat on server1 exact, boot 2 on server2 split
    assert set(conditions.rows) == {REPEAT.key, BOOT2}
    assert conditions.ladder == {"c1": {"verdict": "exact", "server": "server1"}}
    assert conditions.boots["2"]["server"] == "server2"
    c1 = merged.states["tokens"].token_match["c1"]["vs_reference"]
    assert (c1["k"], c1["n"], c1["records"], c1["exact_records"]) == (8, 9, 2, 1)  # the servers' counts added
    assert merged.states["tokens"].token_match["boot 2"] == {"vs_c1": {"k": 7, "n": 8}}
    data = merged.as_json()
    assert data["determinism"] == WITHIN_BOOT_ONLY
    # The boot sequence's servers belong to the server that ran it, not to the run's identity.
    assert "boots" not in data["identity"]
    assert [s["boots"] for s in data["identity"]["servers"]] == [None, {"2": {"url": "u"}}]
    envelope = conditions.for_reference().blocks["noise"]
    assert envelope["determinism"] == WITHIN_BOOT_ONLY and envelope["varies"]["p"]["first_position"] == 7


def test_without_carried_rows_the_class_is_unmeasured_and_no_envelope_is_kept():
    merged = _merged(_payload(0, {}))
    conditions = merged.states["conditions"]
    assert conditions.determinism == UNMEASURED and conditions.rows == {}
    assert conditions.for_reference().blocks == {"noise": None}
    assert merged.as_json()["determinism"] is None  # said only with a ladder or boots


def test_rows_exact_everywhere_are_deterministic_across_boots():
    state = ConditionsState(rows={REPEAT.key: [_row("p", None)], BOOT2: [_row("p", None)]}, boots={"2": {}})
    merged = ConditionsState.merge(ConditionsState(), [("server1", state)])
    assert merged.determinism == ACROSS_BOOTS and merged.to_json()["determinism"] == ACROSS_BOOTS
    assert ConditionsState.from_json(merged.to_json() | merged.carried()) == merged  # the worker's round trip


def _width_row(prompt: str, sha: str, first: int | None = None) -> dict:
    return _row(prompt, first) | {"completion_sha256": sha, "c1_sha256": "c1"} | {
        "vs_c1": {"verdict": "exact" if first is None else "divergent", "first_divergence": first,
                  "reference_length": 32, "margin_nats": 3.0, "reason": ""}}


def test_the_width_map_is_made_again_from_every_servers_levels():
    """Under -n each level ran whole on one server, which mapped only its own: the controller maps them all."""
    asked = {"ladder": "every:3", "never_tried": [], "near_tie_nats": 0.5}
    overlap = {"asked": 2, "reached": 2}
    two = _payload(0, {Condition(concurrency=2).key: [_width_row("p", "c1")]},
                   ladder={"c2": {"verdict": "exact", "overlap": overlap}}, width_map=asked | {"widths": []})
    three = _payload(1, {Condition(concurrency=3).key: [_width_row("p", "c3", first=5)]},
                     ladder={"c3": {"verdict": "divergent", "overlap": {"asked": 3, "reached": 2}}},
                     width_map=asked | {"widths": []})
    wm = _merged(two, three).states["conditions"].width_map
    assert [(w["width"], w["class"], w["proven"]) for w in wm["widths"]] == [(1, "A", True), (2, "A", True),
                                                                            (3, "B", False)]
    assert wm["first_parting"] == 3 and wm["classes"][1]["prompts"] == {"p": 5} and wm["ladder"] == "every:3"
