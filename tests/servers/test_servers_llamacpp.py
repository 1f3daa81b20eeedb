"""Several real llama-servers under pytest -n: one merged report, the same verdicts and reference as one
server, a fault on one server named there, mixed servers refused, launched servers with {worker} and boots."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest

from oracle.ledger.audit import audit_report
from oracle.report.diff import diff_runs
from oracle.store.seal import verify_seal
from oracle.targets.embedded import embedded_command
from conftest import NO_WARMUP, launch_line
from proxy import FaultProxy, change_token

pytestmark = pytest.mark.slow

ARRAYS = ("prompt_ids", "completion_ids", "logprobs", "top_ids", "top_logprobs")


def verdicts(rep: dict) -> dict[str, str]:
    """Check id -> verdict, with the per-server evidence items folded into one name."""
    out = {}
    for c in rep["checks"]:
        name = c["id"].split("[server")[0]
        out[name] = c["verdict"] if out.get(name, c["verdict"]) == c["verdict"] else "mixed"
    return out


def test_two_servers_give_one_report_and_the_same_reference_as_one(gate_run, llama_server, read_report):
    a, b = llama_server("-t 1 -np 2"), llama_server("-t 1 -np 2")
    both = f"--oracle-url={a.url},{b.url}"
    rec2 = gate_run("-n", "2", both, "--ladder=1,2", "--record=ref2", report="rec2")
    rec2.assert_outcomes(passed=3 + 2 + 2 + 2)  # record[x3], cache-zero and speculation per server, c1, c2
    rec1 = gate_run(f"--oracle-url={a.url}", "--ladder=1,2", "--record=ref1", report="rec1")
    rec1.assert_outcomes(passed=3 + 1 + 1 + 2)

    # The reference recorded under -n holds the same arrays and hashes as the one recorded on one server.
    root = rec2.folder.parent
    m1, m2 = (json.loads((root / r / "manifest.json").read_text()) for r in ("ref1", "ref2"))
    assert m1["cases"] == m2["cases"] and len(m1["cases"]) == 3
    for pid in m1["cases"]:
        x, y = (np.load(root / r / "records" / "boot1-c1" / f"{pid}.npz") for r in ("ref1", "ref2"))
        assert all(np.array_equal(x[k], y[k]) for k in ARRAYS), pid
        h1, h2 = (json.loads((root / r / "records" / "boot1-c1" / f"{pid}.json").read_text())["completion_sha256"]
                  for r in ("ref1", "ref2"))
        assert h1 == h2
    assert [s["url"] for s in m2["identity"]["servers"]] == [a.url, b.url]

    servers_file = root / "servers.txt"  # the same two servers, as a file
    servers_file.write_text(f"# one per card\n{a.url}\n{b.url}  # the second card\n")
    gate2 = gate_run("-n", "2", f"--servers={servers_file}", "--ladder=1,2", "--reference=ref2", report="gate2")
    gate2.assert_outcomes(passed=3 + 2 + 2 + 2)
    gate1 = gate_run(f"--oracle-url={a.url}", "--ladder=1,2", "--reference=ref2", report="gate1")
    gate1.assert_outcomes(passed=3 + 1 + 1 + 2)
    r1, r2 = read_report(gate1.folder), read_report(gate2.folder)
    assert verdicts(r1) == verdicts(r2) and r2["verdict"] == "pass"
    servers = r2["identity"]["servers"]
    assert [(s["label"], s["url"]) for s in servers] == [("server1", a.url), ("server2", b.url)]
    assert sorted(p for s in servers for p in s["prompts_at_c1"]) == sorted(r2["prompts"])
    assert r2["ladder"]["c1"]["server"] == "server1" and r2["ladder"]["c2"]["server"] == "server2"
    assert r2["identity"]["servers_c1_crosscheck"]["different"] == []
    md = (gate2.folder / "identity.md").read_text()
    assert f"| server1 | gw0 | {a.url} |" in md and f"| server2 | gw1 | {b.url} |" in md
    for label in ("server1", "server2"):  # each worker's own report and records stay on disk
        assert (gate2.folder / "servers" / label / "identity.json").is_file()
    assert "<h2>Servers</h2>" in (gate2.folder / "identity.html").read_text()
    # The controller seals the merged folder, the workers' folders in it (#52); the ledger re-derives it clean.
    seal = verify_seal(gate2.folder)
    assert seal.sealed and {"servers/server1/identity.json", "servers/server2/identity.json"} <= set(seal.seal["files"])
    assert any(f.startswith("servers/server1/records/boot1-c1/") for f in seal.seal["files"])
    assert audit_report(gate2.folder, r2).status == "verified"
    assert not any("not appended" in n for n in r2["notes"]), r2["notes"]
    diff = diff_runs(gate2.folder, gate1.folder)  # the merged report reads like any other
    assert [p["status"] for p in diff.prompts] == ["identical"] * 3 and diff.identity_changes == []


def test_a_fault_on_one_server_fails_its_items_and_names_it(gate_run, llama_server, shared_reference, read_report):
    a, b = llama_server("-t 1"), llama_server("-t 1")
    with FaultProxy(b.url, rewrite_chunk=change_token(request_index=1, position=7)) as proxy:
        result = gate_run(*NO_WARMUP, "-n", "2", f"--oracle-url={a.url},{proxy.url}", f"--reference={shared_reference}", report="fault")
    assert result.ret == 1
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines([f"*tokens[[]code-hashmap[]]: divergent: first divergence at token 7 of 32*"
                                 f"(on server2, {proxy.url})*"])
    rep = read_report(result.folder)
    bad = [c for c in rep["checks"] if c["outcome"] == "failed"]
    assert [(c["id"], c["evidence"]["server"]["label"]) for c in bad] == [("tokens[code-hashmap]", "server2")]
    servers = {s["label"]: s for s in rep["identity"]["servers"]}
    assert servers["server2"]["failed"] == ["tokens[code-hashmap]"] and servers["server1"]["failed"] == []
    assert "| server2 | gw1 |" in (result.folder / "identity.md").read_text()


def test_servers_with_different_models_are_refused_naming_the_fields(gate_run, llama_server, q4_0_model,
                                                                     model_path, read_report):
    a, b = llama_server("-t 1"), llama_server("-t 1", model=q4_0_model)
    result = gate_run("-n", "2", f"--oracle-url={a.url},{b.url}", report="mixed")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the servers are not one configuration; these identity fields differ:*",
                                 f"*server.model_path: server1 '{model_path}', server2 '{q4_0_model}'*",
                                 "*--allow-mixed-servers*"])
    allowed = gate_run("-n", "2", f"--oracle-url={a.url},{b.url}", "--allow-mixed-servers", report="allowed")
    allowed.assert_outcomes(passed=3 + 2 + 2)
    notes = read_report(allowed.folder)["notes"]
    mixed = [n for n in notes if n.startswith("the servers differ (--allow-mixed-servers): ")]
    assert len(mixed) == 1 and "model.sha256: server1" in mixed[0] and "server.model_path: server1" in mixed[0]


def test_launched_servers_that_differ_fail_the_merged_report(gate_run, llama_tools, model_path, q4_0_model,
                                                            read_report):
    inner = embedded_command(llama_tools, model_path, "-t 1").removeprefix("exec ")
    inner = inner.replace(shlex.quote(str(model_path)), '"$M"')
    assert '"$M"' in inner
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in llama_tools.env.items())
    launch = (f"if [ {{worker}} = 0 ]; then M={shlex.quote(str(model_path))}; else M={shlex.quote(str(q4_0_model))}; "
              f"fi; {env} exec {inner}")
    result = gate_run("-n", "2", f"--launch={launch}", report="launched-mixed")
    assert result.ret == 1
    result.assert_outcomes(passed=3 + 2 + 2)  # every item passed on its own server ...
    result.stdout.fnmatch_lines(["oracle: the 2 servers are not one configuration: * identity field(s) differ:*"])
    rep = read_report(result.folder)  # ... but the servers were not one configuration
    servers_check = [c for c in rep["checks"] if c["id"] == "servers"]
    assert rep["verdict"] == "fail" and servers_check[0]["outcome"] == "failed"
    assert any(line.strip().startswith("server.model_path: server1") for line in servers_check[0]["lines"])


def test_each_worker_launches_its_own_server_and_boots_restart_it(gate_run, llama_tools, model_path, read_report):
    launch = "ORACLE_TEST_WORKER={worker} " + launch_line(llama_tools, model_path, "-t 1")
    result = gate_run("-n", "2", f"--launch={launch}", "--boots=2", report="launched")
    result.assert_outcomes(passed=3 + 2 + 2 + 2)  # run[x3], cache-zero x2, speculation x2, ladder[c1], boot[2]
    rep = read_report(result.folder)
    servers = rep["identity"]["servers"]
    assert ["ORACLE_TEST_WORKER=0" in s["launch_command"] for s in servers] == [True, False]
    assert ["ORACLE_TEST_WORKER=1" in s["launch_command"] for s in servers] == [False, True]
    # ladder[c1] went to server1, the boot sequence to server2: only server2 was restarted.
    assert rep["ladder"]["c1"]["server"] == "server1" and rep["boots"]["2"]["server"] == "server2"
    logs = {s["label"]: sorted(p.name for p in (result.folder / "servers" / s["label"]).glob("server-boot*.log"))
            for s in servers}
    assert logs == {"server1": ["server-boot1.log"], "server2": ["server-boot1.log", "server-boot2.log"]}
    assert rep["determinism"] == "across-boots" and rep["verdict"] == "pass"


def test_a_server_lost_midway_leaves_every_record_and_a_partial_merged_report(gate_run, llama_server, read_report):
    a, b = llama_server("-t 1"), llama_server("-t 1")

    def cut(chunk, ctx):
        ctx["tokens_seen"] += len(chunk.get("tokens") or [])
        if ctx["tokens_seen"] > 5:
            raise ConnectionAbortedError("planted: the server went away mid-stream")
        return chunk

    with FaultProxy(b.url, rewrite_chunk=cut) as proxy:
        result = gate_run("-n", "2", f"--oracle-url={a.url},{proxy.url}", report="lost")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*= 4 passed, 3 not-run in *"])  # server2's run[...], cache-zero, speculation
    rep = read_report(result.folder)
    assert rep["verdict"] == "partial" and rep["interruption"].startswith("server2: ")
    assert "No request was retried" in rep["interruption"]
    kept = sorted(k for k in rep["records"]["finished"])
    assert kept == ["code-palindrome@boot1-c1", "math-derivative@boot1-c1"]  # server1's share, on disk
    for k in kept:
        meta = rep["records"]["finished"][k]
        assert (result.folder / meta["folder"] / "boot1-c1" / f"{k.split('@')[0]}.npz").is_file()
    assert (result.folder / "servers" / "server2" / "identity.json").is_file()
    assert "**Stopped midway:** server2: " in (result.folder / "identity.md").read_text()
