"""`oracle diff` on committed runs: the CPU reference against the H200 CUDA record (another build, another
accelerator), and bad input. The real-server diff cases are in test_report_tools.py."""

from __future__ import annotations

import json
from pathlib import Path

from oracle.cli import main
from oracle.report.diff import diff_runs

REPO = Path(__file__).resolve().parents[3]
CPU_REFERENCE = REPO / "references" / "smollm2-135m-q4_1-llamacpp-cpu"
GPU_RECORD = REPO / "examples" / "gpu-h200" / "record"
# The default suite's 12 prompts, in the order diff lists them (sorted by id).
PROMPTS = sorted(["chat-advice", "chat-recipe", "code-hashmap", "code-palindrome", "math-derivative", "math-word",
                  "reasoning-order", "reasoning-syllogism", "tool-json", "tool-summary", "writing-essay",
                  "writing-story"])


def test_cpu_reference_against_the_gpu_record_names_the_identity_changes(capsys):
    result = diff_runs(CPU_REFERENCE, GPU_RECORD)
    fields = {c["field"] for c in result.identity_changes}
    assert {"backend", "platform", "accelerator.nvidia-smi", "launch_command"} <= fields
    assert "model.sha256" not in fields  # the same weights on both
    # The true answer, from the two committed files: none of the 12 completion hashes of the CPU reference
    # matches the H200 record's (other kernels, other greedy paths). The H200 record keeps no records folder,
    # so where each pair first differs is unknown (None), never guessed.
    assert result.prompts == [{"prompt": pid, "status": "differs", "first_divergence": None} for pid in PROMPTS]
    assert not result.outputs_identical
    code = main(["diff", str(CPU_REFERENCE), str(GPU_RECORD), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["outputs_identical"] is False
    assert [p["status"] for p in data["prompts"]] == ["differs"] * 12
    assert any(c["field"] == "backend" and c["b"] == "llamacpp-cuda" for c in data["identity_changes"])


def test_a_run_against_itself_is_identical(capsys):
    same = diff_runs(GPU_RECORD, GPU_RECORD)
    assert same.prompts == [{"prompt": pid, "status": "identical", "first_divergence": None} for pid in PROMPTS]
    assert same.outputs_identical and same.identity_changes == [] and same.verdict_changes == []
    assert main(["diff", str(CPU_REFERENCE), str(CPU_REFERENCE)]) == 0
    assert "outputs: 12/12 identical" in capsys.readouterr().out


def test_bad_input_exits_2_with_the_fix(tmp_path, capsys):
    assert main(["diff", str(tmp_path), str(CPU_REFERENCE)]) == 2
    assert "neither a report dir (identity.json) nor a reference (manifest.json)" in capsys.readouterr().err
    assert main(["diff", str(CPU_REFERENCE)]) == 2
    assert main(["html", str(tmp_path)]) == 2


def _report_with_card(folder: Path, rate: float, cpu: str) -> Path:
    """A report dir holding only what diff reads: identity (hardware) and a speed card of 6 prompts."""
    from oracle.speed.card import speed_card
    from oracle.speed.figures import BYTES_ARRIVAL, prompt_figures

    rows = {f"p{i}": prompt_figures([0.1 + k / (rate + i) for k in range(120)]) for i in range(6)}
    folder.mkdir()
    (folder / "identity.json").write_text(json.dumps({
        "schema_version": 2, "mode": "gate", "identity": {"host": {"cpu": cpu, "cpu_count": 2}, "model": {"sha256": "m"}},
        "speed": speed_card(rows, reasons=[], clock=BYTES_ARRIVAL), "checks": []}))
    return folder


def test_speed_change_between_two_reports_on_the_same_hardware(tmp_path):
    a = _report_with_card(tmp_path / "a", 100.0, "Xeon")
    b = _report_with_card(tmp_path / "b", 150.0, "Xeon")
    speed = diff_runs(a, b).speed
    assert speed["label"] == "headline" and 1.45 < speed["ci95"][0] <= speed["median"] <= speed["ci95"][1] < 1.5
    assert main(["diff", str(a), str(b)]) == 0  # identical (empty) outputs; the speed change is listed, not judged


def test_speed_change_across_hardware_or_old_reports_is_not_comparable(tmp_path, capsys):
    a = _report_with_card(tmp_path / "a", 100.0, "Xeon")
    b = _report_with_card(tmp_path / "b", 150.0, "EPYC")
    speed = diff_runs(a, b).speed
    assert speed["label"] == "not comparable" and speed["median"] is None
    assert speed["reasons"] == ["different hardware: cpu: Xeon (reference) vs EPYC (candidate)"]
    # A report written before speed cards (schema 1) is still read; its speed is not comparable.
    old = diff_runs(GPU_RECORD, b)
    assert old.speed["label"] == "not comparable" and "has no speed card (report schema 1" in old.speed["reasons"][0]
    main(["diff", str(GPU_RECORD), str(b)])
    assert "speed, B against A: not comparable (" in capsys.readouterr().out


def test_a_reference_speed_card_is_rebuilt_from_its_records():
    speed = diff_runs(CPU_REFERENCE, CPU_REFERENCE).speed
    assert speed["median"] == 1.0 and speed["ci95"] == [1.0, 1.0]


def test_the_speed_change_names_what_the_launch_commands_held_equal(tmp_path, capsys):
    base = "llama-server -m m.gguf --port {port} -c 8192"
    a = _report_with_card(tmp_path / "a", 100.0, "Xeon")
    b = _report_with_card(tmp_path / "b", 150.0, "Xeon")
    for folder, command in ((a, base), (b, f"{base} --spec-type ngram-simple")):
        rep = json.loads((folder / "identity.json").read_text())
        rep["identity"]["launch_command"] = command
        (folder / "identity.json").write_text(json.dumps(rep))
    assert diff_runs(a, b).speed["launch"] == "matched_except_speculation: --spec-type ngram-simple"
    main(["diff", str(a), str(b)])
    assert "; launch: matched_except_speculation: --spec-type ngram-simple" in capsys.readouterr().out
