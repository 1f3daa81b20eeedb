"""The width map: classes of widths whose complete token arrays are equal for every prompt, c1's first."""

from __future__ import annotations

from oracle.compare.width_map import class_label, outputs_of, width_map, width_words

NATS = 0.5


def row(prompt: str, sha: str, c1: str, *, first=None, margin=None, reason="") -> dict:
    same = sha == c1
    return {"prompt": prompt, "record": prompt, "completion_sha256": sha, "c1_sha256": c1,
            "vs_c1": {"verdict": "exact" if same else "divergent", "first_divergence": None if same else first,
                      "margin_nats": margin, "reason": reason}, "vs_reference": None}


def level(*shas, c1=("a1", "b1")) -> list[dict]:
    """One row per prompt ("a", "b") with these arrays (their c1 arrays: a1, b1); a split at token 3."""
    return [row(p, sha, base, first=3, margin=2.0) for p, sha, base in zip("ab", shas, c1)]


def test_a_fault_at_one_width_is_its_own_class_and_the_first_to_part():
    wm = width_map({1: level("a1", "b1"), 2: level("a1", "b1"), 3: level("a2", "b1"), 4: level("a1", "b1")},
                   proven={1: True, 2: True, 3: True, 4: True}, near_tie_nats=NATS, ladder="every:4")
    assert [(e.width, e.klass) for e in wm.entries] == [(1, "A"), (2, "A"), (3, "B"), (4, "A")]
    assert wm.first_parting == 3
    data = wm.as_json()
    assert [{k: v for k, v in c.items() if k != "outputs"} for c in data["classes"]] == [
        {"class": "A", "widths": [1, 2, 4], "prompts": {}}, {"class": "B", "widths": [3], "prompts": {"a": 3}}]
    assert data["widths"][2] | {} == {"width": 3, "class": "B", "proven": True, "records": 2, "split_records": 1,
                                      "tie_flips": 0, "confident_flips": 1, "source": "ladder"}


def test_widths_share_a_class_only_when_every_prompt_matches():
    wm = width_map({2: level("a2", "b1"), 3: level("a2", "b1"), 5: level("a2", "b3"), 8: level("a1", "b1")},
                   proven={2: True, 3: True, 5: False, 8: True}, near_tie_nats=NATS, ladder="2,3,5,8",
                   never_tried=(4, 6, 7))
    assert [(e.width, e.klass, e.source) for e in wm.entries] == [(1, "A", "c1 run"), (2, "B", "ladder"),
                                                                  (3, "B", "ladder"), (5, "C", "ladder"),
                                                                  (8, "A", "ladder")]
    classes = {c.label: (c.widths, c.first_splits) for c in wm.classes}
    assert classes == {"A": ((1, 8), {}), "B": ((2, 3), {"a": 3}), "C": ((5,), {"a": 3, "b": 3})}
    assert wm.first_parting == 2 and not wm.entries[3].proven and wm.as_json()["never_tried"] == [4, 6, 7]


def test_a_prompt_sent_twice_at_one_width_with_two_outputs_is_a_class_of_its_own():
    twice = level("a1", "b1") + [row("a", "a9", "a1", first=7, margin=0.1)]
    wm = width_map({2: level("a1", "b1"), 3: twice}, proven={}, near_tie_nats=NATS)
    assert [e.klass for e in wm.entries] == ["A", "A", "B"]
    assert wm.entries[2].tie_flips == 1 and wm.entries[2].confident_flips == 0  # margin 0.1 < 0.5: a tie flip
    assert wm.classes[1].first_splits == {"a": 7}


def test_nothing_parts_from_c1():
    wm = width_map({1: level("a1", "b1"), 2: level("a1", "b1")}, proven={}, near_tie_nats=NATS)
    assert wm.first_parting is None and [c.label for c in wm.classes] == ["A"]


def test_words_and_labels():
    assert width_words([3, 5, 6, 7]) == "3, 5, 6, 7"
    assert width_words([3, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15]) == "3, 5, 6, 7, 9-15"
    assert [class_label(i) for i in (0, 1, 25, 26)] == ["A", "B", "Z", "C27"]


def test_a_neighbour_run_with_a_widths_arrays_has_that_classs_outputs_digest():
    """The width map's picture gives a neighbour length the class whose arrays it gave (the same digest)."""
    wm = width_map({2: level("a1", "b1"), 3: level("a2", "b1")}, proven={}, near_tie_nats=NATS).as_json()
    digests = {c["class"]: c["outputs"] for c in wm["classes"]}
    beside = outputs_of(level("a2", "b1"), near_tie_nats=NATS)
    assert beside == {"outputs": digests["B"], "same_as_c1": False, "split_records": 1, "tie_flips": 0,
                      "confident_flips": 1}
    assert outputs_of(level("a1", "b1"), near_tie_nats=NATS)["outputs"] == digests["A"]
    other = outputs_of(level("a1", "b7"), near_tie_nats=NATS)
    assert other["outputs"] not in digests.values() and other["same_as_c1"] is False


def test_logprobs_moved_with_the_arrays_equal_is_no_split():
    moved = level("a1", "b1")
    moved[0]["vs_c1"]["verdict"] = "logprobs-moved"
    wm = width_map({2: moved}, proven={}, near_tie_nats=NATS)
    assert wm.entries[1].klass == "A" and wm.entries[1].split_records == 0 and wm.classes[0].first_splits == {}
    assert outputs_of(moved, near_tie_nats=NATS)["split_records"] == 0
