"""oracle repro's reading of a gate report: the divergent prompt, the candidate's command, the reference; each
folder it cannot use refused with the fix named (exit 2 through the command, before any server starts)."""

from __future__ import annotations

import json

import pytest

from oracle.cli import main
from oracle.repro.source import ReproInput, read_source
from planted_report import LAUNCH, planted_report


def test_the_first_divergent_prompt_its_context_and_the_reference(tmp_path):
    source = read_source(planted_report(tmp_path, splits={"b": 3, "c": 1}))
    assert source.target == "b" and source.context == ("a",) and source.split == 3
    assert source.launch == LAUNCH and source.target_kind == "launch"
    assert source.expected.completion_ids == [200 + i for i in range(8)]
    assert source.gated.completion_ids[3] == 253 and source.max_tokens == 8 and source.seed == 1234
    assert source.prompt_ids == {"a": (1, 2, 3), "b": (1, 2, 4), "c": (1, 2, 5)}
    assert source.reference_command == "srv -m m.gguf --port {port}"


def test_prompt_picks_another_divergent_one(tmp_path):
    source = read_source(planted_report(tmp_path, splits={"b": 3, "c": 1}), prompt="c")
    assert source.target == "c" and source.context == ("a", "b") and source.split == 1


def test_a_relative_reference_is_found_beside_the_report(tmp_path):
    source = read_source(planted_report(tmp_path, splits={"b": 3}, reference_path="ref"))
    assert source.reference_dir == tmp_path / "ref"


def test_the_embedded_target_is_started_again_from_its_descriptor(tmp_path):
    source = read_source(planted_report(tmp_path, splits={"b": 3}, target="embedded"))
    assert source.launch is None and source.target_kind == "embedded"


@pytest.mark.parametrize("plant, kwargs, words", [
    ({"splits": {}}, {}, "no prompt diverged from the reference in this gate run (3/3 exact); there is nothing to "
                         "reproduce"),
    ({"splits": {"b": 3}}, {"prompt": "a"}, "--prompt a: it did not diverge in this run; give one that did: b"),
    ({"splits": {"b": 3}}, {"prompt": "zz"}, "--prompt zz: not a prompt of this run; give one of a, b, c"),
    ({"splits": {"b": 3}, "mode": "record"}, {}, "a record report; oracle repro needs a gate report"),
    ({"splits": {"b": 3}, "target": "url"}, {}, "give its launch command with --launch CMD"),
    ({"splits": {"b": 3}, "launch": "srv --api-key *** --port {port}"}, {},
     "the report's launch command has a secret redacted (***); give the command again with --launch CMD"),
    ({"splits": {"b": 3}, "reference_path": "gone"}, {}, "its reference gone is not found (from here or beside the "
                                                         "report); give it with --reference DIR"),
    ({"splits": {"b": 3}}, {"launch": "srv -m m.gguf"}, "--launch: put {port} where the server's port goes"),
])
def test_bad_input_names_the_fix(tmp_path, plant, kwargs, words):
    with pytest.raises(ReproInput) as info:
        read_source(planted_report(tmp_path, **plant), **kwargs)
    assert words in str(info.value)


def test_a_folder_without_identity_json(tmp_path):
    with pytest.raises(ReproInput, match="no identity.json there; give the report folder a gate run wrote"):
        read_source(tmp_path)


def test_a_tainted_reference_is_refused(tmp_path):
    report = planted_report(tmp_path, splits={"b": 3})
    manifest = tmp_path / "ref" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["run"]["max_tokens"] = 9
    manifest.write_text(json.dumps(data))
    with pytest.raises(ReproInput, match="tainted.*give a valid reference with --reference DIR"):
        read_source(report)


def test_the_command_exits_2_with_the_fix_and_starts_nothing(tmp_path, capsys):
    report = planted_report(tmp_path, splits={})
    code = main(["repro", str(report)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("oracle repro: ") and "nothing to reproduce" in err
    assert not (report / "repro").exists()


def test_max_probes_must_be_a_whole_number_of_at_least_one(tmp_path, capsys):
    report = planted_report(tmp_path, splits={"b": 3})
    assert main(["repro", str(report), "--max-probes", "0"]) == 2
    assert "give N >= 1" in capsys.readouterr().err


def test_an_in_process_run_has_no_request_to_replay(tmp_path):
    report = planted_report(tmp_path, splits={"b": 3})
    data = json.loads((report / "identity.json").read_text())
    data["backend"] = "hf"
    (report / "identity.json").write_text(json.dumps(data))
    with pytest.raises(ReproInput, match="a hf run loads the model in process; there is no server request"):
        read_source(report)
