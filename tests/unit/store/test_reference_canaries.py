"""A reference keeps each canary's completion (schema 2) beside the suite's records; one written before (schema 1)
reads as it is, holding none; a canary record that does not match its manifest row is tainted."""

import json
from pathlib import Path

import pytest

from oracle.store.records import Condition, Record
from oracle.store.reference import (ReferenceError, side_record_name, load_reference, manifest_digest,
                                    write_reference)

SHIPPED = Path(__file__).resolve().parents[3] / "references" / "smollm2-135m-q4_1-llamacpp-cpu"


def rec(rid, ids):
    return Record(id=rid, condition=Condition(), prompt_ids=[1, 2, 3], completion_ids=ids, finish_reason="length",
                  text="x", logprobs=[-0.1] * len(ids), top_ids=[[i, 9] for i in ids],
                  top_logprobs=[[-0.1, -2.0] for _ in ids])


def canary(rid, ids):
    return Record(id=rid, condition=Condition(), prompt_ids=[], completion_ids=ids, finish_reason="length",
                  logprobs=[-0.2] * len(ids), top_ids=[[i, 4] for i in ids], top_logprobs=[[-0.2, -0.4] for _ in ids])


def write(ref):
    rows = {"needle[512-d0]": {"family": "needle", "ok": True, "length": 512, "depth": 0, "verdict": "pass"},
            "code-fresh": {"family": "code-fresh", "ok": True, "verdict": "pass"}}
    return write_reference(ref, [rec("a", [5, 6])], kind="mtp0", identity={}, run={}, blocks={"canaries": rows},
                           side_records={"canaries": [canary("needle[512-d0]", [7, 8, 9])]})


def test_canary_completions_are_records_of_the_reference_and_read_back(tmp_path):
    ref = write(tmp_path / "ref")
    manifest = json.loads((ref.path / "manifest.json").read_text())
    assert manifest["schema_version"] == 2
    assert (ref.path / "records" / "canaries" / "boot1-c1" / "needle[512-d0].npz").is_file()
    assert "completion_sha256" not in manifest["canaries"]["code-fresh"]  # no request, no completion
    loaded = load_reference(ref.path)
    assert loaded.keeps_side_records and loaded.case_ids == ["a"]
    back = loaded.side_record("canaries", "needle[512-d0]")
    assert back.completion_ids == [7, 8, 9] and back.top_ids[0] == [7, 4] and back.finish_reason == "length"
    assert manifest["canaries"]["needle[512-d0]"]["completion_sha256"] == back.completion_sha256
    assert loaded.side_record("canaries", "code-fresh") is None and loaded.side_record("canaries", "needle[9-d0]") is None


def test_a_canary_record_that_does_not_match_its_row_is_tainted(tmp_path):
    ref = write(tmp_path / "ref").path
    (ref / "records" / "canaries" / "boot1-c1" / "needle[512-d0].json").unlink()
    with pytest.raises(ReferenceError, match=r"needle\[512-d0\]\.json is missing"):
        load_reference(ref)


def test_a_canary_row_whose_hash_names_other_tokens_is_tainted(tmp_path):
    ref = write(tmp_path / "ref").path
    manifest = json.loads((ref / "manifest.json").read_text())
    manifest["canaries"]["needle[512-d0]"]["completion_sha256"] = "0" * 64
    manifest["manifest_sha256"] = manifest_digest(manifest)  # resealed: only the row lies
    (ref / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ReferenceError, match=r"canaries row 'needle\[512-d0\]': its completion_sha256 .* re-record"):
        load_reference(ref)


def test_a_schema_1_reference_reads_as_it_is_and_holds_no_canary_completion():
    loaded = load_reference(SHIPPED)  # committed, written before canary completions were kept
    assert loaded.manifest["schema_version"] == 1 and not loaded.keeps_side_records
    assert loaded.side_record("canaries", "needle[512-d0]") is None


def test_an_item_id_that_is_no_plain_file_name_gets_a_name_of_its_own():
    assert side_record_name("code[mul-7-2]") == "code[mul-7-2]"
    odd = side_record_name("code[a/b]")
    assert "/" not in odd and odd != side_record_name("code[a_b]") and odd == side_record_name("code[a/b]")
