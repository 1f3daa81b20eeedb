"""The one guarded reader of the JSON files oracle reads back, and every reader that goes through it: bytes that
are not UTF-8, text that is not JSON and JSON of another shape are refused naming the file, what is wrong and
the fix; `oracle diff` verifies a reference's files before it compares."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from oracle.cli import main
from oracle.store.json_files import InputFileError, read_json
from oracle.store.records import PRIMARY, load_record
from oracle.store.reference import ReferenceError, load_reference, sealed_manifest
from oracle.store.shapes import ManifestShape, RecordShape, ReportShape
from planted_report import planted_report


@pytest.mark.parametrize("payload, said", [
    (b'{"a": 1', r"x.json: not valid JSON \(Expecting ',' delimiter at line 1 column 8\); FIX"),
    (b"\xff\xfe{}", r"x.json: not UTF-8 text \(invalid start byte at byte 0\); FIX"),
    (b"[1]", r"x.json: not what oracle writes there: expected object, got array; FIX"),
    (b"[" * 100_000 + b"]" * 100_000, r"x.json: not valid JSON \(nested too deeply to read\); FIX"),
])
def test_bytes_that_are_not_a_json_object_name_the_file_the_fault_and_the_fix(tmp_path, payload, said):
    (tmp_path / "x.json").write_bytes(payload)
    with pytest.raises(InputFileError, match=said):
        read_json(tmp_path / "x.json", dict, fix="FIX")


def test_a_folder_or_a_missing_file_is_named(tmp_path):
    with pytest.raises(InputFileError, match="x.json: no such file; FIX"):
        read_json(tmp_path / "x.json", dict, fix="FIX")
    (tmp_path / "d.json").mkdir()
    with pytest.raises(InputFileError, match="d.json: a folder, not a file; FIX"):
        read_json(tmp_path / "d.json", dict, fix="FIX")


@pytest.mark.parametrize("shape, data, said", [
    (ManifestShape, {"schema_version": 1, "kind": "mtp0"}, "missing key cases"),
    (ManifestShape, {"schema_version": "1", "kind": "mtp0", "cases": {}},
     r"expected int, got str at \$.schema_version"),
    (ManifestShape, {"schema_version": 1, "kind": "mtp0", "cases": {"a": []}},
     r"expected object, got array at \$.cases"),
    (ManifestShape, {"schema_version": 1, "kind": "mtp0", "cases": {}, "run": {"sampling": {"seeds": [1]}}},
     r"missing key temperature at \$.run.sampling"),
    (RecordShape, {"id": "a", "condition": "first boot", "finish_reason": "length", "completion_sha256": "ab"},
     r"expected str matching regex .* at \$.condition"),
    (ReportShape, {"checks": [{"id": "tokens[a]", "verdict": 3}]}, r"expected str, got int at \$.checks\[0\].verdict"),
    (ReportShape, {"records": {"finished": {"no-condition": {}}}},
     r"expected str matching regex .* at a key of \$.records.finished; FIX"),
])
def test_a_shape_error_names_the_key_and_the_type(tmp_path, shape, data, said):
    (tmp_path / "x.json").write_text(json.dumps(data))
    with pytest.raises(InputFileError, match=said):
        read_json(tmp_path / "x.json", shape, fix="FIX")


def test_a_record_whose_arrays_are_damaged_or_disagree_with_its_json_is_named(tmp_path):
    report = planted_report(tmp_path, splits={})
    base = report / "records" / PRIMARY.key
    np.savez(base / "a.npz", completion_ids=np.arange(3))
    with pytest.raises(InputFileError, match=r"a.npz: not a record's arrays \(KeyError: 'prompt_ids is missing'\); "
                                             "the record is damaged"):
        load_record(report / "records", PRIMARY, "a")
    (base / "b.npz").write_bytes(b"not a zip")
    with pytest.raises(InputFileError, match=r"b.npz: not a record's arrays"):
        load_record(report / "records", PRIMARY, "b")
    meta = json.loads((base / "c.json").read_text())
    (base / "c.json").write_text(json.dumps(meta | {"completion_sha256": "0" * 64}))
    with pytest.raises(InputFileError, match=r"c.json: its completion_sha256 does not match the tokens in c.npz"):
        load_record(report / "records", PRIMARY, "c")


def _reseal(ref, edit) -> None:
    manifest = json.loads((ref / "manifest.json").read_text())
    edit(manifest)
    (ref / "manifest.json").write_bytes(sealed_manifest(manifest))


def test_a_resealed_reference_whose_case_hash_or_record_disagrees_is_tainted(tmp_path):
    """The manifest's own hash proves it unedited, not right: its cases must be its records' tokens."""
    planted_report(tmp_path, splits={})
    ref = tmp_path / "ref"
    _reseal(ref, lambda m: m["cases"]["a"].update(completion_sha256="0" * 64))
    with pytest.raises(ReferenceError, match=r"tainted: case 'a': its completion_sha256 in manifest.json is not the "
                                             r"hash of records/boot1-c1/a.npz's tokens"):
        load_reference(ref)


def test_a_resealed_reference_listing_a_file_outside_its_records_is_tainted(tmp_path):
    planted_report(tmp_path, splits={})
    ref = tmp_path / "ref"
    (tmp_path / "secret.txt").write_text("x")
    digest = hashlib.sha256(b"x").hexdigest()
    _reseal(ref, lambda m: m["files"].update({"../secret.txt": digest}))
    with pytest.raises(ReferenceError, match=r"manifest.json lists '../secret.txt', a file outside its records/"):
        load_reference(ref)


def test_a_record_of_the_wrong_shape_in_a_resealed_reference_is_named(tmp_path):
    planted_report(tmp_path, splits={})
    ref = tmp_path / "ref"
    meta_path = ref / "records" / "boot1-c1" / "b.json"
    meta_path.write_text(json.dumps(json.loads(meta_path.read_text()) | {"ttft_s": "fast"}))
    digest = hashlib.sha256(meta_path.read_bytes()).hexdigest()
    _reseal(ref, lambda m: m["files"].update({"records/boot1-c1/b.json": digest}))
    with pytest.raises(ReferenceError, match=r"--reference .*ref: .*b.json: not what oracle writes there: expected "
                                             r"float \| null, got str at \$.ttft_s; the record is damaged"):
        load_reference(ref)


def test_oracle_diff_verifies_the_reference_before_comparing(tmp_path, capsys):
    """Before: `oracle diff REPORT TAMPERED_REF` compared the manifest's hashes, never the files: 3/3 identical,
    exit 0. Now the tampered file is named and the exit is 2."""
    report = planted_report(tmp_path, splits={})
    ref = tmp_path / "ref"
    assert main(["diff", str(report), str(ref)]) == 0
    assert "outputs: 3/3 identical" in capsys.readouterr().out
    npz = ref / "records" / "boot1-c1" / "b.npz"
    data = bytearray(npz.read_bytes())
    data[-30] ^= 0xFF
    npz.write_bytes(bytes(data))
    assert main(["diff", str(report), str(ref)]) == 2
    err = capsys.readouterr().err
    assert f"oracle diff: {ref}: tainted: {npz} does not match its sha256 in manifest.json" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("payload, said", [
    (b"\xff{}", "identity.json: not UTF-8 text (invalid start byte at byte 0); give a report folder as oracle wrote "
                "it"),
    (b'{"checks": "all"}', "identity.json: not what oracle writes there: expected array, got str at $.checks;"),
    (b'{"checks": [], "summary": {"exact": "x"}, "ladder": 5}', None),
])
def test_oracle_html_diff_and_repro_refuse_a_report_they_cannot_read(tmp_path, capsys, payload, said):
    report = planted_report(tmp_path, splits={"b": 3})
    (report / "identity.json").write_bytes(payload)
    for argv in (["html", str(report)], ["diff", str(report), str(tmp_path / "ref")], ["repro", str(report)],
                 ["localize", str(report), "--out", str(tmp_path / "loc")]):
        code = main(argv)
        err = capsys.readouterr().err
        assert "Traceback" not in err
        if said is None:  # a shape the readers accept: html renders it or names the file; diff and repro refuse
            continue
        assert code == 2 and said in err, (argv, err)
    if said is not None:
        assert not (report / "identity.html").exists() and not (report / "repro").exists()
        assert not (tmp_path / "loc").exists()


def test_a_code_set_that_is_not_a_code_set_is_refused_before_the_server_is_asked(pytester):
    (pytester.path / "codes.json").write_text('{"items": [{"id": "c1"}]}')
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--oracle-url=http://127.0.0.1:9",
                                "--code-set=codes.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*codes.json: not what oracle writes there: missing key level at $.items[[]0[]]; "
                                 "give --code-set a set built by `python -m oracle.canary.code build`*"])
    assert "health check" not in result.stderr.str()


def test_a_servers_file_that_is_not_utf8_is_named(pytester):
    (pytester.path / "servers.txt").write_bytes(b"http://127.0.0.1:9\n\xff\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--servers=servers.txt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--servers servers.txt: not UTF-8 text (invalid start byte at byte 19); write the "
                                 "file as UTF-8 text, one server URL per line*"])


def test_a_model_folders_damaged_json_is_named_with_the_fix(tmp_path):
    """The in-process families read a model folder's config.json and tokenizer_config.json through the same
    reader: bytes that are not UTF-8 name the file and the fix, and the gate's start turns that into a usage error."""
    from pathlib import Path

    from oracle.backends import make_in_process_backend

    toy = Path(__file__).resolve().parents[2] / "helpers" / "toy_runner.py"
    (tmp_path / "config.json").write_bytes(b'{"max_position_embeddings": \xff}')
    with pytest.raises(InputFileError, match=r"config.json: not UTF-8 text \(invalid start byte at byte 28\); the "
                                             "model folder is damaged: download or export the model again"):
        make_in_process_backend(f"python:{toy}:toy", tmp_path)
