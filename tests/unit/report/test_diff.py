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
