"""Reference store: atomic, never overwritten by accident, tainted files refused."""

import hashlib

import pytest

from oracle.store.records import Condition, Record, load_record, save_record
from oracle.store.reference import ReferenceError, load_reference, write_reference


def rec(rid, ids):
    return Record(id=rid, condition=Condition(), prompt_ids=[1, 2, 3], completion_ids=ids, finish_reason="length",
                  text="x", logprobs=[-0.1] * len(ids), top_ids=[[i, 9] for i in ids],
                  top_logprobs=[[-0.1, -2.0] for _ in ids], cached_prompt_tokens=0)


def tree_digest(path):
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def test_record_round_trip(tmp_path):
    r = rec("a", [5, 6, 7])
    r.top_ids[1] = [6]  # ragged top-k rows survive the padding
    r.top_logprobs[1] = [-0.5]
    save_record(tmp_path, r)
    back = load_record(tmp_path, Condition(), "a")
    assert back.completion_ids == [5, 6, 7] and back.top_ids[1] == [6] and back.top_ids[0] == [5, 9]
    assert back.cached_prompt_tokens == 0 and back.finish_reason == "length"


def test_write_load_and_tamper(tmp_path):
    ref = tmp_path / "ref"
    write_reference(ref, [rec("a", [5, 6]), rec("b", [7])], kind="mtp0", identity={}, run={})
    loaded = load_reference(ref)
    assert loaded.kind == "mtp0" and loaded.case_ids == ["a", "b"]
    npz = ref / "records" / "boot1-c1" / "b.npz"
    data = bytearray(npz.read_bytes())
    data[-30] ^= 0xFF
    npz.write_bytes(bytes(data))
    with pytest.raises(ReferenceError, match=r"tainted: .*b\.npz does not match .*--record-overwrite"):
        load_reference(ref)


def test_missing_and_extra_files_are_tainted(tmp_path):
    ref = tmp_path / "ref"
    write_reference(ref, [rec("a", [5, 6])], kind="mtp0", identity={}, run={})
    (ref / "records" / "boot1-c1" / "zz.json").write_text("{}")
    with pytest.raises(ReferenceError, match="zz.json is not in manifest.json"):
        load_reference(ref)
    (ref / "records" / "boot1-c1" / "zz.json").unlink()
    (ref / "records" / "boot1-c1" / "a.json").unlink()
    with pytest.raises(ReferenceError, match="a.json is missing"):
        load_reference(ref)


def test_no_overwrite_without_flag_and_byte_identical(tmp_path):
    ref = tmp_path / "ref"
    write_reference(ref, [rec("a", [5, 6])], kind="mtp0", identity={}, run={})
    before = tree_digest(ref)
    with pytest.raises(ReferenceError, match="--record-overwrite"):
        write_reference(ref, [rec("a", [1])], kind="mtp0", identity={}, run={})
    assert tree_digest(ref) == before
    write_reference(ref, [rec("a", [1])], kind="mtp0", identity={}, run={}, overwrite=True)
    assert load_reference(ref).record("a").completion_ids == [1]
    assert [p.name for p in tmp_path.iterdir()] == ["ref"]  # no staging or old copies left behind


def test_schema_version_mismatch_says_rerecord(tmp_path):
    ref = tmp_path / "ref"
    write_reference(ref, [rec("a", [5])], kind="mtp0", identity={}, run={})
    m = ref / "manifest.json"
    m.write_text(m.read_text().replace('"schema_version": 2', '"schema_version": 99'))
    with pytest.raises(ReferenceError, match="re-record"):
        load_reference(ref)


def test_missing_reference_says_how_to_record(tmp_path):
    with pytest.raises(ReferenceError, match="record one first"):
        load_reference(tmp_path / "none")


def test_an_edited_manifest_is_tainted_and_a_reformatted_one_is_not(tmp_path):
    import json

    ref = tmp_path / "ref"
    write_reference(ref, [rec("a", [5, 6])], kind="mtp0", identity={"model": {"name": "m"}}, run={})
    manifest = json.loads((ref / "manifest.json").read_text())
    assert len(manifest["manifest_sha256"]) == 64 and load_reference(ref).notes == ()
    (ref / "manifest.json").write_text(json.dumps(manifest))  # same content, other layout: still sealed
    assert load_reference(ref).case_ids == ["a"]
    manifest["kind"] = "f16"  # an edit a hand could make: the records' hashes still match
    (ref / "manifest.json").write_text(json.dumps(manifest, indent=1))
    with pytest.raises(ReferenceError, match=r"tainted: manifest.json was edited after it was written .*"
                                             r"re-record with --record .* --record-overwrite"):
        load_reference(ref)


@pytest.mark.parametrize("text, message", [
    ("{not json", r"manifest.json: not valid JSON \(.*\); the reference is damaged: .*re-record it"),
    ("[1, 2]", r"manifest.json: not what oracle writes there: expected object, got array; .*re-record it"),
    (b"\xff\xfe{}", r"manifest.json: not UTF-8 text \(invalid start byte at byte 0\); .*re-record it"),
])
def test_a_manifest_that_is_not_a_manifest_is_refused(tmp_path, text, message):
    ref = tmp_path / "ref"
    write_reference(ref, [rec("a", [5])], kind="mtp0", identity={}, run={})
    (ref / "manifest.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ReferenceError, match=message):
        load_reference(ref)


def test_an_older_manifest_without_its_own_hash_loads_with_a_note_and_can_be_sealed(tmp_path, capsys):
    import json

    from oracle.cli import main

    ref = tmp_path / "ref"
    write_reference(ref, [rec("a", [5])], kind="mtp0", identity={}, run={})
    manifest = json.loads((ref / "manifest.json").read_text())
    del manifest["manifest_sha256"]
    (ref / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    loaded = load_reference(ref)
    assert loaded.notes == (f"the reference {ref} was written before manifests carried their own hash "
                            "(manifest_sha256): an edit of its manifest.json cannot be detected; re-record it, or "
                            f"seal it as it is with `oracle seal {ref}`",)
    assert main(["seal", str(ref)]) == 0
    assert load_reference(ref).notes == ()
    npz = ref / "records" / "boot1-c1" / "a.npz"
    npz.write_bytes(npz.read_bytes()[:-8])  # a tainted reference is never sealed
    assert main(["seal", str(ref)]) == 2
    assert "tainted" in capsys.readouterr().err
