"""`--sweep` on the real llama-server with the real SmolLM2-135M: a grid of -ctk x -t, each point its own gate run
against one reference, the classes of identical outputs, the promotion answer and the exit codes; a point whose
server does not start; an interrupted sweep that keeps its finished points. A promotion needs a speed verdict: without
an interleaved comparison with the reference config the identical points are `speed not judged`; with one
(`--reference-launch`), a sweep whose only identical point is the reference's own configuration answers "identical,
not faster: keep the reference".

Two prompts of the default suite at 16 tokens: with `-ctk q8_0` code-hashmap splits at token 11 on this machine (a
near-tie; code-palindrome stays exact), `-t 1` and `-t 2` give the same tokens (docs/sweep.md).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from oracle.ledger.schema import runs
from conftest import gate_argv, gate_env, launch_line, tiny_rows, write_suite

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sweep_run(llama_tools, model_path, shared_server, tmp_path_factory):
    """Run a sweep as users do, its own `pytest` process: (exit code, output, sweep.json, its folder); the reference
    (2 prompts x 16 tokens) recorded once for the module against the shared server."""
    folder = tmp_path_factory.mktemp("sweep")
    (folder / "pytest.ini").write_text("[pytest]\n")
    suite = write_suite(folder, "two", tiny_rows()[:2])
    common = (f"--oracle-suite={suite}", "--max-tokens=16", "--canaries=none", "--warmup=0")
    ref = folder / "ref"
    rec = subprocess.run(gate_argv("-q", f"--oracle-url={shared_server.url}", *common, f"--record={ref}",
                                   f"--report-dir={folder / 'rec'}"),
                         cwd=folder, capture_output=True, text=True, timeout=300, env=gate_env())
    assert rec.returncode == 0, rec.stdout[-3000:] + rec.stderr[-2000:]
    launch = launch_line(llama_tools, model_path)

    def run(name: str, *sweep: str, interrupt_at: int | None = None, repro: bool = False):
        report = folder / name
        argv = gate_argv("-q", f"--launch={launch}", f"--reference={ref}", *common,
                         *(() if repro else ("--sweep-no-repro",)), f"--report-dir={report}", *sweep)
        proc = subprocess.Popen(argv, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=gate_env())
        if interrupt_at is not None:  # Ctrl-C once that point's gate has launched its server
            deadline = time.monotonic() + 240
            while not list(report.glob(f"points/{interrupt_at:02d}-*/server-boot1.log")) and time.monotonic() < deadline:
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=600)
        return proc.returncode, out, json.loads((report / "sweep.json").read_text()), report

    run.launch = launch
    return run


def test_ctk_splits_into_two_classes_threads_do_not_and_the_identical_points_speed_is_not_judged(sweep_run):
    code, out, data, report = sweep_run("grid", "--sweep=-ctk=f16,q8_0", "--sweep=-t=1,2", repro=True)
    assert code == 1, out
    points = data["points"]
    assert [(p["index"], p["label"], p["status"]) for p in points] == [
        (1, "-ctk f16, -t 1", "finished"), (2, "-ctk f16, -t 2", "finished"),
        (3, "-ctk q8_0, -t 1", "finished"), (4, "-ctk q8_0, -t 2", "finished")]
    # -ctk makes two classes; -t splits neither; the f16 class is the reference's tokens.
    assert [(c["name"], c["points"], c["equals_reference"]) for c in data["classes"]] == [
        ("A", [1, 2], True), ("B", [3, 4], False)]
    assert data["reference_class"] == "A" and [p["class"] for p in points] == ["A", "A", "B", "B"]
    assert [p["exact"]["k"] for p in points] == [2, 2, 1, 1] and all(p["exact"]["n"] == 2 for p in points)
    assert [p["near_tie"] + p["divergent"] for p in points] == [0, 0, 1, 1]
    assert [p["verdict"] for p in points] == ["pass", "pass", "fail", "fail"]
    # No promotion without a speed verdict: the reference's speed was measured in another run (no interleave).
    assert data["promotion"]["decision"] == "not judged" and data["promotion"]["point"] is None
    assert all(p["speed"]["figure"] == "after_ttft_tok_s" for p in points[:2])  # 16 tokens a prompt
    assert data["answer"] == ("identical, speed not judged: point(s) 1 (-ctk f16, -t 1), 2 (-ctk f16, -t 2) equal the "
                              "reference, but no interleaved comparison with the reference config (add "
                              "--reference-launch recorded); nothing promoted")
    assert f"oracle sweep: {data['answer']}" in out and "point 4/4: -ctk q8_0, -t 2 ... fail, exact 1/2" in out
    # The first point that split (3) is reduced by `oracle repro` to one request that splits again.
    repro = data["repro"]
    assert (repro["point"], repro["status"], repro["exit_code"]) == (3, "reproduced", 0), repro
    made = json.loads((Path(repro["path"]).parent / "repro.json").read_text())
    assert made["search"]["prompts"][-1] == "code-hashmap" and made["split"] == 11, made
    assert f"repro of point 3: {repro['path']} (reproduced)" in (report / "sweep.md").read_text()
    for p in points:  # each point is a gate run of its own, its launch command the user's plus its settings
        identity = json.loads((report / p["folder"] / "identity.json").read_text())
        assert identity["identity"]["launch_command"].endswith(p["label"].replace(",", ""))
    md = (report / "sweep.md").read_text()
    assert "- class B: points 3, 4 (-ctk q8_0, -t 1; -ctk q8_0, -t 2), not the reference's tokens" in md
    assert (report / "sweep.html").read_text().count("<tr data-point=") == 4


def test_no_point_equal_to_the_reference_exits_1_and_a_server_that_does_not_start_is_reported(sweep_run):
    code, out, data, report = sweep_run("none", "--sweep=-ctk=q8_0,nonsense", "--sweep=-t=1")  # one value: fixed
    assert code == 1, out
    q8, bad = data["points"]
    assert q8["status"] == "finished" and q8["equals_reference"] is False and q8["class"] == "A"
    assert bad["status"] == "did not start" and bad["exit_code"] == 4 and bad["class"] is None
    # Each point is a gate of its own and appends like one, to the ledger beside the sweep's folder (where the
    # reference's record run appended too); the point refused before any request appends nothing.
    with create_engine(f"sqlite:///{report.parent / 'ledger.sqlite'}").connect() as c:
        appended = [(r.report_dir, r.verdict) for r in c.execute(select(runs).order_by(runs.c.id))
                    if not r.report_dir.startswith(str(report.parent) + "/grid")]  # the module's other sweep's points
    assert appended == [(str(report.parent / "rec"), "pass"), (str(report / q8["folder"]), "fail")], appended
    assert not (report / "points" / "ledger.sqlite").exists()
    assert "the server exited" in bad["why"] and "point 2/2: -ctk nonsense, -t 1 ... did not start" in out
    assert data["promotion"] is None and data["answer"] == "none: no finished point's outputs equal the reference"


def test_an_interrupted_sweep_keeps_its_finished_points_and_exits_2(sweep_run):
    code, out, data, report = sweep_run("ctrl-c", "--sweep=-t=1,2", interrupt_at=2)
    assert code == 2, out
    done, stopped = data["points"]
    assert done["status"] == "finished" and done["equals_reference"] is True
    assert stopped["status"] == "interrupted" and data["status"] == "partial"
    assert data["interruption"].startswith("interrupted (Ctrl-C) during point 2 (-t 2)")
    assert data["answer"].startswith("partial (1 of 2 points finished): identical, speed not judged: point(s) 1 (-t 1)")
    assert (report / done["folder"] / "identity.json").is_file()
    # The point's gate got the one SIGINT: it stopped its server and wrote its partial report.
    partial = json.loads((report / stopped["folder"] / "identity.json").read_text())
    assert partial["interruption"] and partial["complete"] is False and stopped["exit_code"] == 2


def test_the_reference_configuration_as_the_only_identical_point_keeps_the_reference(sweep_run):
    """Two points, each gated with its speed interleaved against the reference config (both servers up, 2 ABBA
    rounds, warmed up): -ctk f16 is the reference's own configuration, -ctk q8_0 splits from its tokens. Every
    server runs one thread (`-t 1`, a fixed axis and the reference launch alike; the thread count does not change
    the tokens): on a 2-core host shared with other jobs two threads wait on each other, ten times slower."""
    code, out, data, _ = sweep_run("keep", "--sweep=-ctk=f16,q8_0", "--sweep=-t=1",
                                   f"--reference-launch={sweep_run.launch} -t 1", "--interleave-servers=both-up",
                                   "--speed-rounds=2", "--warmup=1")
    assert code == 1, out
    same, q8 = data["points"]
    assert same["status"] == "finished" and same["equals_reference"] is True and q8["equals_reference"] is False
    speed = same["speed"]
    assert speed["ratio_how"].startswith("interleaved with the reference config, 2 rounds, between-run (headline)")
    assert speed["judged"] == "not faster", speed
    assert data["promotion"]["decision"] == "keep the reference" and data["promotion"]["point"] is None
    assert data["answer"].startswith("identical, not faster: keep the reference (equal point(s) 1 (-ctk f16, -t 1); "
                                     "point 1: "), data["answer"]
    assert f"oracle sweep: {data['answer']}" in out
    print(data["answer"])
