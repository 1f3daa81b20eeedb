"""`oracle repro` on a planted divergence, against the real llama-server with SmolLM2-135M: a reference recorded by
the embedded server, a candidate gated with `-ctk q8_0` (on this machine code-hashmap splits at token 11 of the
tiny suite at 32 tokens, the other two prompts stay exact), then the repro of its report. The curl command of
repro.md, run as a user runs it against a server started from the candidate's command in repro.json, returns
the observed tokens again, not the expected ones.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import NO_WARMUP, gate_argv, gate_env, launch_line, tiny_rows, write_suite
from oracle.backends import make_backend
from oracle.cli import main
from oracle.targets.launched import LaunchedServer

pytestmark = pytest.mark.slow


def test_repro_of_a_planted_divergence_gives_a_curl_command_that_reproduces_it(llama_tools, model_path, tmp_path,
                                                                               capsys):
    suite = write_suite(tmp_path, "tiny", tiny_rows())
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # the gates' rootdir, away from the project's tests
    common = ("-q", f"--oracle-suite={suite}", "--max-tokens=32", "--canaries=none", *NO_WARMUP)
    ref, gate = tmp_path / "ref", tmp_path / "gate"
    done = subprocess.run(gate_argv(*common, f"--record={ref}", f"--report-dir={tmp_path / 'rec'}"), cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, env=gate_env())
    assert done.returncode == 0, done.stdout[-3000:]
    candidate = launch_line(llama_tools, model_path, "-ctk q8_0")
    done = subprocess.run(gate_argv(*common, f"--reference={ref}", f"--launch={candidate}", f"--report-dir={gate}"),
                          cwd=tmp_path, capture_output=True, text=True, timeout=600, env=gate_env())
    assert done.returncode == 1 and "tokens[code-hashmap]" in done.stdout, done.stdout[-3000:]

    # A report of a record run is not a gate report: refused, the fix named, nothing started.
    assert main(["repro", str(tmp_path / "rec")]) == 2
    err = capsys.readouterr().err
    assert "a record report; oracle repro needs a gate report, one run against a reference" in err

    assert main(["repro", str(gate)]) == 0
    out = capsys.readouterr().out
    data = json.loads((gate / "repro" / "repro.json").read_text())
    md = (gate / "repro" / "repro.md").read_text()
    search = data["search"]
    assert data["status"] == "reproduced" and data["prompt"] == "code-hashmap" and search["proven"]
    assert len(search["prompts"]) < len(data["suite_prompts"]) == 3 and search["prompts"] == ["code-hashmap"]
    split = search["split"]
    assert search["max_tokens"] == split + 1 <= 32 and split == data["gate_split"] == data["split"]
    assert data["observed"]["identical"] and data["observed"]["ids"][split] != data["expected"]["ids"][split]
    assert data["observed"]["ids"][:split] == data["expected"]["ids"][:split]
    assert data["margins"]["reference_nats"] is not None and data["margins"]["reference_nats"] >= 0
    assert data["launch"]["reference"].startswith(str(llama_tools.path("llama-server")))
    assert data["launch"]["candidate"].endswith("-ctk q8_0") and data["server"]["candidate"]["server"] == "llama-server"
    assert data["curl"][-1] in md.replace("8080", "{port}") and data["summary"] in md
    assert f"oracle repro: code-hashmap diverges at token {split} with 1 of 3 prompt(s)" in out
    assert data["server_starts"] == len(search["probes"]) + 1

    # The curl command, as a user runs it, against a fresh server of the candidate's command from repro.json.
    server = LaunchedServer(data["launch"]["candidate"], log_dir=tmp_path / "curl-server")
    server.start(lambda url: make_backend("llamacpp", url).healthy())
    try:
        sent = subprocess.run(["bash", "-c", data["curl"][-1].replace("{port}", str(server.port))],
                              capture_output=True, text=True, timeout=120)
    finally:
        server.stop()
    assert sent.returncode == 0, sent.stderr
    answer = json.loads(sent.stdout)
    assert answer["tokens"] == data["observed"]["ids"] != data["expected"]["ids"]
