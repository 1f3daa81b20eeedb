"""The openai family on a server that has only the chat route (a real llama-server behind a proxy that
answers 404 on /v1/completions): the suite's messages go to /v1/chat/completions, the report says so."""

from __future__ import annotations

import pytest

from proxy import FaultProxy

pytestmark = pytest.mark.slow


def test_a_chat_only_server_is_gated_on_the_chat_route_and_the_report_says_so(gate_run, shared_server, llama_server,
                                                                             q4_0_model, read_report):
    server, other = shared_server, llama_server("-t 1", model=q4_0_model)
    with FaultProxy(server.url, refuse_paths=("/v1/completions",)) as proxy:
        rec = gate_run("--backend=openai", f"--oracle-url={proxy.url}", "--record=ref", report="rec")
        rec.assert_outcomes(passed=5)
        gate = gate_run("--backend=openai", f"--oracle-url={proxy.url}", "--reference=ref", report="gate")
        gate.assert_outcomes(passed=5)
    rep = read_report(gate.folder)
    assert any(n.startswith("the server has no /v1/completions (HTTP 404): the suite's messages went to "
                            "/v1/chat/completions") for n in rep["notes"])
    tokens = [c for c in rep["checks"] if c["kind"] == "tokens"]
    assert [c["verdict"] for c in tokens] == ["exact"] * 3
    assert all(c["detail"].startswith("32/32 tokens identical") for c in tokens)  # ids, not text: llama.cpp sends them
    # The same route on other weights (Q4_0) splits from that reference: the chat-route gate can fail.
    with FaultProxy(other.url, refuse_paths=("/v1/completions",)) as proxy:
        bad = gate_run("--backend=openai", f"--oracle-url={proxy.url}", "--reference=ref", report="bad")
    assert bad.ret == 1
    assert read_report(bad.folder)["summary"]["exact"][0] < 3
