"""Classes of identical token arrays, from records on disk (no server)."""

from __future__ import annotations

from pathlib import Path

from oracle.store.records import PRIMARY, REPEAT, Record, save_record
from oracle.sweep.classes import equals_reference, signature, token_classes

REF = {"a": [1, 2, 3, 4], "b": [5, 6, 7]}


def records(folder: Path, completions: dict[str, list[int]], condition=PRIMARY) -> Path:
    for rid, ids in completions.items():
        save_record(folder / "records", Record(rid, condition, [9, 9], ids, "length"))
    return folder / "records"


def test_a_signature_is_every_primary_completion_whole(tmp_path):
    folder = records(tmp_path, REF)
    records(tmp_path, {"a": [0]}, condition=REPEAT)  # another condition: not the primary run's
    assert signature(folder) == {"a": (1, 2, 3, 4), "b": (5, 6, 7)}
    assert signature(tmp_path / "nothing") == {}


def test_points_group_by_identical_arrays_and_one_class_equals_the_reference(tmp_path):
    ref = signature(records(tmp_path / "ref", REF))
    same = {"a": [1, 2, 3, 4], "b": [5, 6, 7]}
    late = {"a": [1, 2, 3, 8], "b": [5, 6, 7]}  # splits at the last token only
    other = {"a": [1, 2, 9, 9], "b": [5, 6, 7]}  # splits at token 3
    sigs = {k: signature(records(tmp_path / f"p{k}", c)) for k, c in
            {1: same, 2: late, 3: same, 4: other, 5: late}.items()}
    found = token_classes({**sigs, 6: {}}, ref)  # point 6 finished nothing: in no class
    assert [(c.name, c.points, c.equals_reference, c.prompts) for c in found] == [
        ("A", (1, 3), True, 2), ("B", (2, 5), False, 2), ("C", (4,), False, 2)]
    assert found[1].as_json() == {"name": "B", "points": [2, 5], "prompts": 2, "equals_reference": False}


def test_a_point_run_on_some_prompts_is_judged_on_those():
    ref = {"a": (1, 2), "b": (3, 4)}
    assert equals_reference({"a": (1, 2)}, ref)
    assert not equals_reference({"a": (1, 2), "c": (3, 4)}, ref)  # a prompt the reference lacks
    assert not equals_reference({}, ref)
